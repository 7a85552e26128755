/*
 * runtime.RPCTimeEvaluator: the function behind Module.time_evaluator, with apache-tvm's
 * semantics: one warm-up call, then `repeat` rounds of `number` calls; a round is re-run with a
 * growing `number` until it lasts at least `min_repeat_ms`.  The device is synchronised around
 * every round, so asynchronous backends are timed to completion.  A backend that registers
 * `runtime.timer.<device name>` (c_api.h, 4b) times each round on the device instead (CUDA:
 * events), so the host's launch overhead between calls is not counted.  `f_preproc` names a
 * global function called with the arguments before every round (apache-tvm's
 * cache_flush_cpu_non_first_arg, cache_flush.cc, evicts the inputs from the CPU caches).  Returns
 * the per-call seconds of each round as `repeat` native doubles in a Bytes.
 */
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "cache_flush.h"
#include "core_init.h"
#include "device_registry.h"

namespace tvm_runtime {
namespace core {
namespace {

using ::tvm::ffi::Function;
using ::tvm::ffi::Module;
using ::tvm::ffi::Optional;
using ::tvm::ffi::String;

struct EvalConfig {
  DLDevice device;
  int number, repeat, min_repeat_ms, limit_zero_time_iterations;
  int cooldown_interval_ms, repeats_to_cooldown;
  int64_t cache_flush_bytes;
  Optional<Function> preproc;  // f_preproc, called with the arguments before every round
};

// Evicts the CPU caches between rounds so every round sees cold inputs.
void FlushCache(std::vector<char>* buf) {
  volatile char* p = buf->data();
  for (size_t i = 0; i < buf->size(); i += 64) p[i] = static_cast<char>(p[i] + 1);
}

/* The device's own round timer, if its backend registered one: a function of "start", "stop"
 * and "elapsed_ns" (the nanoseconds between the two, after waiting for the stop). */
Optional<Function> DeviceTimer(const DLDevice& device) {
  auto factory = Function::GetGlobal("runtime.timer." + DeviceTypeName(device.device_type));
  if (!factory.has_value()) return std::nullopt;
  return (*factory)(device).cast<Function>();
}

::tvm::ffi::Bytes Evaluate(const Function& f, const EvalConfig& cfg, ::tvm::ffi::PackedArgs args) {
  const TVMRuntimeDeviceAPI& dev = RequireDevice(cfg.device.device_type);
  auto sync = [&] { Check(dev.stream_sync(dev.self, cfg.device.device_id, nullptr)); };
  Optional<Function> timer = DeviceTimer(cfg.device);
  ::tvm::ffi::Any rv;
  f.CallPacked(args, &rv);  // warm-up
  sync();
  std::vector<char> flush_buf(static_cast<size_t>(std::max<int64_t>(cfg.cache_flush_bytes, 0)));
  std::vector<double> results;
  results.reserve(std::max(cfg.repeat, 0));
  int number = std::max(cfg.number, 1);
  for (int i = 0; i < cfg.repeat; ++i) {
    if (!flush_buf.empty()) FlushCache(&flush_buf);
    if (cfg.preproc.has_value()) cfg.preproc.value().CallPacked(args, &rv);
    double elapsed_s = 0;
    int zero_rounds = 0;
    while (true) {
      sync();
      if (timer.has_value()) {
        (*timer)("start");
        for (int j = 0; j < number; ++j) f.CallPacked(args, &rv);
        (*timer)("stop");
        elapsed_s = static_cast<double>((*timer)("elapsed_ns").cast<int64_t>()) * 1e-9;
      } else {
        auto start = std::chrono::steady_clock::now();
        for (int j = 0; j < number; ++j) f.CallPacked(args, &rv);
        sync();
        elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      double elapsed_ms = elapsed_s * 1e3;
      if (elapsed_ms <= 0) ++zero_rounds;
      if (elapsed_ms >= cfg.min_repeat_ms || zero_rounds >= cfg.limit_zero_time_iterations) break;
      // Scale `number` so the next round reaches min_repeat_ms (grow at least by the golden ratio).
      double per_call_ms = elapsed_ms / number;
      int scaled = per_call_ms > 0 ? static_cast<int>(cfg.min_repeat_ms / per_call_ms) + 1 : 0;
      number = std::max(scaled, static_cast<int>(std::ceil(number * 1.618)));
    }
    results.push_back(elapsed_s / number);
    if (cfg.cooldown_interval_ms > 0 && cfg.repeats_to_cooldown > 0 &&
        (i + 1) % cfg.repeats_to_cooldown == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(cfg.cooldown_interval_ms));
    }
  }
  return ::tvm::ffi::Bytes(reinterpret_cast<const char*>(results.data()),
                           results.size() * sizeof(double));
}

Function MakeTimeEvaluator(Optional<Module> mod, const std::string& name, int device_type,
                           int device_id, int number, int repeat, int min_repeat_ms,
                           int limit_zero_time_iterations, int cooldown_interval_ms,
                           int repeats_to_cooldown, int64_t cache_flush_bytes,
                           const std::string& f_preproc) {
  Function f;
  if (mod.has_value()) {
    Optional<Function> found = mod.value()->GetFunction(String(name), /*query_imports=*/true);
    if (!found.has_value()) {
      backend::ThrowError("AttributeError",
                          "time_evaluator: module has no function '" + name + "'");
    }
    f = found.value();
  } else {
    auto global = Function::GetGlobal(name);
    if (!global.has_value()) {
      backend::ThrowError("AttributeError", "time_evaluator: no global function '" + name + "'");
    }
    f = *global;
  }
  Optional<Function> preproc;
  if (!f_preproc.empty()) {
    preproc = Function::GetGlobal(f_preproc);
    if (!preproc.has_value()) {
      backend::ThrowError("ValueError", "time_evaluator: f_preproc '" + f_preproc +
                                            "' is not a registered global function");
    }
  }
  RequireDevice(device_type);  // fail now, with the install hint, rather than on first call
  EvalConfig cfg{DLDevice{static_cast<DLDeviceType>(device_type), device_id},
                 number,
                 repeat,
                 min_repeat_ms,
                 limit_zero_time_iterations,
                 cooldown_interval_ms,
                 repeats_to_cooldown,
                 cache_flush_bytes,
                 preproc};
  return Function::FromPacked(
      [f, cfg](::tvm::ffi::PackedArgs args, ::tvm::ffi::Any* rv) { *rv = Evaluate(f, cfg, args); });
}

}  // namespace

void RegisterTimeEvaluator() {
  ::tvm::ffi::reflection::GlobalDef().def("runtime.RPCTimeEvaluator", MakeTimeEvaluator);
  RegisterCacheFlush();
}

}  // namespace core
}  // namespace tvm_runtime
