/*
 * The C entry points of the Objective-C runtime and of the frameworks Metal needs, as a table
 * that objc_library.h fills with dlopen/dlsym at first device use.  No SDK header is included:
 * the few types used are declared here, so the backend compiles as plain C++17 on Linux (tested
 * against a fake runtime) and for macOS with zig.
 */
#ifndef TVM_RUNTIME_BACKENDS_METAL_OBJC_API_H_
#define TVM_RUNTIME_BACKENDS_METAL_OBJC_API_H_

#include <cstddef>
#include <cstdint>

namespace tvm_runtime {
namespace metal {

/* Opaque Objective-C handles: every object is an `id`, every selector a `SEL`. */
using id = void*;
using SEL = void*;
using NSUInteger = unsigned long;  // NOLINT(runtime/int): the ABI type of Apple's 64-bit targets
using ObjcBool = signed char;      // BOOL's size and register class on both Apple ABIs

/* MTLSize, passed and returned by value. */
struct MTLSize {
  NSUInteger width;
  NSUInteger height;
  NSUInteger depth;
};

struct ObjcApi {
  id (*GetClass)(const char* name) = nullptr;
  SEL (*RegisterSelector)(const char* name) = nullptr;
  // Never called directly: metal_messages.cc casts it to the exact prototype of each message.
  void (*MsgSend)() = nullptr;
  // x86_64 only: messages returning a struct in memory (MTLSize) go through this entry point.
  void (*MsgSendStret)() = nullptr;
  void* (*AutoreleasePoolPush)() = nullptr;
  void (*AutoreleasePoolPop)(void* pool) = nullptr;
  id (*CreateSystemDefaultDevice)() = nullptr;
  id (*CopyAllDevices)() = nullptr;  // optional (macOS only, absent on iOS)
  id (*DispatchDataCreate)(const void* buffer, size_t size, void* queue,
                           void* destructor) = nullptr;
  void (*DispatchRelease)(id object) = nullptr;  // optional: else the data object is leaked
};

/* Drains the autorelease pool pushed at construction: objects Metal returns autoreleased
 * (command buffers, encoders, strings, errors) are freed when the scope ends. */
class AutoreleasePool {
 public:
  explicit AutoreleasePool(const ObjcApi& api) : api_(api), pool_(api.AutoreleasePoolPush()) {}
  ~AutoreleasePool() { api_.AutoreleasePoolPop(pool_); }
  AutoreleasePool(const AutoreleasePool&) = delete;
  AutoreleasePool& operator=(const AutoreleasePool&) = delete;

 private:
  const ObjcApi& api_;
  void* pool_;
};

}  // namespace metal
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_METAL_OBJC_API_H_
