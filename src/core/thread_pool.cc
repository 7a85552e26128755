/*
 * Thread pool behind TVMBackendParallelLaunch / TVMBackendParallelBarrier.
 *
 * Semantics TVM-compiled code relies on:
 *  - all tasks of one launch run concurrently (a kernel may place a barrier between phases, so a
 *    sequential fallback must report num_task = 1 to the lambda, never fake concurrency);
 *  - num_task == 0 means "as many as the pool has";
 *  - a failing task makes the launch return -1 with that task's error raised in the caller.
 *
 * Design: persistent workers spin briefly on a generation counter, then sleep on a condition
 * variable; the calling thread runs task 0 itself.  Every worker acknowledges every launch, so a
 * new launch can never be published while a worker still reads the previous one.
 */
#include <pthread.h>
#include <sched.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm_runtime/c_api.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "core_init.h"

namespace tvm_runtime {
namespace core {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spin iterations before a worker sleeps: long enough to catch back-to-back launches of a
// model's kernels, short enough not to starve other processes on a small machine.
constexpr int kSpinCount = 1 << 15;

struct Barrier {
  std::atomic<int> arrived{0};
  std::atomic<int> phase{0};
  int num_task = 1;
};

int DefaultConcurrency() {
  for (const char* var : {"TVM_NUM_THREADS", "OMP_NUM_THREADS"}) {
    if (const char* v = std::getenv(var)) {
      int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
#ifdef __linux__
  // The CPUs this process may run on (a container's or taskset's limit), not all of the host's.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
#endif  // macOS has no affinity masks: every core is available
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

class ThreadPool {
 public:
  explicit ThreadPool(int concurrency) : concurrency_(concurrency < 1 ? 1 : concurrency) {
    errors_.assign(concurrency_, nullptr);
    for (int w = 1; w < concurrency_; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
  }

  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      generation_.fetch_add(1);
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  int concurrency() const { return concurrency_; }

  int Launch(FTVMParallelLambda f, void* cdata, int num_task) {
    if (num_task <= 0 || num_task > concurrency_) num_task = concurrency_;
    // Nested launches, concurrent launches from other threads, and single-task launches run
    // inline as one task.
    std::unique_lock<std::mutex> launch_lock(launch_mu_, std::try_to_lock);
    if (num_task == 1 || tls_in_parallel_ || !launch_lock.owns_lock()) {
      return RunInline(f, cdata);
    }
    barrier_.arrived.store(0, std::memory_order_relaxed);
    barrier_.num_task = num_task;
    job_f_ = f;
    job_cdata_ = cdata;
    job_num_task_ = num_task;
    pending_.store(concurrency_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      {
        std::lock_guard<std::mutex> lock(mu_);
      }
      cv_.notify_all();
    }
    RunTask(0);
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < kSpinCount) {
        CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
    return CollectErrors();
  }

 private:
  static int RunInline(FTVMParallelLambda f, void* cdata) {
    Barrier single;
    TVMParallelGroupEnv env{&single, 1};
    bool outer = tls_in_parallel_;
    tls_in_parallel_ = true;
    int rc = f(0, &env, cdata);
    tls_in_parallel_ = outer;
    return rc == 0 ? 0 : -1;
  }

  void RunTask(int task) {
    TVMParallelGroupEnv env{&barrier_, job_num_task_};
    tls_in_parallel_ = true;
    if (job_f_(task, &env, job_cdata_) != 0) {
      // The error lives in this thread's tvm-ffi slot; move it so the launcher can re-raise it.
      TVMFFIObjectHandle err = nullptr;
      TVMFFIErrorMoveFromRaised(&err);
      if (err == nullptr) {
        TVMFFIErrorSetRaisedFromCStr("RuntimeError", "parallel task failed without a message");
        TVMFFIErrorMoveFromRaised(&err);
      }
      errors_[task] = err;
    }
    tls_in_parallel_ = false;
  }

  int CollectErrors() {
    int rc = 0;
    for (auto& err : errors_) {
      if (err == nullptr) continue;
      if (rc == 0) TVMFFIErrorSetRaised(err);  // takes its own reference
      TVMFFIObjectDecRef(err);
      err = nullptr;
      rc = -1;
    }
    return rc;
  }

  void WorkerLoop(int worker) {
    uint64_t seen = 0;  // the pool starts at generation 0; a launch may precede this line
    while (true) {
      int spins = 0;
      while (generation_.load(std::memory_order_acquire) == seen && spins < kSpinCount) {
        CpuRelax();
        ++spins;
      }
      if (generation_.load(std::memory_order_acquire) == seen) {
        std::unique_lock<std::mutex> lock(mu_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        cv_.wait(lock, [&] { return generation_.load(std::memory_order_seq_cst) != seen; });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = generation_.load(std::memory_order_acquire);
      if (stop_) return;
      if (worker < job_num_task_) RunTask(worker);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  const int concurrency_;
  std::vector<std::thread> workers_;
  std::mutex launch_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<int> pending_{0};
  bool stop_ = false;
  // The current job; written by the launcher before the generation bump (release) and read by
  // workers after observing it (acquire).
  FTVMParallelLambda job_f_ = nullptr;
  void* job_cdata_ = nullptr;
  int job_num_task_ = 1;
  Barrier barrier_;
  std::vector<TVMFFIObjectHandle> errors_;
  static thread_local bool tls_in_parallel_;
};

thread_local bool ThreadPool::tls_in_parallel_ = false;

std::mutex g_pool_mu;
std::atomic<ThreadPool*> g_pool{nullptr};
int g_requested_threads = 0;  // 0 = default

ThreadPool* GetPool() {
  ThreadPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool != nullptr) return pool;
  std::lock_guard<std::mutex> lock(g_pool_mu);
  pool = g_pool.load(std::memory_order_relaxed);
  if (pool == nullptr) {
    pool = new ThreadPool(g_requested_threads > 0 ? g_requested_threads : DefaultConcurrency());
    g_pool.store(pool, std::memory_order_release);
  }
  return pool;
}

// Must not race with a launch on another thread (same contract as apache-tvm).
void Reconfigure(int nthreads) {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  g_requested_threads = nthreads;
  delete g_pool.exchange(nullptr);  // joins the workers
}

// A forked child has none of the parent's worker threads: forget the pool (leaking it, as its
// threads are gone) so the child builds a fresh one on its first launch.
void ForgetPoolInChild() { g_pool.store(nullptr); }

}  // namespace

void RegisterThreadPoolGlobals() {
  static bool atfork_installed = false;
  if (!atfork_installed) {
    pthread_atfork(nullptr, nullptr, ForgetPoolInChild);
    atfork_installed = true;
  }
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("runtime.NumThreads", []() -> int { return GetPool()->concurrency(); })
      .def_packed("runtime.config_threadpool",
                  [](::tvm::ffi::PackedArgs args, ::tvm::ffi::Any* rv) {
                    // (affinity_mode, nthreads[, cpus]): affinity is left to the OS.
                    int nthreads = args.size() > 1 ? args[1].cast<int>() : 0;
                    Reconfigure(nthreads);
                  });
}

}  // namespace core
}  // namespace tvm_runtime

extern "C" {

TVM_RUNTIME_DLL int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata,
                                             int num_task) {
  return tvm_runtime::core::GetPool()->Launch(flambda, cdata, num_task);
}

TVM_RUNTIME_DLL int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  auto* barrier = static_cast<tvm_runtime::core::Barrier*>(penv->sync_handle);
  if (barrier == nullptr || penv->num_task <= 1) return 0;
  int phase = barrier->phase.load(std::memory_order_acquire);
  if (barrier->arrived.fetch_add(1, std::memory_order_acq_rel) == penv->num_task - 1) {
    barrier->arrived.store(0, std::memory_order_relaxed);
    barrier->phase.fetch_add(1, std::memory_order_release);
  } else {
    int spins = 0;
    while (barrier->phase.load(std::memory_order_acquire) == phase) {
      if (++spins < (1 << 12)) {
        tvm_runtime::core::CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
  }
  return 0;
}

}  // extern "C"
