#include "objc_library.h"

#include <tvm_runtime/backend/vendor/vendor_library.h>

#include <string>

namespace tvm_runtime {
namespace metal {

namespace {

using backend::SymbolResolver;

constexpr const char* kSystemObjc = "/usr/lib/libobjc.A.dylib";
constexpr const char* kSystemFoundation =
    "/System/Library/Frameworks/Foundation.framework/Foundation";
constexpr const char* kSystemCoreGraphics =
    "/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics";
constexpr const char* kSystemMetal = "/System/Library/Frameworks/Metal.framework/Metal";

constexpr const char* kHowToFix =
    "tvm-runtime-metal runs on macOS 11 or newer, where libobjc and Metal.framework are part of "
    "the system. On another OS use a different backend (tvm-runtime-vulkan, -opencl, -webgpu); "
    "the environment variables TVM_METAL_OBJC_LIBRARY, TVM_METAL_FRAMEWORK, TVM_METAL_FOUNDATION "
    "and TVM_METAL_COREGRAPHICS replace the system paths (for testing).";

/* Opens one library (the env override or the system path); `resolve(handle, &why)` checks it. */
template <typename Resolve>
backend::VendorLibrary Open(const char* env_var, const char* system_path, Resolve&& resolve) {
  return backend::OpenVendorLibrary(backend::VendorLibraryCandidates(env_var, {system_path}),
                                    resolve);
}

bool ResolveObjc(void* handle, ObjcApi* api, std::string* why) {
  SymbolResolver r(handle);
  r.Required({"objc_getClass"}, &api->GetClass);
  r.Required({"sel_registerName"}, &api->RegisterSelector);
  r.Required({"objc_msgSend"}, &api->MsgSend);
#if defined(__x86_64__)
  r.Required({"objc_msgSend_stret"}, &api->MsgSendStret);
#endif
  r.Required({"objc_autoreleasePoolPush"}, &api->AutoreleasePoolPush);
  r.Required({"objc_autoreleasePoolPop"}, &api->AutoreleasePoolPop);
  if (r.missing().empty()) return true;
  *why = "not an Objective-C runtime (missing " + r.missing() + ")";
  return false;
}

bool ResolveMetal(void* handle, ObjcApi* api, std::string* why) {
  SymbolResolver r(handle);
  r.Required({"MTLCreateSystemDefaultDevice"}, &api->CreateSystemDefaultDevice);
  r.Optional({"MTLCopyAllDevices"}, &api->CopyAllDevices);
  // libdispatch is part of libSystem, which Metal.framework links: dlsym finds it from here.
  r.Required({"dispatch_data_create"}, &api->DispatchDataCreate);
  r.Optional({"dispatch_release"}, &api->DispatchRelease);
  if (r.missing().empty()) return true;
  *why = "not the Metal framework (missing " + r.missing() + ")";
  return false;
}

std::string Failure(const std::string& what, const backend::VendorLibrary& lib) {
  return "cannot open " + what + " (" + lib.tried + "). " + kHowToFix;
}

ObjcLibraries Load() {
  static ObjcApi api;  // filled once, here
  ObjcLibraries out;
  backend::VendorLibrary objc =
      Open(kObjcLibraryEnvVar, kSystemObjc,
           [](void* h, std::string* why) { return ResolveObjc(h, &api, why); });
  if (objc.handle == nullptr) {
    out.failure = Failure("the Objective-C runtime", objc);
    return out;
  }
  // NSString lives in Foundation; MTLCreateSystemDefaultDevice returns nil unless CoreGraphics
  // is loaded.  Both are only opened (kept for the life of the process), nothing is resolved.
  auto just_open = [](void*, std::string*) { return true; };
  backend::VendorLibrary foundation = Open(kFoundationEnvVar, kSystemFoundation, just_open);
  if (foundation.handle == nullptr) {
    out.failure = Failure("Foundation.framework", foundation);
    return out;
  }
  backend::VendorLibrary graphics = Open(kCoreGraphicsEnvVar, kSystemCoreGraphics, just_open);
  if (graphics.handle == nullptr) {
    out.failure = Failure("CoreGraphics.framework", graphics);
    return out;
  }
  backend::VendorLibrary metal =
      Open(kMetalFrameworkEnvVar, kSystemMetal,
           [](void* h, std::string* why) { return ResolveMetal(h, &api, why); });
  if (metal.handle == nullptr) {
    out.failure = Failure("Metal.framework", metal);
    return out;
  }
  out.api = &api;
  out.objc_path = objc.path;
  out.metal_path = metal.path;
  return out;
}

}  // namespace

const ObjcLibraries& GetObjcLibraries() {
  static const ObjcLibraries libs = Load();  // thread-safe one-time initialization
  return libs;
}

}  // namespace metal
}  // namespace tvm_runtime
