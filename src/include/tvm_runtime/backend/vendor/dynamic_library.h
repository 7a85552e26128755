/*
 * Resolving a dlopen()ed vendor library's entry points into a table of function pointers (the
 * library itself is opened with vendor_library.h).
 *
 * Backends never link vendor libraries: a missing or incompatible one must become a readable
 * "what is missing, how to fix it" message, so missing symbols are collected as text instead of
 * thrown.
 */
#ifndef TVM_RUNTIME_BACKEND_VENDOR_DYNAMIC_LIBRARY_H_
#define TVM_RUNTIME_BACKEND_VENDOR_DYNAMIC_LIBRARY_H_

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace tvm_runtime {
namespace backend {

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

#endif  // TVM_RUNTIME_BACKEND_VENDOR_DYNAMIC_LIBRARY_H_
