/*
 * What every fuzz target shares: loading the (instrumented) tvm-runtime core and backends the way
 * the Python package does, and the rule that decides whether an input was handled well.
 *
 * The targets run as plain libFuzzer executables, without Python: TVMRT_FUZZ_SITE names the
 * site-packages directory holding the instrumented `tvm` and `tvm_ffi` packages
 * (ci/instrumented_build.py --fuzz puts them there).
 */
#ifndef TVM_RUNTIME_FUZZ_FUZZ_RUNTIME_H_
#define TVM_RUNTIME_FUZZ_FUZZ_RUNTIME_H_

#include <dlfcn.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace tvmrt_fuzz {

[[noreturn]] inline void SetupFailed(const std::string& what) {
  std::fprintf(stderr, "fuzz setup failed: %s\n", what.c_str());
  std::exit(2);  // not a finding: the harness cannot start
}

inline std::string SitePackages() {
  const char* site = std::getenv("TVMRT_FUZZ_SITE");
  if (site == nullptr || *site == '\0') SetupFailed("set TVMRT_FUZZ_SITE to the site-packages dir");
  return site;
}

inline void* OpenLibrary(const std::string& path, int mode) {
  void* handle = dlopen(path.c_str(), mode);
  if (handle == nullptr) SetupFailed("dlopen " + path + ": " + dlerror());
  return handle;
}

/* Calls an `int fn(char* err, size_t len)` entry point (core init, backend registration). */
inline void CallEntry(void* lib, const char* symbol, const std::string& owner) {
  using Entry = int (*)(char*, size_t);
  auto fn = reinterpret_cast<Entry>(dlsym(lib, symbol));
  if (fn == nullptr) SetupFailed(owner + " has no " + symbol);
  char err[4096] = {0};
  if (fn(err, sizeof(err)) != 0) SetupFailed(owner + ": " + err);
}

/* Loads the core (RTLD_GLOBAL, as tvm/_core.py does) and registers `backends`. */
inline void LoadRuntime(const std::vector<std::string>& backends) {
  const std::string site = SitePackages();
  void* core = OpenLibrary(site + "/tvm/lib/libtvm_runtime.so", RTLD_NOW | RTLD_GLOBAL);
  CallEntry(core, "TVMRuntimeInitialize", "libtvm_runtime.so");
  for (const std::string& name : backends) {
    std::string path = site + "/tvm/backend/" + name + "/libtvm_runtime_" + name + ".so";
    CallEntry(OpenLibrary(path, RTLD_NOW | RTLD_LOCAL), "TVMRuntimeBackendRegister", path);
  }
}

inline ::tvm::ffi::Function Global(const char* name) {
  auto f = ::tvm::ffi::Function::GetGlobal(name);
  if (!f.has_value()) SetupFailed(std::string("global function ") + name + " is not registered");
  return *f;
}

/* Error kinds that tell a user what is wrong with their input.  Anything else (an InternalError
 * from a failed check, an empty message, the bare what() of a C++ library exception that
 * escaped) is a finding, like a crash.  Messages may quote the input, so only their start is
 * compared with the library's own texts. */
inline bool IsClearError(const ::tvm::ffi::Error& err) {
  static const char* kinds[] = {"ValueError", "TypeError",   "IndexError",    "RuntimeError",
                                "KeyError",   "MemoryError", "AttributeError"};
  static const char* library_messages[] = {"std::", "vector::", "basic_string", "map::at",
                                           "stoi",  "stol",     "stoul"};
  std::string kind = err.kind();
  std::string message = err.message();
  if (message.empty()) return false;
  for (const char* text : library_messages) {
    if (message.rfind(text, 0) == 0) return false;
  }
  for (const char* k : kinds) {
    if (kind == k) return true;
  }
  return false;
}

/* Runs `body`; a clear error is a normal outcome for a malformed input, anything else aborts
 * so libFuzzer records the input. */
template <typename Body>
void ExpectHandled(Body body) {
  try {
    body();
  } catch (const ::tvm::ffi::Error& err) {
    if (!IsClearError(err)) {
      std::fprintf(stderr, "unclear error for a malformed input: %s: %s\n", err.kind().c_str(),
                   err.message().c_str());
      std::abort();
    }
  }
}

}  // namespace tvmrt_fuzz

#endif  // TVM_RUNTIME_FUZZ_FUZZ_RUNTIME_H_
