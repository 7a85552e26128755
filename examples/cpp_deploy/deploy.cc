/*
 * Deploying TVM artifacts from C++ with no Python: what a service or an app on a board does.
 *
 * Written as for apache-tvm 0.27, against apache-tvm-ffi's public C++ API only, and linked only
 * against libtvm_runtime and libtvm_ffi.  It runs, on one device ("cpu" or "opencl"):
 *  - a kernel library: matmul C[64,48] = A[64,32] @ B[32,48] (<artifacts>/<device>/matmul.so);
 *  - a Relax VM model whose weights are embedded in the artifact: a two-layer MLP on a batch of
 *    4 (<artifacts>/constants/weights_<device>.so), through vm_load_executable,
 *    vm_initialization and main;
 * and checks both against the numpy answers in <data> (raw little-endian float32 files written by
 * make_data.py).  Nothing of tvm-runtime is called first: linking the core registers it, and the
 * OpenCL backend is loaded on first use from where it is installed.
 *
 *   cpp_deploy <cpu|opencl> <artifacts dir> <data dir>
 *
 * Prints one "RESULT: {...}" JSON line; exit status 0 when every output matched.
 */
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ffi = tvm::ffi;

namespace {

constexpr DLDataType kFloat32{kDLFloat, 32, 1};

// Host memory for tensors the program fills itself, 64-byte aligned as compiled kernels assume.
struct AlignedHostAlloc {
  void AllocData(DLTensor* tensor) {
    size_t bytes = sizeof(float);
    for (int i = 0; i < tensor->ndim; ++i) bytes *= static_cast<size_t>(tensor->shape[i]);
    tensor->data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  void FreeData(DLTensor* tensor) { std::free(tensor->data); }
};

std::vector<float> ReadFloats(const std::string& path, size_t count) {
  std::ifstream in(path, std::ios::binary);
  std::vector<float> values(count);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * 4));
  if (!in || in.peek() != EOF) {
    throw std::runtime_error(path + " does not hold " + std::to_string(count) + " float32 values");
  }
  return values;
}

ffi::Tensor HostTensor(std::initializer_list<int64_t> shape, const std::vector<float>& values) {
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(AlignedHostAlloc(), ffi::ShapeView(shape), kFloat32,
                                           DLDevice{kDLCPU, 0});
  std::memcpy(t.data_ptr(), values.data(), values.size() * sizeof(float));
  return t;
}

// A tensor on `device` holding `host` (the host tensor itself on the CPU): the runtime's
// allocator and copy, the globals apache-tvm 0.27's runtime registers under the same names.
ffi::Tensor OnDevice(const ffi::Tensor& host, DLDevice device) {
  if (device.device_type == kDLCPU) return host;
  static const ffi::Function alloc =
      ffi::Function::GetGlobalRequired("runtime.TVMTensorAllocWithScope");
  static const ffi::Function copy = ffi::Function::GetGlobalRequired("runtime.TVMTensorCopyFromTo");
  ffi::Tensor out =
      alloc(ffi::Shape(host.shape()), host.dtype(), device, nullptr).cast<ffi::Tensor>();
  copy(host, out);
  return out;
}

std::vector<float> ToHost(const ffi::Tensor& tensor) {
  ffi::Tensor host = tensor;
  if (tensor.device().device_type != kDLCPU) {
    static const ffi::Function copy =
        ffi::Function::GetGlobalRequired("runtime.TVMTensorCopyFromTo");
    std::vector<int64_t> shape(tensor.shape().begin(), tensor.shape().end());
    host = ffi::Tensor::FromNDAlloc(AlignedHostAlloc(), ffi::ShapeView(shape.data(), shape.size()),
                                    kFloat32, DLDevice{kDLCPU, 0});
    copy(tensor, host);  // synchronous: the data is on the host when it returns
  }
  const float* data = static_cast<const float*>(host.data_ptr());
  return std::vector<float>(data, data + host.numel());
}

