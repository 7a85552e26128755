/*
 * Bad input seen from a C++ program (tests/cpp_deploy/test_cpp_deploy.py): each case must reach
 * the caller as a tvm::ffi::Error (or the C call's reason) with the message Python gives, never
 * as an abort.  Prints one "RESULT: {...}" JSON line: ok, and kind/message when it failed.
 *
 *   error_cases load <artifact>                       Module::LoadFromFile
 *   error_cases run-kernel <cpu|opencl> <artifact> <function> <n>
 *                                                     allocate float32[n] tensors on the device
 *                                                     and call function(a, b, c)
 *   error_cases load-backend <name>                   the global runtime.LoadBackend
 *   error_cases load-backend-path <name> <path>       TVMRuntimeLoadBackend (C)
 *   error_cases vm-sort-rows <artifact> <rows> <cols> run the VM's main on a float32 [rows, cols]
 *                                                     input and check that the first output is
 *                                                     each row sorted ascending (the contrib
 *                                                     sort models of tests/artifacts/contrib)
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm_runtime/c_api.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace ffi = tvm::ffi;

namespace {

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void Report(bool ok, const std::string& kind, const std::string& message, int rc = 0) {
  std::cout << "RESULT: {\"ok\": " << (ok ? "true" : "false") << ", \"kind\": " << JsonString(kind)
            << ", \"message\": " << JsonString(message) << ", \"rc\": " << rc << "}" << std::endl;
}

void RunKernel(const std::string& device_name, const std::string& artifact,
               const std::string& function, int64_t n) {
  DLDevice device{device_name == "opencl" ? kDLOpenCL : kDLCPU, 0};
  ffi::Module lib = ffi::Module::LoadFromFile(artifact);
  ffi::Function alloc = ffi::Function::GetGlobalRequired("runtime.TVMTensorAllocWithScope");
  ffi::Shape shape({n});
  DLDataType f32{kDLFloat, 32, 1};
  ffi::Tensor a = alloc(shape, f32, device, nullptr).cast<ffi::Tensor>();
  ffi::Tensor b = alloc(shape, f32, device, nullptr).cast<ffi::Tensor>();
  ffi::Tensor c = alloc(shape, f32, device, nullptr).cast<ffi::Tensor>();
  lib->GetFunction(function).value()(a, b, c);
}

// Whether main's first output is each row of the input sorted ascending.
std::string SortRowsOnVM(const std::string& artifact, int64_t rows, int64_t cols) {
  ffi::Module lib = ffi::Module::LoadFromFile(artifact);
  ffi::Module vm = lib->GetFunction("vm_load_executable").value()().cast<ffi::Module>();
  constexpr int kPooledAllocator = 2;
  vm->GetFunction("vm_initialization").value()(static_cast<int>(kDLCPU), 0, kPooledAllocator);
  ffi::Function alloc = ffi::Function::GetGlobalRequired("runtime.TVMTensorAllocWithScope");
  DLDevice cpu{kDLCPU, 0};
  ffi::Tensor x = alloc(ffi::Shape({rows, cols}), DLDataType{kDLFloat, 32, 1}, cpu, nullptr)
                      .cast<ffi::Tensor>();
  float* data = static_cast<float*>(x.GetDLTensorPtr()->data);
  for (int64_t i = 0; i < rows * cols; ++i)
    data[i] = static_cast<float>((i * 7919) % 1009) - 504.0f;
  ffi::Any result = vm->GetFunction("main").value()(x);
  ffi::Tensor sorted = result.cast<ffi::Array<ffi::Any>>()[0].cast<ffi::Tensor>();
  const float* got = static_cast<const float*>(sorted.GetDLTensorPtr()->data);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> want(data + r * cols, data + (r + 1) * cols);
    std::sort(want.begin(), want.end());
    for (int64_t c = 0; c < cols; ++c) {
      if (got[r * cols + c] != want[c]) {
        return "row " + std::to_string(r) + " is not sorted at column " + std::to_string(c);
      }
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "load" && argc == 3) {
      ffi::Module::LoadFromFile(argv[2]);
    } else if (mode == "run-kernel" && argc == 6) {
      RunKernel(argv[2], argv[3], argv[4], std::stoll(argv[5]));
    } else if (mode == "vm-sort-rows" && argc == 5) {
      std::string wrong = SortRowsOnVM(argv[2], std::stoll(argv[3]), std::stoll(argv[4]));
      Report(wrong.empty(), wrong.empty() ? "" : "WrongResult", wrong);
      return 0;
    } else if (mode == "load-backend" && argc == 3) {
      ffi::Function::GetGlobalRequired("runtime.LoadBackend")(std::string(argv[2]));
    } else if (mode == "load-backend-path" && argc == 4) {
      char err[4096] = {0};
      int rc = TVMRuntimeLoadBackend(argv[2], argv[3], err, sizeof(err));
      Report(rc == TVM_RUNTIME_BACKEND_LOADED, "", err, rc);
      return 0;
    } else {
      std::cerr << "usage: see the comment at the top of error_cases.cc\n";
      return 2;
    }
    Report(true, "", "");
  } catch (const ffi::Error& err) {
    Report(false, err.kind(), err.message());
  }
  return 0;
}
