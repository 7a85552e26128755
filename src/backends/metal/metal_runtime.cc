#include "metal_runtime.h"

#include <memory>
#include <vector>

#include "metal_messages.h"

namespace tvm_runtime {
namespace metal {

namespace {

// MTLGPUFamily values that imply the MSL versions below.
constexpr msg::NSInteger kFamilyMetal3 = 5001;
constexpr msg::NSInteger kFamilyMetal4 = 5002;
// MTLLanguageVersion values: major << 16 | minor.
constexpr NSUInteger kLanguage2_3 = (2u << 16) | 3u;
constexpr NSUInteger kLanguage3_0 = 3u << 16;
constexpr NSUInteger kLanguage4_0 = 4u << 16;

/* The newest MSL version the device's GPU family guarantees (apache-tvm compiles with 2.3, or
 * 4.0 on Metal 4 devices; a Metal 3 device runs macOS 13 or newer, which compiles MSL 3.0). */
NSUInteger NewestLanguageVersion(id device) {
  if (msg::SupportsFamily(device, kFamilyMetal4)) return kLanguage4_0;
  if (msg::SupportsFamily(device, kFamilyMetal3)) return kLanguage3_0;
  return kLanguage2_3;
}

std::unique_ptr<MetalDevice> Describe(id device) {
  auto d = std::make_unique<MetalDevice>();
  d->device = device;
  d->name = msg::Name(device);
  d->max_threads_per_threadgroup = msg::MaxThreadsPerThreadgroup(device);
  d->max_threadgroup_memory = msg::MaxThreadgroupMemoryLength(device);
  d->working_set_size = msg::RecommendedMaxWorkingSetSize(device);
  d->unified_memory = msg::HasUnifiedMemory(device);
  d->language_version = NewestLanguageVersion(device);
  return d;
}

/* Every Metal device, each retained once (+1). */
std::vector<id> FindDevices(const ObjcApi& api) {
  std::vector<id> found;
  if (api.CopyAllDevices != nullptr) {
    id all = api.CopyAllDevices();  // an NSArray we own
    if (all != nullptr) {
      for (NSUInteger i = 0, n = msg::Count(all); i < n; ++i) {
        found.push_back(msg::Retain(msg::ObjectAtIndex(all, i)));
      }
      msg::Release(all);
    }
  }
  if (found.empty()) {
    id device = api.CreateSystemDefaultDevice();  // owned
    if (device != nullptr) found.push_back(device);
  }
  return found;
}

}  // namespace

std::string MetalRuntime::Discover(DeviceList* out) {
  const ObjcLibraries& libs = GetObjcLibraries();
  if (libs.api == nullptr) return libs.failure;
  api_ = libs.api;
  AutoreleasePool pool(*api_);
  std::vector<id> devices = FindDevices(*api_);
  if (devices.empty()) {
    return "Metal.framework (" + libs.metal_path +
           ") reports no Metal device: this Mac has no Metal-capable GPU, or this process may "
           "not use it (some virtual machines and sandboxes hide the GPU). Run on a Mac with a "
           "Metal GPU (every Apple silicon Mac has one).";
  }
  std::string notes;
  for (id device : devices) {
    std::unique_ptr<MetalDevice> d = Describe(device);
    id queue = msg::NewCommandQueue(device);
    if (queue == nullptr) {
      notes += "\n  device '" + d->name + "': newCommandQueue returned nil";
      msg::Release(device);
      continue;
    }
    d->default_stream.store(new MetalStream(*api_, queue));
    out->push_back(std::move(d));
  }
  if (out->empty()) return "no Metal device could be used:" + notes;
  return "";
}

void MetalRuntime::ResetDefaultStreams() {
  std::lock_guard<std::mutex> lock(reset_mu_);
  for (int i = 0, n = NumDevices(); i < n; ++i) {
    MetalDevice& d = Device(i);
    d.default_stream.load()->Synchronize();
    id queue = msg::NewCommandQueue(d.device);
    if (queue == nullptr) continue;  // keep the old stream rather than none
    // The old stream is leaked: host code on other threads may still hold it.
    d.default_stream.store(new MetalStream(*api_, queue));
  }
}

}  // namespace metal
}  // namespace tvm_runtime
