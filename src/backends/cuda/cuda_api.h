/*
 * The subset of the CUDA driver API (cuda.h) this backend uses, declared here so the wheel
 * builds without a CUDA toolkit and links no CUDA library: libcuda.so.1 is dlopen()ed on first
 * device use (cuda_library.h).  Values and layouts follow cuda.h of CUDA 12/13, whose driver ABI
 * is stable for every entry point below (the "_v2" variants are resolved by name).
 *
 * tests/cuda/check_cuda_api_decls.cc compiles this header with
 * TVM_RUNTIME_CUDA_CHECK_AGAINST_CUDA_H against the real cuda.h: the types then become cuda.h's
 * own, and static_asserts compare every constant, struct layout and function signature.
 */
#ifndef TVM_RUNTIME_BACKENDS_CUDA_CUDA_API_H_
#define TVM_RUNTIME_BACKENDS_CUDA_CUDA_API_H_

#include <cstddef>

namespace tvm_runtime {
namespace cuda {

// Our own definitions of the two launch structs; their layout is checked against cuda.h.
struct CudaLaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int cooperative;
    int programmatic_stream_serialization_allowed;
    struct {
      unsigned int x, y, z;
    } cluster_dim;
  } value;
};

struct CudaLaunchConfig {
  unsigned int grid_x, grid_y, grid_z;
  unsigned int block_x, block_y, block_z;
  unsigned int shared_mem_bytes;
  void* stream;
  CudaLaunchAttribute* attrs;
  unsigned int num_attrs;
};

#ifdef TVM_RUNTIME_CUDA_CHECK_AGAINST_CUDA_H
using CUresult = ::CUresult;
using CUdevice = ::CUdevice;
using CUdeviceptr = ::CUdeviceptr;
using CUcontext = ::CUcontext;
using CUmodule = ::CUmodule;
using CUfunction = ::CUfunction;
using CUstream = ::CUstream;
using CUevent = ::CUevent;
using CUdevice_attribute = ::CUdevice_attribute;
using CUfunction_attribute = ::CUfunction_attribute;
using CUjit_option = ::CUjit_option;
using CUlaunchConfig = ::CUlaunchConfig;
using CUlaunchAttribute = ::CUlaunchAttribute;
#else
// cuda.h's enums are plain C enums of int size; int keeps the ABI and needs no cast noise.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT(runtime/int): cuda.h's type on LP64
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUdevice_attribute = int;
using CUfunction_attribute = int;
using CUjit_option = int;
using CUlaunchConfig = CudaLaunchConfig;
using CUlaunchAttribute = CudaLaunchAttribute;
#endif

// CUresult
constexpr int CUDA_SUCCESS = 0;
constexpr int CUDA_ERROR_INVALID_VALUE = 1;
constexpr int CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr int CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr int CUDA_ERROR_DEINITIALIZED = 4;
constexpr int CUDA_ERROR_STUB_LIBRARY = 34;
constexpr int CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36;
constexpr int CUDA_ERROR_NO_DEVICE = 100;
constexpr int CUDA_ERROR_INVALID_DEVICE = 101;
constexpr int CUDA_ERROR_INVALID_IMAGE = 200;
constexpr int CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
constexpr int CUDA_ERROR_INVALID_PTX = 218;
constexpr int CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
constexpr int CUDA_ERROR_INVALID_HANDLE = 400;
constexpr int CUDA_ERROR_NOT_FOUND = 500;
constexpr int CUDA_ERROR_SYSTEM_NOT_READY = 802;
constexpr int CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803;
constexpr int CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804;

// CUdevice_attribute
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12;
constexpr int CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14;

// CUjit_option
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// CUlaunchAttributeID
constexpr int CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2;
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;
constexpr int CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6;
constexpr int CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION = 11;

// Flags
constexpr unsigned int CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned int CU_EVENT_DEFAULT = 0x0;
constexpr unsigned int CU_EVENT_DISABLE_TIMING = 0x2;
// cuda.h defines CU_MEMHOSTALLOC_PORTABLE as a macro; a different name keeps both usable.
constexpr unsigned int kMemHostAllocPortable = 0x1;

