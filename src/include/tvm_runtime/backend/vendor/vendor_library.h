/*
 * The one way a backend opens a vendor library (libOpenCL.so.1, libvulkan.so.1, libcuda.so.1,
 * libdnnl.so.2, ...): lazily with dlopen, so that backend DSOs never carry a DT_NEEDED on a
 * driver: they load on any machine and, when the library is missing or unusable, can tell the
 * user exactly what was tried.
 *
 *  - OpenVendorApi: a table of entry points, filled by a resolve(SymbolResolver&, Api*) function;
 *    a candidate lacking any required entry point is passed over as unusable.  What almost every
 *    backend needs; OpenVendorApiOnce does it once per process.
 *  - OpenVendorLibrary: the same search with a custom accept(handle, &why), for libraries that
 *    are checked otherwise (a loader whose entry points come through vkGetInstanceProcAddr).
 *
 * Candidates: the value of an environment variable alone if it is set (the user's override, also
 * how tests simulate a machine without the library), else the sonames found in $CONDA_PREFIX/lib,
 * then a fixed list of sonames for the system's search.  A rejected candidate is closed and its
 * reason recorded; the outcome is kept as text, so a machine without the library reports what
 * was tried and how to fix it instead of failing at import.
 */
#ifndef TVM_RUNTIME_BACKEND_VENDOR_VENDOR_LIBRARY_H_
#define TVM_RUNTIME_BACKEND_VENDOR_VENDOR_LIBRARY_H_

