/* The host's physical memory, total and free, for the CPU device's memory attributes. */
#ifndef TVM_RUNTIME_CORE_HOST_MEMORY_H_
#define TVM_RUNTIME_CORE_HOST_MEMORY_H_

#include <cstdint>

#if defined(__APPLE__)
#include <mach/mach.h>
#include <sys/sysctl.h>
#include <sys/types.h>
#else
#include <sys/sysinfo.h>
#endif

namespace tvm_runtime {
namespace core {

/* Bytes of physical memory; -1 when the system does not say. */
inline int64_t TotalHostMemory() {
#if defined(__APPLE__)
  uint64_t bytes = 0;
  size_t len = sizeof(bytes);
  return sysctlbyname("hw.memsize", &bytes, &len, nullptr, 0) == 0 ? static_cast<int64_t>(bytes)
                                                                   : -1;
#else
  struct sysinfo info;
  return sysinfo(&info) == 0 ? static_cast<int64_t>(info.totalram) * info.mem_unit : -1;
#endif
}

/* Bytes of memory not in use; -1 when the system does not say.  On macOS, free plus inactive
 * pages: the kernel keeps free pages near zero and reclaims inactive ones on demand, so "free"
 * alone would read as an almost full machine. */
inline int64_t FreeHostMemory() {
#if defined(__APPLE__)
  vm_statistics64_data_t stats;
  mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
  if (host_statistics64(mach_host_self(), HOST_VM_INFO64, reinterpret_cast<host_info64_t>(&stats),
                        &count) != KERN_SUCCESS) {
    return -1;
  }
  vm_size_t page = 0;
  if (host_page_size(mach_host_self(), &page) != KERN_SUCCESS) return -1;
  return static_cast<int64_t>(stats.free_count + stats.inactive_count) * static_cast<int64_t>(page);
#else
  struct sysinfo info;
  return sysinfo(&info) == 0 ? static_cast<int64_t>(info.freeram) * info.mem_unit : -1;
#endif
}

}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_HOST_MEMORY_H_
