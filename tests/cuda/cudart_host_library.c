/*
 * The host side of an artifact whose code links the CUDA runtime, as CUTLASS kernels compiled
 * by apache-tvm do (DT_NEEDED libcudart.so.<N>): one packed function,
 *   copy_and_count(src: Tensor, dst: Tensor) -> int
 * that copies src to dst with cudaMemcpy (device to device) and returns cudaGetDeviceCount.
 * Built by test_cudart_host_library.py against a (fake) libcudart, so that its DT_NEEDED entry
 * names the soname the test chose.
 */
#include <stdint.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

int cudaGetDeviceCount(int* count);
int cudaMemcpy(void* dst, const void* src, size_t n, int kind);

static DLTensor* AsTensor(const TVMFFIAny* a) {
  if (a->type_index == kTVMFFIDLTensorPtr) return (DLTensor*)a->v_ptr;
  if (a->type_index == kTVMFFITensor) return (DLTensor*)((char*)a->v_obj + sizeof(TVMFFIObject));
  return NULL;
}

static size_t Bytes(const DLTensor* t) {
  size_t n = (t->dtype.bits * t->dtype.lanes + 7) / 8;
  for (int i = 0; i < t->ndim; ++i) n *= (size_t)t->shape[i];
  return n;
}

__attribute__((visibility("default"))) int __tvm_ffi_copy_and_count(void* self,
                                                                    const TVMFFIAny* args,
                                                                    int32_t num_args,
                                                                    TVMFFIAny* result) {
  (void)self;
  DLTensor* src = num_args == 2 ? AsTensor(&args[0]) : NULL;
  DLTensor* dst = num_args == 2 ? AsTensor(&args[1]) : NULL;
  int count = 0;
  if (src == NULL || dst == NULL || Bytes(src) != Bytes(dst) ||
      cudaMemcpy((char*)dst->data + dst->byte_offset, (char*)src->data + src->byte_offset,
                 Bytes(src), /*cudaMemcpyDeviceToDevice=*/3) != 0 ||
      cudaGetDeviceCount(&count) != 0) {
    result->type_index = kTVMFFIInt;
    result->v_int64 = -1;
    return 0;
  }
  result->type_index = kTVMFFIInt;
  result->v_int64 = count;
  return 0;
}
