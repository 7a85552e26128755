/*
 * How a rank of the cpu collectives waits for its peers: spin briefly (a peer on another core
 * answers within microseconds), then yield (on a machine with fewer cores than ranks the peer
 * needs our core), then sleep on a futex with a short timeout, checking between sleeps that
 * nobody aborted and every peer is still alive.  Futexes are the shared (not private) kind, so
 * the same code serves threads and processes.
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_WAIT_POLICY_H_
#define TVM_RUNTIME_EXTRA_DISCO_WAIT_POLICY_H_

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>

namespace tvm_runtime {
namespace extra {
namespace disco {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/* Sleeps while *word == expected, at most `timeout_ns`. */
inline void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, long timeout_ns) {
  struct timespec ts;
  ts.tv_sec = timeout_ns / 1000000000L;
  ts.tv_nsec = timeout_ns % 1000000000L;
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

inline void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

/* Spin and yield budgets: generous when every rank has a core of its own, small otherwise. */
struct WaitPolicy {
  int spins = 0;
  int yields = 0;
  long sleep_ns = 5 * 1000 * 1000;  // between health checks while asleep

  static WaitPolicy For(int ranks_on_this_machine) {
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
    WaitPolicy p;
    if (cpus > ranks_on_this_machine) {
      p.spins = 20000;
      p.yields = 2000;
    } else {
      p.spins = 64;
      p.yields = 4000;
    }
    if (const char* env = std::getenv("TVM_DISCO_CPU_SPINS")) p.spins = std::atoi(env);
    return p;
  }
};

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_WAIT_POLICY_H_