// Largest |got - want| beyond atol + rtol * |want| (0 when every value is within tolerance).
double WorstExcess(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double excess = std::fabs(got[i] - want[i]) - (1e-4 + 1e-4 * std::fabs(want[i]));
    if (!(excess <= worst)) worst = std::isnan(excess) ? INFINITY : excess;
  }
  return worst;
}

double RunKernel(const std::string& artifact, const std::string& data, DLDevice device) {
  ffi::Module lib = ffi::Module::LoadFromFile(artifact);
  ffi::Function matmul = lib->GetFunction("matmul").value();
  ffi::Tensor a =
      OnDevice(HostTensor({64, 32}, ReadFloats(data + "/matmul_a.f32", 64 * 32)), device);
  ffi::Tensor b =
      OnDevice(HostTensor({32, 48}, ReadFloats(data + "/matmul_b.f32", 32 * 48)), device);
  ffi::Tensor c = OnDevice(HostTensor({64, 48}, std::vector<float>(64 * 48, 0.f)), device);
  matmul(a, b, c);
  return WorstExcess(ToHost(c), ReadFloats(data + "/matmul_c.f32", 64 * 48));
}

double RunModel(const std::string& artifact, const std::string& data, DLDevice device) {
  ffi::Module lib = ffi::Module::LoadFromFile(artifact);
  ffi::Module vm = lib->GetFunction("vm_load_executable").value()().cast<ffi::Module>();
  constexpr int kPooledAllocator = 2;
  if (device.device_type == kDLCPU) {
    vm->GetFunction("vm_initialization").value()(kDLCPU, 0, kPooledAllocator);
  } else {  // the last device is the host, where shape computations run
    vm->GetFunction("vm_initialization")
        .value()(static_cast<int>(device.device_type), device.device_id, kPooledAllocator, kDLCPU,
                 0, kPooledAllocator);
  }
  ffi::Tensor x = OnDevice(HostTensor({4, 64}, ReadFloats(data + "/model_x.f32", 4 * 64)), device);
  ffi::Tensor y = vm->GetFunction("main").value()(x).cast<ffi::Tensor>();
  return WorstExcess(ToHost(y), ReadFloats(data + "/model_y.f32", 4 * 64));
}

// Whether a Python interpreter is mapped into this process (it must not be).
bool LibpythonMapped() {
  std::ifstream maps("/proc/self/maps");
  std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  return text.find("libpython") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " <cpu|opencl> <artifacts dir> <data dir>\n";
    return 2;
  }
  std::string device_name = argv[1], artifacts = argv[2], data = argv[3];
  DLDevice device{device_name == "opencl" ? kDLOpenCL : kDLCPU, 0};
  if (device_name != "cpu" && device_name != "opencl") {
    std::cerr << "unknown device '" << device_name << "'\n";
    return 2;
  }
  std::ostringstream result;
  bool ok = false;
  try {
    double kernel = RunKernel(artifacts + "/" + device_name + "/matmul.so", data, device);
    double model = RunModel(artifacts + "/constants/weights_" + device_name + ".so", data, device);
    ok = kernel == 0 && model == 0;
    result << "{\"device\": \"" << device_name << "\", \"kernel_excess\": " << kernel
           << ", \"model_excess\": " << model;
  } catch (const ffi::Error& err) {
    // What the runtime reports (a missing backend, a corrupted artifact, ...) arrives here.
    std::cerr << err.kind() << ": " << err.message() << "\n";
    result << "{\"device\": \"" << device_name << "\", \"error\": \"" << err.kind() << "\"";
  } catch (const std::exception& err) {  // a data file of the wrong size
    std::cerr << err.what() << "\n";
    result << "{\"device\": \"" << device_name << "\", \"error\": \"data\"";
  }
  result << ", \"libpython_mapped\": " << (LibpythonMapped() ? "true" : "false") << "}";
  std::cout << "RESULT: " << result.str() << std::endl;
  return ok ? 0 : 1;
}
