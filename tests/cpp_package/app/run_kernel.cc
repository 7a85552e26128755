// The test application of tests/cpp_package: runs one function of a kernel library on 1-D
// float32 tensors, with nothing but tvm-ffi's C++ API, and reports on a RESULT: line.
//
//   run_kernel <library> <function> <out.f32> <in.f32>...
//
// <library> "--system-lib" takes the function from ffi.SystemLib(): the system library of the
// --system-lib object linked into the program (run_system_lib, linked to the static core).
//
// Inputs and output are raw little-endian float32 files (the test writes them from the
// artifact's .npz and compares the output with its numpy-computed expectation). The report
// also lists the libraries mapped into the process, so the test can check that the core (and
// any linked backend) was loaded from where it expects and that no libpython was.
#include <dlpack/dlpack.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<float> ReadFloats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + values.size() * sizeof(float),
            reinterpret_cast<char*>(values.data()));
  return values;
}

DLTensor FloatTensor(std::vector<float>* values, int64_t* shape) {
  *shape = static_cast<int64_t>(values->size());
  DLTensor tensor{};
  tensor.data = values->data();
  tensor.device = DLDevice{kDLCPU, 0};
  tensor.ndim = 1;
  tensor.dtype = DLDataType{kDLFloat, 32, 1};
  tensor.shape = shape;
  return tensor;
}

// Every shared object mapped into this process (from /proc/self/maps), as a JSON list.
std::string MappedLibraries() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> paths;
  for (std::string line; std::getline(maps, line);) {
    auto slash = line.find('/');
    if (slash != std::string::npos && line.find(".so", slash) != std::string::npos) {
      paths.insert(line.substr(slash));
    }
  }
  std::ostringstream out;
  out << "[";
  for (auto it = paths.begin(); it != paths.end(); ++it) {
    out << (it == paths.begin() ? "" : ", ") << "\"" << *it << "\"";
  }
  out << "]";
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: run_kernel <library> <function> <out.f32> <in.f32>...\n";
    return 2;
  }
  std::vector<std::vector<float>> inputs;
  for (int i = 4; i < argc; ++i) inputs.push_back(ReadFloats(argv[i]));
  std::vector<float> output(inputs[0].size());
  std::vector<int64_t> shapes(inputs.size() + 1);
  std::vector<DLTensor> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) tensors.push_back(FloatTensor(&inputs[i], &shapes[i]));
  tensors.push_back(FloatTensor(&output, &shapes.back()));
  try {
    tvm::ffi::Module mod =
        std::string(argv[1]) == "--system-lib"
            ? tvm::ffi::Function::GetGlobalRequired("ffi.SystemLib")().cast<tvm::ffi::Module>()
            : tvm::ffi::Module::LoadFromFile(argv[1]);
    tvm::ffi::Optional<tvm::ffi::Function> func = mod->GetFunction(argv[2]);
    if (!func.has_value()) {
      std::cerr << argv[1] << " has no function " << argv[2] << "\n";
      return 1;
    }
    std::vector<tvm::ffi::AnyView> args(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) args[i] = &tensors[i];
    tvm::ffi::Any result;
    func.value().CallPacked(args.data(), static_cast<int32_t>(args.size()), &result);
  } catch (const tvm::ffi::Error& err) {
    std::cerr << "tvm::ffi::Error: " << err.kind() << ": " << err.message() << "\n";
    return 1;
  }
  std::ofstream(argv[3], std::ios::binary)
      .write(reinterpret_cast<const char*>(output.data()),
             static_cast<std::streamsize>(output.size() * sizeof(float)));
  std::cout << "RESULT: {\"mapped\": " << MappedLibraries() << "}" << std::endl;
  return 0;
}
