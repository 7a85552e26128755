/*
 * A fake OpenCL ICD loader (libOpenCL.so.1) for fault-injection tests: the backend opens it
 * through TVM_OPENCL_LIBRARY exactly as it opens the real one.  It has one platform with one
 * device whose memory is host memory, and fails where the environment says:
 *
 *   FAKE_CL_FAIL=<entry point>  that entry point (e.g. clGetPlatformIDs, clCreateContext,
 *                               clCreateCommandQueue) returns FAKE_CL_ERROR
 *   FAKE_CL_ERROR=<n>           the error it returns (default -6, CL_OUT_OF_HOST_MEMORY)
 *   FAKE_CL_MEMORY=<bytes>      clCreateBuffer above this size returns
 *                               CL_MEM_OBJECT_ALLOCATION_FAILURE (default 64 MiB)
 *
 * It also exports clIcdGetPlatformIDsKHR, so an .icd file in OCL_ICD_VENDORS can name it as a
 * vendor driver: there it reports FAKE_CL_ERROR, a driver that fails to initialise.
 * Kernels are never run: program building always fails with a build log.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef void* handle;

#define CL_SUCCESS 0
#define CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)
#define CL_BUILD_PROGRAM_FAILURE (-11)
#define CL_INVALID_VALUE (-30)
#define CL_INVALID_MEM_OBJECT (-38)

static int g_platform; /* addresses used as handles */
static int g_device;
static int g_context;
static int g_queue;
static int g_program;

static int Fails(const char* name) {
  const char* fail = getenv("FAKE_CL_FAIL");
  return fail != NULL && strcmp(fail, name) == 0;
}

static cl_int InjectedError(void) {
  const char* v = getenv("FAKE_CL_ERROR");
  return v != NULL ? (cl_int)atoi(v) : -6;
}

static cl_int SetError(cl_int* err, cl_int value) {
  if (err != NULL) *err = value;
  return value;
}

/* ---- platform and device ------------------------------------------------------------------ */

static cl_int ListPlatforms(cl_uint n, handle* platforms, cl_uint* count) {
  if (count != NULL) *count = 1;
  if (platforms != NULL && n > 0) platforms[0] = &g_platform;
  return CL_SUCCESS;
}

cl_int clGetPlatformIDs(cl_uint n, handle* platforms, cl_uint* count) {
  if (Fails("clGetPlatformIDs")) return InjectedError();
  return ListPlatforms(n, platforms, count);
}

cl_int clIcdGetPlatformIDsKHR(cl_uint n, handle* platforms, cl_uint* count) {
  (void)n;
  (void)platforms;
  if (count != NULL) *count = 0;
  return InjectedError();
}

static cl_int CopyInfo(const void* value, size_t size, size_t buf_size, void* buf,
                       size_t* size_ret) {
  if (size_ret != NULL) *size_ret = size;
  if (buf == NULL) return CL_SUCCESS;
  if (buf_size < size) return CL_INVALID_VALUE;
  memcpy(buf, value, size);
  return CL_SUCCESS;
}

static cl_int CopyString(const char* s, size_t buf_size, void* buf, size_t* size_ret) {
  return CopyInfo(s, strlen(s) + 1, buf_size, buf, size_ret);
}

cl_int clGetPlatformInfo(handle p, cl_uint what, size_t n, void* buf, size_t* size_ret) {
  (void)p;
  (void)what;
  return CopyString("Fake OpenCL", n, buf, size_ret);
}

cl_int clGetDeviceIDs(handle p, cl_ulong type, cl_uint n, handle* devices, cl_uint* count) {
  (void)p;
  (void)type;
  if (Fails("clGetDeviceIDs")) return InjectedError();
  if (count != NULL) *count = 1;
  if (devices != NULL && n > 0) devices[0] = &g_device;
  return CL_SUCCESS;
}

static cl_ulong MemoryLimit(void) {
  const char* v = getenv("FAKE_CL_MEMORY");
  return v != NULL ? strtoull(v, NULL, 10) : (cl_ulong)64 << 20;
}

cl_int clGetDeviceInfo(handle d, cl_uint what, size_t n, void* buf, size_t* size_ret) {
  (void)d;
  cl_ulong u64 = 0;
  cl_uint u32 = 0;
  size_t sizes[3] = {256, 256, 256};
  switch (what) {
    case 0x1000: /* CL_DEVICE_TYPE: GPU */
      u64 = 1 << 2;
      return CopyInfo(&u64, sizeof(u64), n, buf, size_ret);
    case 0x1002: /* compute units */
      u32 = 4;
      return CopyInfo(&u32, sizeof(u32), n, buf, size_ret);
    case 0x1003: /* work item dimensions */
      u32 = 3;
      return CopyInfo(&u32, sizeof(u32), n, buf, size_ret);
    case 0x1004: /* max work group size */
      return CopyInfo(&sizes[0], sizeof(size_t), n, buf, size_ret);
    case 0x1005: /* max work item sizes */
      return CopyInfo(sizes, sizeof(sizes), n, buf, size_ret);
    case 0x1010: /* max mem alloc size */
    case 0x101F: /* global mem size */
      u64 = MemoryLimit();
      return CopyInfo(&u64, sizeof(u64), n, buf, size_ret);
    case 0x102B: /* name */
      return CopyString("Fake OpenCL Device", n, buf, size_ret);
    case 0x102C: /* vendor */
      return CopyString("tvm-runtime tests", n, buf, size_ret);
    case 0x102D: /* driver version */
      return CopyString("0.0", n, buf, size_ret);
    case 0x102F: /* version */
      return CopyString("OpenCL 1.2 fake", n, buf, size_ret);
    case 0x1030: /* extensions */
      return CopyString("", n, buf, size_ret);
    default:
      return CL_INVALID_VALUE;
  }
}