#include <dlfcn.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#else
#include <link.h>
#endif

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace tvm_runtime {
namespace backend {

/* The file the dynamic loader opened for `handle` (a search by name may have found it anywhere);
 * `fallback` when the loader does not say. */
inline std::string LoadedLibraryPath(void* handle, const std::string& fallback) {
#if defined(__APPLE__)
  // No dlinfo on macOS: find the loaded image whose handle is this one.
  for (uint32_t i = _dyld_image_count(); i-- > 0;) {
    const char* image = _dyld_get_image_name(i);
    if (image == nullptr) continue;
    void* same = dlopen(image, RTLD_LAZY | RTLD_NOLOAD);
    if (same == nullptr) continue;
    dlclose(same);  // RTLD_NOLOAD took a reference
    if (same == handle) return image;
  }
  return fallback;
#else
  struct link_map* map = nullptr;
  return (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name[0])
             ? map->l_name
             : fallback;
#endif
}

/* Fills a function-pointer table from one library; remembers the required names it lacked. */
class SymbolResolver {
 public:
  explicit SymbolResolver(void* handle) : handle_(handle) {}

  /* The first of `names` the library defines (newer ABI versions first, e.g. "_v2" names). */
  template <typename Fn>
  bool Optional(std::initializer_list<const char*> names, Fn* slot) {
    for (const char* name : names) {
      *slot = reinterpret_cast<Fn>(dlsym(handle_, name));
      if (*slot != nullptr) return true;
    }
    return false;
  }

  template <typename Fn>
  bool Required(std::initializer_list<const char*> names, Fn* slot) {
    if (Optional(names, slot)) return true;
    if (!missing_.empty()) missing_ += ", ";
    missing_ += *names.begin();
    return false;
  }

  /* Comma-separated required names that were not found ("" when complete). */
  const std::string& missing() const { return missing_; }

 private:
  void* handle_;
  std::string missing_;
};

struct VendorLibrary {
  void* handle = nullptr;  // null when no candidate could be used; never dlclose'd otherwise
  std::string path;        // the file the loader actually opened
  std::string tried;       // "; "-separated reason per rejected candidate
};

/* The candidates to try: `$env_var` alone when set and non-empty; else, inside an active conda
 * environment, each of `defaults` that exists in `$CONDA_PREFIX/lib` (conda ships its own OpenCL
 * ICD loader and Vulkan loader, configured for the ICDs installed in that environment, and the
 * dynamic linker would never look there by itself), then `defaults` for the system's search. */
inline std::vector<std::string> VendorLibraryCandidates(
    const char* env_var, std::initializer_list<const char*> defaults) {
  const char* env = env_var != nullptr ? std::getenv(env_var) : nullptr;
  if (env != nullptr && env[0] != '\0') return {env};
  std::vector<std::string> candidates;
  const char* conda = std::getenv("CONDA_PREFIX");
  if (conda != nullptr && conda[0] != '\0') {
    for (const char* name : defaults) {
      std::string path = std::string(conda) + "/lib/" + name;
      if (access(path.c_str(), F_OK) == 0) candidates.push_back(std::move(path));
    }
  }
  candidates.insert(candidates.end(), defaults.begin(), defaults.end());
  return candidates;
}

/* Opens the first acceptable candidate.  `accept(void* handle, std::string* why)` returns true
 * if the library is usable, else false with a reason (the handle is then closed). */
template <typename Accept>
VendorLibrary OpenVendorLibrary(const std::vector<std::string>& candidates, Accept&& accept) {
  VendorLibrary lib;
  for (const std::string& name : candidates) {
    // RTLD_LOCAL: the driver's symbols stay private to this backend.
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string why;
    if (handle == nullptr) {
      const char* err = dlerror();
      why = err != nullptr ? err : name + ": cannot be opened";
    } else if (!accept(handle, &why)) {
      why = name + ": " + why;
      dlclose(handle);
      handle = nullptr;
    }
    if (handle == nullptr) {
      lib.tried += (lib.tried.empty() ? "" : "; ") + why;
      continue;
    }
    lib.path = LoadedLibraryPath(handle, name);
    lib.handle = handle;
    return lib;
  }
  return lib;
}

template <typename Api>
struct VendorApi {
  const Api* api = nullptr;  // null when no candidate could be used
  std::string path;          // the file the entry points come from
  std::string failure;       // why api is null: what was tried and how to fix it
};

/* What to say about a library that cannot serve as `Api`. */
struct VendorApiMessages {
  std::string library;     // "CUDA driver library": what a candidate must be
  std::string unusable;    // appended after "(missing <symbols>); " for an incomplete candidate
  std::string not_found;   // leads the failure: "<not_found> (<tried>). "
  std::string how_to_fix;  // ends the failure
};

/* Opens the first of `candidates` (usually VendorLibraryCandidates(...)) for which
 * `resolve(SymbolResolver&, Api*)` finds every required entry point, filling `*table` (which must
 * outlive the process: backends pass a function-local static). */
template <typename Api, typename Resolve>
VendorApi<Api> OpenVendorApi(const std::vector<std::string>& candidates, Api* table,
                             Resolve&& resolve, const VendorApiMessages& msg) {
  VendorLibrary opened = OpenVendorLibrary(candidates, [&](void* handle, std::string* why) {
    SymbolResolver r(handle);
    resolve(r, table);
    if (r.missing().empty()) return true;
    *why = std::string("not a usable ") + msg.library + " (missing " + r.missing() + "); " +
           msg.unusable;
    return false;
  });
  VendorApi<Api> out;
  if (opened.handle != nullptr) {
    out.api = table;
    out.path = opened.path;
  } else {
    out.failure = msg.not_found + " (" + opened.tried + "). " + msg.how_to_fix;
  }
  return out;
}

/* OpenVendorApi on the first call (thread-safe one-time initialization, so on first device use,
 * never at import), the same result afterwards: the body of a backend's Get<X>Library().
 * `candidates()` and `messages()` (a VendorApiMessages) are only evaluated on that first call;
 * the table lives for the process.  Each call site has its own result (one per lambda type). */
template <typename Api, typename Candidates, typename Resolve, typename Messages>
const VendorApi<Api>& OpenVendorApiOnce(Candidates&& candidates, Resolve&& resolve,
                                        Messages&& messages) {
  static Api table;  // filled once, by the candidate that is accepted
  static const VendorApi<Api> opened = OpenVendorApi(candidates(), &table, resolve, messages());
  return opened;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_VENDOR_VENDOR_LIBRARY_H_