// CUDA graphs (cuda_graph.cc): stream capture and replay.
#ifdef TVM_RUNTIME_CUDA_CHECK_AGAINST_CUDA_H
using CUgraph = ::CUgraph;
using CUgraphExec = ::CUgraphExec;
using CUstreamCaptureMode = ::CUstreamCaptureMode;
#else
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUstreamCaptureMode = int;
#endif
constexpr int CU_STREAM_CAPTURE_MODE_GLOBAL = 0;
constexpr int CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
constexpr int CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901;
// ---- TMA tensor maps (cuTensorMapEncodeTiled, CUDA 12.0+ drivers; cuda_tensor_map.cc) ----
#ifdef TVM_RUNTIME_CUDA_CHECK_AGAINST_CUDA_H
using CUtensorMap = ::CUtensorMap;
using CUtensorMapDataType = ::CUtensorMapDataType;
using CUtensorMapInterleave = ::CUtensorMapInterleave;
using CUtensorMapSwizzle = ::CUtensorMapSwizzle;
using CUtensorMapL2promotion = ::CUtensorMapL2promotion;
using CUtensorMapFloatOOBfill = ::CUtensorMapFloatOOBfill;
using cuuint32_t = ::cuuint32_t;
using cuuint64_t = ::cuuint64_t;
#else
// The opaque 128-byte, 64-byte aligned descriptor a kernel takes as a __grid_constant__ param.
struct alignas(64) CUtensorMap {
  unsigned long long opaque[16];  // NOLINT(runtime/int): cuda.h's layout
};
using CUtensorMapDataType = int;
using CUtensorMapInterleave = int;
using CUtensorMapSwizzle = int;
using CUtensorMapL2promotion = int;
using CUtensorMapFloatOOBfill = int;
using cuuint32_t = unsigned int;
using cuuint64_t = unsigned long long;  // NOLINT(runtime/int): cuda.h's type on LP64
#endif
constexpr size_t kTensorMapBytes = 128;
// CUtensorMapDataType
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0;
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1;
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2;
constexpr int CU_TENSOR_MAP_DATA_TYPE_INT32 = 3;
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4;
constexpr int CU_TENSOR_MAP_DATA_TYPE_INT64 = 5;
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6;
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7;
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8;
constexpr int CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9;
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ = 10;
constexpr int CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 11;
constexpr int CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ = 12;
constexpr int CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B = 13;   // CUDA 12.8+
constexpr int CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B = 14;  // CUDA 12.8+
constexpr int CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B = 15;  // CUDA 12.8+
// CUtensorMapInterleave
constexpr int CU_TENSOR_MAP_INTERLEAVE_NONE = 0;
constexpr int CU_TENSOR_MAP_INTERLEAVE_16B = 1;
constexpr int CU_TENSOR_MAP_INTERLEAVE_32B = 2;
// CUtensorMapSwizzle
constexpr int CU_TENSOR_MAP_SWIZZLE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_32B = 1;
constexpr int CU_TENSOR_MAP_SWIZZLE_64B = 2;
constexpr int CU_TENSOR_MAP_SWIZZLE_128B = 3;
constexpr int CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B = 4;          // CUDA 12.8+
constexpr int CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5;  // CUDA 12.8+
constexpr int CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B = 6;          // CUDA 12.8+
// CUtensorMapL2promotion
constexpr int CU_TENSOR_MAP_L2_PROMOTION_NONE = 0;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3;
// CUtensorMapFloatOOBfill
constexpr int CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0;
constexpr int CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1;
using CuTensorMapEncodeTiledFn = CUresult (*)(
    CUtensorMap* tensor_map, CUtensorMapDataType dtype, cuuint32_t rank, void* global_address,
    const cuuint64_t* global_dim, const cuuint64_t* global_strides, const cuuint32_t* box_dim,
    const cuuint32_t* element_strides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2_promotion, CUtensorMapFloatOOBfill oob_fill);
// ---- end TMA tensor maps ----

/* Entry points, filled by cuda_library.cc.  Comments name the exported symbol when it is not
 * the plain one: the "_v2" ABI is what cuda.h's macros select for CUDA >= 3.2 callers. */
