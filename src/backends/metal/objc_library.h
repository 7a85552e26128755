/*
 * libobjc and the frameworks Metal needs (Foundation, CoreGraphics, Metal), opened with dlopen on
 * first device use (never at import or registration), so the backend loads on any OS and says
 * what is missing instead.
 */
#ifndef TVM_RUNTIME_BACKENDS_METAL_OBJC_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_METAL_OBJC_LIBRARY_H_

#include <string>

#include "objc_api.h"

namespace tvm_runtime {
namespace metal {

/* The outcome of opening libobjc and the frameworks: api is null when anything required is
 * missing, and `failure` says what was tried and how to fix it. */
struct ObjcLibraries {
  const ObjcApi* api = nullptr;
  std::string objc_path;
  std::string metal_path;
  std::string failure;
};

/* Environment variables naming the files to open instead of the system's (the tests' fakes). */
constexpr const char* kObjcLibraryEnvVar = "TVM_METAL_OBJC_LIBRARY";
constexpr const char* kMetalFrameworkEnvVar = "TVM_METAL_FRAMEWORK";
constexpr const char* kFoundationEnvVar = "TVM_METAL_FOUNDATION";
constexpr const char* kCoreGraphicsEnvVar = "TVM_METAL_COREGRAPHICS";

/* Opens everything on the first call (thread-safe); the same result afterwards. */
const ObjcLibraries& GetObjcLibraries();

}  // namespace metal
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_METAL_OBJC_LIBRARY_H_
