/*
 * tvm.runtime.threading.set_current_thread_affinity(cpu_ids: Shape): pins the calling thread to
 * the listed CPUs (Disco workers call it).  In apache-tvm 0.27 it lives in libtvm_runtime; here
 * it comes with the extra wheel, next to its only user.
 */
#include <pthread.h>
#include <sched.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/function.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>

#include <cerrno>
#include <cstring>

#include "error_text.h"
#include "extra_register.h"

namespace tvm_runtime {
namespace extra {
namespace {

constexpr const char* kSetAffinity = "tvm.runtime.threading.set_current_thread_affinity";
#ifdef __linux__
constexpr int64_t kMaxCpuId = CPU_SETSIZE;
#else
constexpr int64_t kMaxCpuId = 1024;  // Linux's CPU_SETSIZE, so the same ids are refused everywhere
#endif

void SetCurrentThreadAffinity(::tvm::ffi::Shape cpu_ids) {
  for (int64_t id : cpu_ids) {
    if (id < 0 || id >= kMaxCpuId) {
      backend::ThrowError("ValueError", ErrorText(kSetAffinity, ": CPU id ", id, " is outside [0, ",
                                                  kMaxCpuId, ")"));
    }
  }
  if (cpu_ids.size() == 0) {
    backend::ThrowError("ValueError", ErrorText(kSetAffinity, ": give at least one CPU id"));
  }
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int64_t id : cpu_ids) CPU_SET(static_cast<int>(id), &set);
  int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    backend::ThrowError(
        "RuntimeError",
        ErrorText(kSetAffinity, ": pthread_setaffinity_np failed: ", std::strerror(rc),
                  " (are these CPUs online and allowed for this process?)"));
  }
#endif  // macOS has no thread affinity: the arguments are checked, the scheduler decides
}

}  // namespace

void RegisterThreadingFunctions() {
  backend::SetGlobalFunction(kSetAffinity, SetCurrentThreadAffinity);
}

}  // namespace extra
}  // namespace tvm_runtime
