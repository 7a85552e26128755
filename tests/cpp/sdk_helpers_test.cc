// The SDK's pure helpers (tvm_runtime/backend/*.h of the installed core wheel): the blob reader
// every module loader parses untrusted bytes with, the launch-tag plan and the kernel-argument
// conversion of every GPU backend, and the SHA-256 of the kernel caches.
#include <doctest/doctest.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/error.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/detail/sha256.h>
#include <tvm_runtime/backend/gpu/kernel_args.h>
#include <tvm_runtime/backend/gpu/launch_params.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

using tvm_runtime::backend::ArgKind;
using tvm_runtime::backend::ArgValue;
using tvm_runtime::backend::BlobReader;
using tvm_runtime::backend::KernelArgs;
using tvm_runtime::backend::LaunchPlan;
using tvm_runtime::backend::Sha256;

// The kind and message of the tvm::ffi::Error `body` throws ("" if it throws nothing).
template <typename F>
std::string ErrorOf(F&& body) {
  try {
    body();
  } catch (const tvm::ffi::Error& err) {
    return err.kind() + ": " + err.message();
  }
  return "";
}

template <typename T>
void Put(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

void PutString(std::string* out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out->append(s);
}

TVMFFIAny IntArg(int64_t v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}

TVMFFIAny FloatArg(double v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIFloat;
  a.v_float64 = v;
  return a;
}

std::vector<uint8_t> FromHex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace

TEST_CASE("BlobReader reads the serializer's primitives in order") {
  std::string blob;
  Put<uint32_t>(&blob, 0xC0FFEEu);
  PutString(&blob, "kernel");
  Put<uint64_t>(&blob, 3);
  for (int32_t v : {7, -1, 42}) Put<int32_t>(&blob, v);
  Put<uint64_t>(&blob, 2);
  PutString(&blob, "a");
  PutString(&blob, "");
  BlobReader r(blob.data(), blob.size(), "test");
  CHECK(r.Read<uint32_t>() == 0xC0FFEEu);
  CHECK(r.ReadString() == "kernel");
  CHECK(r.ReadVector<int32_t>() == std::vector<int32_t>{7, -1, 42});
  CHECK(r.ReadStringVector() == std::vector<std::string>{"a", ""});
  CHECK(r.remaining() == 0);
  r.ExpectEnd();
}

TEST_CASE("BlobReader turns truncation and corrupted counts into ValueErrors") {
  std::string blob;
  Put<uint64_t>(&blob, 1000);  // a string of 1000 bytes that is not there
  blob += "abc";
  BlobReader r(blob.data(), blob.size(), "opencl");
  std::string err = ErrorOf([&] { r.ReadString(); });
  CHECK(err.rfind("ValueError: Corrupted opencl module blob (length of a string (1000) exceeds the "
                  "remaining 3 bytes at byte 8 of 11)",
                  0) == 0);
  // A count of 2^61 int64 elements would be a 16 EiB allocation: refused before allocating.
  std::string huge;
  Put<uint64_t>(&huge, uint64_t{1} << 61);
  BlobReader h(huge.data(), huge.size(), "cuda");
  CHECK(ErrorOf([&] { h.ReadVector<int64_t>(); }).find("exceeds the remaining 0 bytes") !=
        std::string::npos);
  BlobReader scalar("ab", 2, "vulkan");
  CHECK(ErrorOf([&] { scalar.Read<uint32_t>(); }).find("need 4 bytes for a scalar, have 2") !=
        std::string::npos);
  BlobReader trailing("abcd", 4, "vulkan");
  trailing.Read<uint16_t>();
  CHECK(ErrorOf([&] { trailing.ExpectEnd(); }).find("2 unexpected trailing bytes") !=
        std::string::npos);
}

TEST_CASE("LaunchPlan maps launch tags to grid, block and dynamic shared memory") {
  LaunchPlan plan(2, {"blockIdx.x", "threadIdx.x", "threadIdx.y", "tirx.use_dyn_shared_memory"},
                  "k");
  CHECK(plan.num_kernel_args() == 2);
  CHECK(plan.num_packed_args() == 2 + 3 + 1);
  CHECK(plan.work_dim() == 2);
  CHECK(plan.uses_dyn_shmem());
  CHECK_FALSE(plan.uses_cluster());
  std::vector<TVMFFIAny> args = {IntArg(0),  IntArg(0), IntArg(128),
                                 IntArg(32), IntArg(4), IntArg(4096)};
  tvm_runtime::backend::LaunchDims d = plan.Extract(args.data());
  CHECK(d.grid(0) == 128);
  CHECK(d.grid(1) == 1);
  CHECK(d.block(0) == 32);
  CHECK(d.block(1) == 4);
  CHECK(d.block(2) == 1);
  CHECK(d.dyn_shmem_bytes == 4096);
  CHECK(d.Describe() == "grid (128, 1, 1), block (32, 4, 1), 4096 bytes of dynamic shared memory");
  // Non-positive launch values leave the dimension at 1.
  args[2] = IntArg(-5);
  CHECK(plan.Extract(args.data()).grid(0) == 1);
}

TEST_CASE("LaunchPlan flags and refuses tags it does not know") {
  LaunchPlan cluster(0, {"clusterCtaIdx.y", "tirx.use_cooperative_launch"}, "k");
  CHECK(cluster.uses_cluster());
  CHECK(cluster.cooperative_launch());
  CHECK(cluster.work_dim() == 1);
  std::string unknown = ErrorOf([] { LaunchPlan(0, {"warpIdx.x"}, "my_kernel"); });
  CHECK(unknown.rfind("ValueError: kernel 'my_kernel' has an unknown launch tag 'warpIdx.x'", 0) ==
        0);
  CHECK(unknown.find("needs a tvm-runtime that knows this tag") != std::string::npos);
  CHECK(ErrorOf([] {
          LaunchPlan(0, {"tirx.use_dyn_shared_memory", "blockIdx.x"}, "k");
        }).find("must be the last launch tag") != std::string::npos);
}

TEST_CASE("KernelArgs converts packed arguments to the launch API's fixed-width values") {
  std::vector<DLDataType> types = {{kDLOpaqueHandle, 64, 1},
                                   {kDLInt, 32, 1},
                                   {kDLFloat, 32, 1},
                                   {kDLUInt, 64, 1},
                                   {kDLFloat, 64, 1}};
  KernelArgs kernel(types, "k");
  REQUIRE(kernel.size() == 5);
  CHECK(kernel.kind(0) == ArgKind::kHandle);
  CHECK(tvm_runtime::backend::ArgSize(kernel.kind(1)) == 4);
  CHECK(tvm_runtime::backend::ArgSize(kernel.kind(3)) == 8);
  float storage[4] = {};
  DLTensor tensor{};
  tensor.data = storage;
  TVMFFIAny handle{};
  handle.type_index = kTVMFFIDLTensorPtr;
  handle.v_ptr = &tensor;
  // An int32 parameter takes the low 32 bits; a float32 one the rounded double; ints pass for
  // float parameters.
  std::vector<TVMFFIAny> args = {handle, IntArg((int64_t{1} << 32) + 7), FloatArg(0.1), IntArg(-1),
                                 IntArg(3)};
  std::vector<ArgValue> out(kernel.size());
  kernel.Convert(args.data(), out.data());
  CHECK(out[0].v_handle == storage);
  CHECK(out[1].v_int32 == 7);
  CHECK(out[2].v_float32 == static_cast<float>(0.1));
  CHECK(out[3].v_uint64 == UINT64_MAX);
  CHECK(out[4].v_float64 == 3.0);
  args[1] = FloatArg(1.5);
  CHECK(ErrorOf([&] { kernel.Convert(args.data(), out.data()); }) ==
        "TypeError: expected an integer scalar kernel argument");
  CHECK(ErrorOf([] { KernelArgs({{kDLFloat, 16, 1}}, "half_kernel"); }) ==
        "TypeError: kernel 'half_kernel' argument 0 has unsupported type (code 2, bits 16, lanes "
        "1)");
}

// The reference digests come from Python's hashlib, written by the test that runs this binary.
TEST_CASE("Sha256 matches hashlib, in one update or byte by byte") {
  const char* path = std::getenv("TVM_UNIT_SHA256_VECTORS");
  REQUIRE_MESSAGE(path != nullptr, "set TVM_UNIT_SHA256_VECTORS (tests/core/test_cpp_units.py)");
  std::ifstream in(path);
  std::string input_hex, digest;
  int checked = 0;
  while (in >> input_hex >> digest) {
    if (input_hex == "-") input_hex.clear();
    std::vector<uint8_t> input = FromHex(input_hex);
    CHECK(Sha256().Update(input.data(), input.size()).HexDigest() == digest);
    Sha256 piecewise;
    for (uint8_t byte : input) piecewise.Update(&byte, 1);
    CHECK(piecewise.HexDigest() == digest);
    ++checked;
  }
  CHECK(checked > 100);
}
