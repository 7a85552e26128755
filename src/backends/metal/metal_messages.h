/*
 * Every Objective-C message the Metal backend sends, one typed function per selector.
 *
 * A message is a call of objc_msgSend cast to the exact C prototype of the method (mandatory on
 * arm64, where variadic and fixed arguments are passed differently); keeping all of them here
 * means each selector and its prototype are written down once.  Valid only after
 * GetObjcLibraries() succeeded.  Methods whose names start with alloc/new/copy return an owned
 * (+1) object that must be Release()d; the others return autoreleased objects, which live until
 * the enclosing AutoreleasePool ends.
 */
#ifndef TVM_RUNTIME_BACKENDS_METAL_METAL_MESSAGES_H_
#define TVM_RUNTIME_BACKENDS_METAL_METAL_MESSAGES_H_

#include <cstdint>
#include <string>

#include "objc_library.h"

namespace tvm_runtime {
namespace metal {
namespace msg {

using NSInteger = long;  // NOLINT(runtime/int)

/* Objective-C runtime and Foundation. */
id Class(const char* name);  // objc_getClass; null when the class does not exist
id Alloc(id cls);
id Init(id object);
id Retain(id object);
void Release(id object);  // no-op for null
id StringWithUTF8String(const char* text);
std::string UTF8String(id string);  // "" for null
/* [error localizedDescription], or `fallback` when error is null. */
std::string LocalizedDescription(id error, const char* fallback);
NSUInteger Count(id array);
id ObjectAtIndex(id array, NSUInteger index);

/* MTLDevice. */
std::string Name(id device);
MTLSize MaxThreadsPerThreadgroup(id device);
NSUInteger MaxThreadgroupMemoryLength(id device);
uint64_t RecommendedMaxWorkingSetSize(id device);
bool HasUnifiedMemory(id device);
bool SupportsFamily(id device, NSInteger family);
id NewCommandQueue(id device);
id NewBufferWithLength(id device, NSUInteger length, NSUInteger options);
id NewLibraryWithSource(id device, id source, id options, id* error);
id NewLibraryWithData(id device, id data, id* error);
id NewComputePipelineStateWithFunction(id device, id function, id* error);

/* MTLCompileOptions. */
void SetLanguageVersion(id options, NSUInteger version);
void SetFastMathEnabled(id options, bool enabled);

/* MTLBuffer. */
void* Contents(id buffer);
NSUInteger Length(id buffer);

/* MTLLibrary and MTLComputePipelineState. */
id NewFunctionWithName(id library, id name);
NSUInteger MaxTotalThreadsPerThreadgroup(id pipeline);

/* MTLCommandQueue and MTLCommandBuffer. */
id CommandBuffer(id queue);
id ComputeCommandEncoder(id command_buffer);
id BlitCommandEncoder(id command_buffer);
void Commit(id command_buffer);
void WaitUntilCompleted(id command_buffer);
NSUInteger Status(id command_buffer);
id Error(id command_buffer);

/* MTLComputeCommandEncoder and MTLBlitCommandEncoder. */
void SetComputePipelineState(id encoder, id pipeline);
void SetBuffer(id encoder, id buffer, NSUInteger offset, NSUInteger index);
void SetBytes(id encoder, const void* bytes, NSUInteger length, NSUInteger index);
void DispatchThreadgroups(id encoder, MTLSize threadgroups, MTLSize threads_per_threadgroup);
void CopyFromBuffer(id encoder, id source, NSUInteger source_offset, id destination,
                    NSUInteger destination_offset, NSUInteger size);
void EndEncoding(id encoder);

}  // namespace msg
}  // namespace metal
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_METAL_METAL_MESSAGES_H_