struct CuApi {
  CUresult (*Init)(unsigned int flags);
  CUresult (*DriverGetVersion)(int* version);
  CUresult (*GetErrorName)(CUresult error, const char** str);
  CUresult (*GetErrorString)(CUresult error, const char** str);
  CUresult (*DeviceGetCount)(int* count);
  CUresult (*DeviceGet)(CUdevice* device, int ordinal);
  CUresult (*DeviceGetName)(char* name, int len, CUdevice dev);
  CUresult (*DeviceGetAttribute)(int* value, CUdevice_attribute attrib, CUdevice dev);
  CUresult (*DeviceTotalMem)(size_t* bytes, CUdevice dev);  // cuDeviceTotalMem_v2
  CUresult (*DevicePrimaryCtxRetain)(CUcontext* ctx, CUdevice dev);
  CUresult (*CtxSetCurrent)(CUcontext ctx);
  CUresult (*CtxGetCurrent)(CUcontext* ctx);
  CUresult (*CtxPushCurrent)(CUcontext ctx);                 // cuCtxPushCurrent_v2
  CUresult (*CtxPopCurrent)(CUcontext* ctx);                 // cuCtxPopCurrent_v2
  CUresult (*MemAlloc)(CUdeviceptr* dptr, size_t bytesize);  // cuMemAlloc_v2
  CUresult (*MemFree)(CUdeviceptr dptr);                     // cuMemFree_v2
  CUresult (*MemGetInfo)(size_t* free, size_t* total);       // cuMemGetInfo_v2
  CUresult (*MemHostAlloc)(void** pp, size_t bytesize, unsigned int flags);
  CUresult (*MemFreeHost)(void* p);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void* src, size_t n,
                              CUstream stream);  // cuMemcpyHtoDAsync_v2
  CUresult (*MemcpyDtoHAsync)(void* dst, CUdeviceptr src, size_t n,
                              CUstream stream);  // cuMemcpyDtoHAsync_v2
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t n,
                              CUstream stream);  // cuMemcpyDtoDAsync_v2
  CUresult (*MemcpyPeerAsync)(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                              CUcontext src_ctx, size_t n, CUstream stream);
  CUresult (*StreamCreate)(CUstream* stream, unsigned int flags);
  CUresult (*StreamDestroy)(CUstream stream);  // cuStreamDestroy_v2
  CUresult (*StreamSynchronize)(CUstream stream);
  CUresult (*StreamWaitEvent)(CUstream stream, CUevent event, unsigned int flags);
  CUresult (*EventCreate)(CUevent* event, unsigned int flags);
  CUresult (*EventDestroy)(CUevent event);  // cuEventDestroy_v2
  CUresult (*EventRecord)(CUevent event, CUstream stream);
  CUresult (*EventSynchronize)(CUevent event);
  CUresult (*EventElapsedTime)(float* ms, CUevent start, CUevent end);  // _v2 when present
  CUresult (*ModuleLoadDataEx)(CUmodule* module, const void* image, unsigned int num_options,
                               CUjit_option* options, void** option_values);
  CUresult (*ModuleUnload)(CUmodule module);
  CUresult (*ModuleGetFunction)(CUfunction* func, CUmodule module, const char* name);
  CUresult (*FuncSetAttribute)(CUfunction func, CUfunction_attribute attrib, int value);
  CUresult (*LaunchKernel)(CUfunction f, unsigned int grid_x, unsigned int grid_y,
                           unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                           unsigned int block_z, unsigned int shared_mem_bytes, CUstream stream,
                           void** kernel_params, void** extra);
  // Optional: CUDA >= 12.0 drivers; needed only for cluster, cooperative and PDL launches.
  CUresult (*LaunchKernelEx)(const CUlaunchConfig* config, CUfunction f, void** kernel_params,
                             void** extra);
  // Optional: CUDA graphs (CUDA >= 11.4 drivers), needed only by vm.builtin.cuda_graph.*.
  CUresult (*StreamBeginCapture)(CUstream stream,
                                 CUstreamCaptureMode mode);  // cuStreamBeginCapture_v2
  CUresult (*StreamEndCapture)(CUstream stream, CUgraph* graph);
  CUresult (*GraphInstantiateWithFlags)(CUgraphExec* exec, CUgraph graph,
                                        unsigned long long flags);  // NOLINT(runtime/int)
  CUresult (*GraphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*GraphExecDestroy)(CUgraphExec exec);
  CUresult (*GraphDestroy)(CUgraph graph);
  // Optional: CUDA >= 12.0 drivers; only runtime.cuTensorMapEncodeTiled (TMA) needs it.
  CuTensorMapEncodeTiledFn TensorMapEncodeTiled;
  // Optional (CUDA >= 9.2): the context of a stream handed in by a user (pinned-memory sync).
  CUresult (*StreamGetCtx)(CUstream stream, CUcontext* ctx);
};

}  // namespace cuda
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_CUDA_CUDA_API_H_
