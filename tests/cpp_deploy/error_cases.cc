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
 */
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm_runtime/c_api.h>

#include <cstdio>
#include <iostream>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "load" && argc == 3) {
      ffi::Module::LoadFromFile(argv[2]);
    } else if (mode == "run-kernel" && argc == 6) {
      RunKernel(argv[2], argv[3], argv[4], std::stoll(argv[5]));
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
