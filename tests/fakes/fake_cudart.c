/*
 * A fake CUDA runtime (libcudart.so.12 / .13 stand-in, built with that soname) for testing host
 * libraries that link the CUDA runtime (CUTLASS artifacts) without a GPU.  It sits on the fake
 * CUDA driver (TVM_CUDA_DRIVER_LIBRARY, already loaded by tvm-runtime-cuda), whose device
 * memory is host memory, and logs every call (fake_cudart_log()).
 */
#define FAKE_DRIVER_PREFIX fake_cudart
#include <dlfcn.h>

#include "fake_log.h"

enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorNoDevice = 100 };

API int cudaGetDeviceCount(int* count) {
  const char* driver = getenv("TVM_CUDA_DRIVER_LIBRARY");
  void* handle = driver ? dlopen(driver, RTLD_NOW | RTLD_NOLOAD) : NULL;
  int (*get)(int*) = handle ? (int (*)(int*))dlsym(handle, "cuDeviceGetCount") : NULL;
  if (count == NULL || get == NULL || get(count) != 0) {
    Log("cudaGetDeviceCount error");
    return cudaErrorNoDevice;
  }
  Log("cudaGetDeviceCount count=%d", *count);
  return cudaSuccess;
}

API int cudaMemcpy(void* dst, const void* src, size_t n, int kind) {
  if ((dst == NULL || src == NULL) && n > 0) return cudaErrorInvalidValue;
  if (kind < 0 || kind > 4) return cudaErrorInvalidValue;
  memmove(dst, src, n);
  Log("cudaMemcpy bytes=%zu kind=%d", n, kind);
  return cudaSuccess;
}

API const char* cudaGetErrorString(int error) { return error ? "fake cudart error" : "no error"; }
