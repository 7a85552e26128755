/*
 * Opening a vendor library (libcuda.so.1, libnvrtc.so.13, ...) with dlopen on first use, and
 * resolving its entry points into a table of function pointers.
 *
 * Backends never link vendor libraries: a missing or incompatible one must become a readable
 * "what was tried, what is missing, how to fix it" message, so every failure here is collected
 * as text instead of thrown.
 */
#ifndef TVM_RUNTIME_BACKEND_DYNAMIC_LIBRARY_H_
#define TVM_RUNTIME_BACKEND_DYNAMIC_LIBRARY_H_

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace tvm_runtime {
namespace backend {

/* `$env_var` alone when it is set and non-empty (an explicit choice must not silently fall back
 * to another library), otherwise `defaults`. */
inline std::vector<std::string> LibraryCandidates(const char* env_var,
                                                  std::vector<std::string> defaults) {
  const char* value = env_var != nullptr ? std::getenv(env_var) : nullptr;
  if (value != nullptr && value[0] != '\0') return {std::string(value)};
  return defaults;
}

struct OpenedLibrary {
  void* handle = nullptr;  // never closed: function pointers into it live for the process
  std::string name;        // the candidate that opened
  std::string tried;       // "; "-separated dlerror() text of every candidate that failed
};

/* dlopen()s the candidates in order (RTLD_NOW | RTLD_LOCAL, so a vendor library's symbols stay
 * private to the backend) and returns the first that opens. */
inline OpenedLibrary OpenFirstLibrary(const std::vector<std::string>& candidates) {
  OpenedLibrary out;
  for (const std::string& name : candidates) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      out.handle = handle;
      out.name = name;
      return out;
    }
    const char* why = dlerror();
    if (!out.tried.empty()) out.tried += "; ";
    out.tried += why != nullptr ? std::string(why) : name + ": cannot be opened";
  }
  return out;
}

/* The file that really defines `symbol` (a soname like libcuda.so.1 resolves to a versioned
 * file somewhere on the loader path); `fallback` if the loader cannot tell. */
inline std::string LibraryFileOf(const void* symbol, const std::string& fallback) {
  Dl_info info;
  if (symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return fallback;
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

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_DYNAMIC_LIBRARY_H_
