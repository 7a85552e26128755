/*
 * Opening an NVIDIA library that comes from a pip wheel (cuBLASLt, cuDNN, the CUDA runtime) at
 * first use, the way NVRTC and NCCL are found: never linked, never bundled.
 *
 * Candidates, in order: $<env_var> alone when set (the user's choice, and how tests point at a
 * fake); else what the Python hook's locator `tvm_runtime.cuda.locate_library(name)` returns
 * (cuda-pathfinder, which knows the nvidia-* wheel layouts and conda); else the sonames for
 * $CONDA_PREFIX/lib and the system's search.  A failure names everything tried and the pip
 * command that installs the library.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_PIP_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_CUDA_PIP_LIBRARY_H_

#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/vendor/vendor_library.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tvm_runtime {
namespace cuda {

/* Registered by the Python hook: (name: str) -> list of paths, best first. */
constexpr const char* kLibraryLocatorGlobal = "tvm_runtime.cuda.locate_library";

struct PipLibrarySpec {
  std::string what;                  // "cuBLASLt", for messages
  std::string env_var;               // e.g. TVM_CUBLASLT_LIBRARY
  std::string locator_name;          // cuda-pathfinder's name, e.g. "cublasLt"
  std::vector<std::string> sonames;  // newest first, e.g. libcublasLt.so.13
  std::string install_hint;          // e.g. pip install "tvm-runtime-cuda[cublas]"
};

/* The candidates to try, as described above (never throws; a failing locator is skipped). */
std::vector<std::string> PipLibraryCandidates(const PipLibrarySpec& spec);

/* Opens the first candidate `accept(handle, &why)` takes; on failure the VendorLibrary's
 * handle is null and `*error` says what was tried and how to install the library. */
backend::VendorLibrary OpenPipLibrary(const PipLibrarySpec& spec,
                                      const std::function<bool(void*, std::string*)>& accept,
                                      std::string* error);

/* An entry-point table `Api` opened from a pip library on first use and kept for the process.
 * `resolve(handle, &api)` fills the table and returns the comma-separated names it lacks. */
template <typename Api>
class LazyPipLibrary {
 public:
  struct Loaded {
    Api api{};
    std::string path;  // the file opened
  };
  using Resolve = std::string (*)(void* handle, Api* api);

  LazyPipLibrary(PipLibrarySpec spec, Resolve resolve)
      : spec_(std::move(spec)), resolve_(resolve) {}

  /* The library; a RuntimeError naming the pip package otherwise.  A failure is not cached, so
   * a later call retries (after `pip install` in a notebook). */
  const Loaded& Get() {
    std::string error;
    const Loaded* lib = TryLoad(&error);
    if (lib == nullptr) backend::ThrowError("RuntimeError", error);
    return *lib;
  }
  /* "" when the library can be opened, else why not (never throws). */
  std::string Status() {
    std::string error;
    return TryLoad(&error) != nullptr ? std::string() : error;
  }
  /* The table when loaded, else nullptr (for error texts of the library itself). */
  const Api* IfLoaded() {
    std::lock_guard<std::mutex> lock(mu_);
    return loaded_ != nullptr ? &loaded_->api : nullptr;
  }

  /* Unless `status` is `success`, throws RuntimeError "<api_name> failed: <what>: <text>
   * (status N)", the text from the library's own status-string entry point `text_of` (a member
   * of Api) when the library is loaded, else "error". */
  template <typename Status, typename TextFn>
  void Check(Status status, Status success, const char* api_name, const std::string& what,
             TextFn Api::* text_of) {
    if (status == success) return;
    const Api* api = IfLoaded();
    const char* text = api != nullptr ? (api->*text_of)(status) : nullptr;
    backend::ThrowError("RuntimeError", std::string(api_name) + " failed: " + what + ": " +
                                            (text != nullptr ? text : "error") + " (status " +
                                            std::to_string(static_cast<int>(status)) + ")");
  }

 private:
  const Loaded* TryLoad(std::string* error) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (loaded_ != nullptr) return loaded_.get();
    }
    // The search may call into Python: no lock is held meanwhile.
    auto lib = std::make_unique<Loaded>();
    backend::VendorLibrary opened = OpenPipLibrary(
        spec_,
        [&](void* handle, std::string* why) {
          std::string missing = resolve_(handle, &lib->api);
          if (missing.empty()) return true;
          *why = "not " + spec_.what + " (missing " + missing + ")";
          return false;
        },
        error);
    if (opened.handle == nullptr) return nullptr;
    lib->path = opened.path;
    std::lock_guard<std::mutex> lock(mu_);
    if (loaded_ == nullptr) loaded_ = std::move(lib);  // never unloaded
    return loaded_.get();
  }

  PipLibrarySpec spec_;
  Resolve resolve_;
  std::mutex mu_;
  std::unique_ptr<Loaded> loaded_;
};

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_PIP_LIBRARY_H_
