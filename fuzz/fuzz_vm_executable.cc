/*
 * Fuzz target: Relax VM executables (`ffi.Module.load_from_bytes.relax.VMExecutable`), the
 * payload `export_library` embeds for a Relax model.  An executable that loads is printed,
 * instantiated on the CPU and every VM function is called, so the bytecode (register, constant,
 * function indices, jump targets) and the builtins it drives run too.  The kernels come from the
 * real CPU models in tests/artifacts/relax (TVMRT_FUZZ_ARTIFACTS), imported into each executable.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/string.h>

#include <cstddef>
#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "fuzz_runtime.h"

namespace {

namespace ffi = ::tvm::ffi;

ffi::Function load_executable, alloc_tensor;
std::vector<ffi::Module> kernel_libraries;

void LoadKernelLibraries() {
  const char* dir = std::getenv("TVMRT_FUZZ_ARTIFACTS");
  if (dir == nullptr) tvmrt_fuzz::SetupFailed("set TVMRT_FUZZ_ARTIFACTS to tests/artifacts");
  for (const char* model : {"mlp_cpu", "mlp_dyn_cpu", "convnet_cpu"}) {
    ffi::Module root = ffi::Module::LoadFromFile(std::string(dir) + "/relax/" + model + ".so");
    if (root->imports().empty()) tvmrt_fuzz::SetupFailed(std::string(model) + " has no library");
    kernel_libraries.push_back(root->imports()[0].cast<ffi::Module>());
  }
}

ffi::Tensor Zeros(std::vector<int64_t> shape) {
  DLDataType f32{kDLFloat, 32, 1};
  DLDevice cpu{kDLCPU, 0};
  return alloc_tensor(ffi::Shape(shape), f32, cpu, ffi::Optional<ffi::String>())
      .cast<ffi::Tensor>();
}

/* Arguments shaped like the seeds' models: the MLPs take (x, w1, b1, w2, b2), the convnet x. */
std::vector<ffi::Any> ArgumentsFor(int num_args) {
  std::vector<ffi::Any> args;
  if (num_args == 5) {
    for (auto shape : std::vector<std::vector<int64_t>>{{4, 16}, {16, 32}, {32}, {32, 8}, {8}}) {
      args.emplace_back(Zeros(shape));
    }
  } else if (num_args == 1) {
    args.emplace_back(Zeros({1, 3, 8, 8}));
  } else {
    for (int i = 0; i < num_args; ++i) args.emplace_back(Zeros({4, 16}));
  }
  return args;
}

/* A corrupted name may resolve to any registered global, and some (tensor copies from raw
 * host pointers) trust their arguments by contract, as in apache-tvm.  Those executables are
 * parsed and printed but not run: the target is our handling of bytecode, not those APIs. */
bool CallsOnlyBuiltinsAndKernels(const std::string& text) {
  static const std::regex call(R"(call ([^\s(]+)\()");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), call); it != std::sregex_iterator();
       ++it) {
    std::string name = (*it)[1];
    if (name.rfind("vm.builtin.", 0) == 0) continue;
    if (ffi::Function::GetGlobal(name).has_value()) return false;
  }
  return true;
}

void RunFunctions(ffi::Module exec, const std::string& text) {
  for (const ffi::Module& lib : kernel_libraries) exec->ImportModule(lib);
  ffi::Module vm = (*exec->GetFunction("vm_load_executable"))().cast<ffi::Module>();
  (*vm->GetFunction("vm_initialization"))(static_cast<int>(kDLCPU), 0, 2);
  static const std::regex header(R"(@([^\s(]+)\(.*\): VM function, (\d+) args)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), header);
       it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1];
    int num_args = std::stoi((*it)[2]);
    if (num_args > 16) continue;
    auto fn = vm->GetFunction(name);
    if (!fn.has_value()) continue;
    std::vector<ffi::Any> args = ArgumentsFor(num_args);
    std::vector<ffi::AnyView> views(args.begin(), args.end());
    ffi::Any result;
    tvmrt_fuzz::ExpectHandled(
        [&] { fn->CallPacked(views.data(), static_cast<int32_t>(views.size()), &result); });
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tvmrt_fuzz::LoadRuntime({});
  load_executable = tvmrt_fuzz::Global("ffi.Module.load_from_bytes.relax.VMExecutable");
  alloc_tensor = tvmrt_fuzz::Global("runtime.TVMTensorAllocWithScope");
  LoadKernelLibraries();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tvmrt_fuzz::ExpectHandled([&] {
    ffi::Bytes blob(reinterpret_cast<const char*>(data), size);
    ffi::Module exec = load_executable(blob).cast<ffi::Module>();
    (*exec->GetFunction("stats"))();
    std::string text = (*exec->GetFunction("as_text"))().cast<ffi::String>();
    if (CallsOnlyBuiltinsAndKernels(text)) RunFunctions(exec, text);
  });
  return 0;
}
