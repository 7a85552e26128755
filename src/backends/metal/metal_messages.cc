#include "metal_messages.h"

namespace tvm_runtime {
namespace metal {
namespace msg {

namespace {

const ObjcApi& Api() { return *GetObjcLibraries().api; }

SEL Selector(const char* name) { return Api().RegisterSelector(name); }

/* objc_msgSend as `R (id, SEL, Args...)`. */
template <typename R, typename... Args>
R Send(id self, SEL sel, Args... args) {
  using Fn = R (*)(id, SEL, Args...);
  return reinterpret_cast<Fn>(Api().MsgSend)(self, sel, args...);
}

/* A message returning a struct too large for registers: objc_msgSend_stret on x86_64 (the
 * struct's address travels in the first register), plain objc_msgSend on arm64 (in x8). */
template <typename R, typename... Args>
R SendStructReturn(id self, SEL sel, Args... args) {
  using Fn = R (*)(id, SEL, Args...);
#if defined(__x86_64__)
  return reinterpret_cast<Fn>(Api().MsgSendStret)(self, sel, args...);
#else
  return reinterpret_cast<Fn>(Api().MsgSend)(self, sel, args...);
#endif
}

// One selector per message, registered on first use (sel_registerName is thread-safe).
#define TVM_METAL_SEL(name)                   \
  ([]() {                                     \
    static const SEL cached = Selector(name); \
    return cached;                            \
  }())

}  // namespace

id Class(const char* name) { return Api().GetClass(name); }
id Alloc(id cls) { return Send<id>(cls, TVM_METAL_SEL("alloc")); }
id Init(id object) { return Send<id>(object, TVM_METAL_SEL("init")); }
id Retain(id object) { return Send<id>(object, TVM_METAL_SEL("retain")); }
void Release(id object) {
  if (object != nullptr) Send<void>(object, TVM_METAL_SEL("release"));
}

id StringWithUTF8String(const char* text) {
  return Send<id>(Class("NSString"), TVM_METAL_SEL("stringWithUTF8String:"), text);
}

std::string UTF8String(id string) {
  if (string == nullptr) return "";
  const char* text = Send<const char*>(string, TVM_METAL_SEL("UTF8String"));
  return text != nullptr ? text : "";
}

std::string LocalizedDescription(id error, const char* fallback) {
  if (error == nullptr) return fallback;
  std::string text = UTF8String(Send<id>(error, TVM_METAL_SEL("localizedDescription")));
  return text.empty() ? fallback : text;
}

NSUInteger Count(id array) { return Send<NSUInteger>(array, TVM_METAL_SEL("count")); }
id ObjectAtIndex(id array, NSUInteger index) {
  return Send<id>(array, TVM_METAL_SEL("objectAtIndex:"), index);
}

std::string Name(id device) { return UTF8String(Send<id>(device, TVM_METAL_SEL("name"))); }
MTLSize MaxThreadsPerThreadgroup(id device) {
  return SendStructReturn<MTLSize>(device, TVM_METAL_SEL("maxThreadsPerThreadgroup"));
}
NSUInteger MaxThreadgroupMemoryLength(id device) {
  return Send<NSUInteger>(device, TVM_METAL_SEL("maxThreadgroupMemoryLength"));
}
uint64_t RecommendedMaxWorkingSetSize(id device) {
  return Send<uint64_t>(device, TVM_METAL_SEL("recommendedMaxWorkingSetSize"));
}
bool HasUnifiedMemory(id device) {
  return Send<ObjcBool>(device, TVM_METAL_SEL("hasUnifiedMemory")) != 0;
}
bool SupportsFamily(id device, NSInteger family) {
  return Send<ObjcBool>(device, TVM_METAL_SEL("supportsFamily:"), family) != 0;
}
id NewCommandQueue(id device) { return Send<id>(device, TVM_METAL_SEL("newCommandQueue")); }
id NewBufferWithLength(id device, NSUInteger length, NSUInteger options) {
  return Send<id>(device, TVM_METAL_SEL("newBufferWithLength:options:"), length, options);
}
id NewLibraryWithSource(id device, id source, id options, id* error) {
  return Send<id>(device, TVM_METAL_SEL("newLibraryWithSource:options:error:"), source, options,
                  error);
}
id NewLibraryWithData(id device, id data, id* error) {
  return Send<id>(device, TVM_METAL_SEL("newLibraryWithData:error:"), data, error);
}
id NewComputePipelineStateWithFunction(id device, id function, id* error) {
  return Send<id>(device, TVM_METAL_SEL("newComputePipelineStateWithFunction:error:"), function,
                  error);
}

void SetLanguageVersion(id options, NSUInteger version) {
  Send<void>(options, TVM_METAL_SEL("setLanguageVersion:"), version);
}
void SetFastMathEnabled(id options, bool enabled) {
  Send<void>(options, TVM_METAL_SEL("setFastMathEnabled:"), static_cast<ObjcBool>(enabled));
}

void* Contents(id buffer) { return Send<void*>(buffer, TVM_METAL_SEL("contents")); }
NSUInteger Length(id buffer) { return Send<NSUInteger>(buffer, TVM_METAL_SEL("length")); }

id NewFunctionWithName(id library, id name) {
  return Send<id>(library, TVM_METAL_SEL("newFunctionWithName:"), name);
}
NSUInteger MaxTotalThreadsPerThreadgroup(id pipeline) {
  return Send<NSUInteger>(pipeline, TVM_METAL_SEL("maxTotalThreadsPerThreadgroup"));
}

id CommandBuffer(id queue) { return Send<id>(queue, TVM_METAL_SEL("commandBuffer")); }
id ComputeCommandEncoder(id command_buffer) {
  return Send<id>(command_buffer, TVM_METAL_SEL("computeCommandEncoder"));
}
id BlitCommandEncoder(id command_buffer) {
  return Send<id>(command_buffer, TVM_METAL_SEL("blitCommandEncoder"));
}
void Commit(id command_buffer) { Send<void>(command_buffer, TVM_METAL_SEL("commit")); }
void WaitUntilCompleted(id command_buffer) {
  Send<void>(command_buffer, TVM_METAL_SEL("waitUntilCompleted"));
}
NSUInteger Status(id command_buffer) {
  return Send<NSUInteger>(command_buffer, TVM_METAL_SEL("status"));
}
id Error(id command_buffer) { return Send<id>(command_buffer, TVM_METAL_SEL("error")); }

void SetComputePipelineState(id encoder, id pipeline) {
  Send<void>(encoder, TVM_METAL_SEL("setComputePipelineState:"), pipeline);
}
void SetBuffer(id encoder, id buffer, NSUInteger offset, NSUInteger index) {
  Send<void>(encoder, TVM_METAL_SEL("setBuffer:offset:atIndex:"), buffer, offset, index);
}
void SetBytes(id encoder, const void* bytes, NSUInteger length, NSUInteger index) {
  Send<void>(encoder, TVM_METAL_SEL("setBytes:length:atIndex:"), bytes, length, index);
}
void DispatchThreadgroups(id encoder, MTLSize threadgroups, MTLSize threads_per_threadgroup) {
  Send<void>(encoder, TVM_METAL_SEL("dispatchThreadgroups:threadsPerThreadgroup:"), threadgroups,
             threads_per_threadgroup);
}
void CopyFromBuffer(id encoder, id source, NSUInteger source_offset, id destination,
                    NSUInteger destination_offset, NSUInteger size) {
  Send<void>(encoder, TVM_METAL_SEL("copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size:"),
             source, source_offset, destination, destination_offset, size);
}
void EndEncoding(id encoder) { Send<void>(encoder, TVM_METAL_SEL("endEncoding")); }

#undef TVM_METAL_SEL

}  // namespace msg
}  // namespace metal
}  // namespace tvm_runtime
