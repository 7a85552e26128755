// The core's pure helpers: the paged KV cache's page bookkeeping, the checked byte size that
// every tensor allocation of the core goes through (tensor_ops.h), and what a device table says
// about pointer arithmetic, for tables of this ABI and of older minors.
#include <dlpack/dlpack.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "device_registry.h"
#include "lm/page_pool.h"
#include "tensor_size.h"

namespace {

using tvm_runtime::core::CompactByteSize;
using tvm_runtime::core::HasPointerArithmetic;
using tvm_runtime::core::TensorSize;
using tvm_runtime::core::lm::PagePool;

constexpr DLDataType kFloat32{kDLFloat, 32, 1};

// (status, bytes) of CompactByteSize for `shape`.
std::pair<TensorSize, uint64_t> SizeOf(std::vector<int64_t> shape, DLDataType dtype) {
  uint64_t nbytes = 12345;
  TensorSize status = CompactByteSize(shape.data(), static_cast<int>(shape.size()), dtype, &nbytes);
  return {status, nbytes};
}

}  // namespace

TEST_CASE("PagePool hands out pages in increasing order and shares them by reference count") {
  PagePool pool(4);
  CHECK(pool.num_pages() == 4);
  CHECK(pool.Allocate() == 0);
  CHECK(pool.Allocate() == 1);
  CHECK(pool.num_free() == 2);
  pool.Retain(1);  // a fork shares page 1
  CHECK(pool.shared(1));
  CHECK(pool.refs(1) == 2);
  pool.Release(1);
  CHECK_FALSE(pool.shared(1));
  CHECK(pool.num_free() == 2);  // still held once
  pool.Release(1);
  CHECK(pool.num_free() == 3);
  CHECK(pool.Allocate() == 1);  // the page just freed comes back first
  pool.Reset();
  CHECK(pool.num_free() == 4);
  CHECK(pool.refs(0) == 0);
  CHECK(pool.Allocate() == 0);
}

TEST_CASE("CompactByteSize: bytes of a compact tensor, sub-byte types rounded up") {
  CHECK(SizeOf({2, 3}, kFloat32) == std::make_pair(TensorSize::kOk, uint64_t{24}));
  CHECK(SizeOf({}, kFloat32) == std::make_pair(TensorSize::kOk, uint64_t{4}));  // a scalar
  CHECK(SizeOf({4}, DLDataType{kDLFloat, 16, 4}) == std::make_pair(TensorSize::kOk, uint64_t{32}));
  CHECK(SizeOf({9}, DLDataType{kDLUInt, 1, 1}) == std::make_pair(TensorSize::kOk, uint64_t{2}));
  CHECK(SizeOf({7, 0, 3}, kFloat32) == std::make_pair(TensorSize::kOk, uint64_t{0}));
}

TEST_CASE("CompactByteSize refuses negative dimensions and sizes that do not fit in 64 bits") {
  CHECK(SizeOf({2, -1}, kFloat32).first == TensorSize::kNegativeDimension);
  // The element count wraps uint64 ...
  CHECK(SizeOf({int64_t{1} << 40, int64_t{1} << 40}, kFloat32).first == TensorSize::kTooLarge);
  // ... exceeds int64 (a stride would overflow) ...
  CHECK(SizeOf({int64_t{1} << 62, 2}, DLDataType{kDLUInt, 1, 1}).first == TensorSize::kTooLarge);
  // ... or its size in bits does not fit, though the element count does.
  CHECK(SizeOf({int64_t{1} << 60}, kFloat32).first == TensorSize::kTooLarge);
  // An empty tensor is checked too: its strides are products of the other dimensions.
  CHECK(SizeOf({0, INT64_MAX, 2}, kFloat32).first == TensorSize::kTooLarge);
  // The largest size that fits is accepted.
  CHECK(SizeOf({INT64_MAX}, DLDataType{kDLUInt, 1, 1}) ==
        std::make_pair(TensorSize::kOk, (uint64_t{INT64_MAX} + 7) / 8));
}

TEST_CASE(
    "Pointer arithmetic comes from the device table, or for tables before ABI 1.3 the old list") {
  TVMRuntimeDeviceAPI table{};
  table.struct_size = sizeof(TVMRuntimeDeviceAPI);
  table.device_type = kDLCUDA;
  CHECK_FALSE(HasPointerArithmetic(table));  // a 1.3 table that does not set the flag
  table.flags = TVM_RUNTIME_DEVICE_POINTER_ARITHMETIC;
  CHECK(HasPointerArithmetic(table));
  table.device_type = kDLOpenCL;
  CHECK(HasPointerArithmetic(table));  // the table decides, whatever the device type
  // A table of ABI 1.2 (struct_size ends before `flags`, whatever the memory after it holds):
  // CUDA, ROCm and host memory as the cores of ABI 1.2 assumed, opaque handles elsewhere.
  table.struct_size = TVM_RUNTIME_DEVICE_API_MIN_SIZE;
  CHECK(offsetof(TVMRuntimeDeviceAPI, flags) >= TVM_RUNTIME_DEVICE_API_MIN_SIZE);
  for (int type : {kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged, kDLROCM, kDLROCMHost}) {
    table.device_type = type;
    CHECK(HasPointerArithmetic(table));
  }
  for (int type : {kDLOpenCL, kDLVulkan, kDLWebGPU, kDLExtDev}) {
    table.device_type = type;
    CHECK_FALSE(HasPointerArithmetic(table));
  }
}