handle clCreateContext(const intptr_t* props, cl_uint n, const handle* devices, void* notify,
                       void* user, cl_int* err) {
  (void)props, (void)n, (void)devices, (void)notify, (void)user;
  if (Fails("clCreateContext")) return SetError(err, InjectedError()), NULL;
  SetError(err, CL_SUCCESS);
  return &g_context;
}

cl_int clReleaseContext(handle c) { return (void)c, CL_SUCCESS; }

handle clCreateCommandQueue(handle c, handle d, cl_ulong props, cl_int* err) {
  (void)c, (void)d, (void)props;
  if (Fails("clCreateCommandQueue")) return SetError(err, InjectedError()), NULL;
  SetError(err, CL_SUCCESS);
  return &g_queue;
}

cl_int clReleaseCommandQueue(handle q) { return (void)q, CL_SUCCESS; }
cl_int clFinish(handle q) { return (void)q, CL_SUCCESS; }

/* ---- memory: a buffer is a malloc'ed block with its size in front ------------------------- */

typedef struct {
  size_t size;
  unsigned char data[];
} Buffer;

handle clCreateBuffer(handle c, cl_ulong flags, size_t size, void* host, cl_int* err) {
  (void)c, (void)flags, (void)host;
  if (size == 0) return SetError(err, CL_INVALID_VALUE), NULL;
  if (size > MemoryLimit()) return SetError(err, CL_MEM_OBJECT_ALLOCATION_FAILURE), NULL;
  Buffer* b = (Buffer*)calloc(1, sizeof(Buffer) + size);
  if (b == NULL) return SetError(err, CL_MEM_OBJECT_ALLOCATION_FAILURE), NULL;
  b->size = size;
  SetError(err, CL_SUCCESS);
  return b;
}

cl_int clReleaseMemObject(handle m) {
  free(m);
  return CL_SUCCESS;
}

static cl_int InRange(const Buffer* b, size_t offset, size_t size) {
  return b != NULL && offset <= b->size && size <= b->size - offset;
}

cl_int clEnqueueReadBuffer(handle q, handle m, cl_uint blocking, size_t offset, size_t size,
                           void* dst, cl_uint nwait, const handle* wait, handle* ev) {
  (void)q, (void)blocking, (void)nwait, (void)wait;
  Buffer* b = (Buffer*)m;
  if (!InRange(b, offset, size)) return CL_INVALID_MEM_OBJECT;
  memcpy(dst, b->data + offset, size);
  if (ev != NULL) *ev = NULL;
  return CL_SUCCESS;
}

cl_int clEnqueueWriteBuffer(handle q, handle m, cl_uint blocking, size_t offset, size_t size,
                            const void* src, cl_uint nwait, const handle* wait, handle* ev) {
  (void)q, (void)blocking, (void)nwait, (void)wait;
  Buffer* b = (Buffer*)m;
  if (!InRange(b, offset, size)) return CL_INVALID_MEM_OBJECT;
  memcpy(b->data + offset, src, size);
  if (ev != NULL) *ev = NULL;
  return CL_SUCCESS;
}

cl_int clEnqueueCopyBuffer(handle q, handle from, handle to, size_t from_offset, size_t to_offset,
                           size_t size, cl_uint nwait, const handle* wait, handle* ev) {
  (void)q, (void)nwait, (void)wait;
  Buffer* a = (Buffer*)from;
  Buffer* b = (Buffer*)to;
  if (!InRange(a, from_offset, size) || !InRange(b, to_offset, size)) return CL_INVALID_MEM_OBJECT;
  memmove(b->data + to_offset, a->data + from_offset, size);
  if (ev != NULL) *ev = NULL;
  return CL_SUCCESS;
}

/* ---- programs: every build fails ----------------------------------------------------------- */

static const char kBuildLog[] = "fake: this driver compiles nothing";

handle clCreateProgramWithSource(handle c, cl_uint n, const char** src, const size_t* len,
                                 cl_int* err) {
  (void)c, (void)n, (void)src, (void)len;
  SetError(err, CL_SUCCESS);
  return &g_program;
}

cl_int clBuildProgram(handle p, cl_uint n, const handle* d, const char* opts, void* notify,
                      void* user) {
  (void)p, (void)n, (void)d, (void)opts, (void)notify, (void)user;
  return CL_BUILD_PROGRAM_FAILURE;
}

cl_int clGetProgramBuildInfo(handle p, handle d, cl_uint what, size_t n, void* buf,
                             size_t* size_ret) {
  (void)p, (void)d, (void)what;
  return CopyString(kBuildLog, n, buf, size_ret);
}

cl_int clReleaseProgram(handle p) { return (void)p, CL_SUCCESS; }

handle clCreateKernel(handle p, const char* name, cl_int* err) {
  (void)p, (void)name;
  return SetError(err, CL_BUILD_PROGRAM_FAILURE), NULL;
}

cl_int clReleaseKernel(handle k) { return (void)k, CL_SUCCESS; }

cl_int clSetKernelArg(handle k, cl_uint i, size_t size, const void* value) {
  (void)k, (void)i, (void)size, (void)value;
  return CL_SUCCESS;
}

cl_int clEnqueueNDRangeKernel(handle q, handle k, cl_uint dims, const size_t* offset,
                              const size_t* global, const size_t* local, cl_uint nwait,
                              const handle* wait, handle* ev) {
  (void)q, (void)k, (void)dims, (void)offset, (void)global, (void)local, (void)nwait, (void)wait;
  if (ev != NULL) *ev = NULL;
  return CL_SUCCESS;
}

cl_int clReleaseEvent(handle e) { return (void)e, CL_SUCCESS; }
