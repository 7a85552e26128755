/*
 * Runs independent rows on the core's thread pool (TVMBackendParallelLaunch, the pool compiled
 * code uses), so a batch of rows sorts on every core while a single huge row stays serial.
 * Errors thrown by a row are carried back to the caller; nothing is thrown across the C call.
 */
#ifndef TVM_RUNTIME_EXTRA_PARALLEL_ROWS_H_
#define TVM_RUNTIME_EXTRA_PARALLEL_ROWS_H_

#include <tvm/ffi/error.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>

namespace tvm_runtime {
namespace extra {

// Below this many elements in total, waking the pool costs more than it saves.
constexpr int64_t kParallelMinElements = 1 << 15;

/*
 * Calls body(row_begin, row_end) over [0, rows), split into contiguous chunks run in parallel
 * when the work (`rows * row_length` elements) is large enough.  `body` must be thread-safe.
 */
template <typename Body>
void ParallelRows(int64_t rows, int64_t row_length, Body&& body) {
  if (rows <= 1 || rows * row_length < kParallelMinElements) {
    body(int64_t{0}, rows);
    return;
  }
  struct Job {
    Body* body;
    int64_t rows;
    std::mutex mu;
    std::exception_ptr error;
  } job{&body, rows, {}, nullptr};
  auto task = [](int task_id, TVMParallelGroupEnv* penv, void* cdata) -> int {
    Job* j = static_cast<Job*>(cdata);
    int64_t tasks = std::max<int64_t>(penv->num_task, 1);
    int64_t chunk = (j->rows + tasks - 1) / tasks;
    int64_t begin = std::min<int64_t>(j->rows, chunk * task_id);
    int64_t end = std::min<int64_t>(j->rows, begin + chunk);
    try {
      if (begin < end) (*j->body)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(j->mu);
      if (!j->error) j->error = std::current_exception();
    }
    return 0;
  };
  backend::CheckCall(TVMBackendParallelLaunch(task, &job, 0));
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_PARALLEL_ROWS_H_
