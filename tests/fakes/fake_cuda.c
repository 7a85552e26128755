/*
 * A fake CUDA driver (libcuda.so.1 stand-in) for testing tvm-runtime-cuda without a GPU.
 *
 * It implements exactly the driver entry points the backend resolves, on host memory, and
 * records every launch, copy, allocation and attribute change in a text log that tests read
 * through fake_cuda_log().  Nothing is executed: kernels are only recorded.  Where it matters to
 * the runtime, it is as strict as the real driver, so bugs that only hardware would show fail
 * here too:
 *
 *  - Work is asynchronous.  Copies (HtoD, DtoH, DtoD, peer) and launches are queued on their
 *    stream and applied only at a synchronization point: cuStreamSynchronize, cuEventSynchronize
 *    of an event recorded after them, cuCtxSynchronize, a synchronous cuMemcpy*, cuStreamWaitEvent
 *    (applies the event's stream up to the record), cuMemFree*, cuStreamDestroy.  A missing sync
 *    reads stale data.  Host->device copies stage their source at the call, as the driver does.
 *    The legacy default stream (NULL) orders with the blocking streams of its context.
 *  - Contexts: allocations, module loads and launches need a current context; streams and events
 *    belong to the context current at their creation, and using one while no context is current
 *    is CUDA_ERROR_INVALID_CONTEXT, while another context is current CUDA_ERROR_INVALID_HANDLE
 *    (so is a function of another context's module).
 *  - Launches are validated against the device limits (the "validation" block below).
 *  - Images are checked against the device: PTX `.target` and `.version`, cubin architecture.
 *  - cuModuleGetFunction finds exact names only; timing-disabled events refuse elapsed time.
 * Every rejection also logs a line "rejected call=<entry point> reason=<why>".
 *
 * Environment (read at cuInit):
 *   FAKE_CUDA_INIT_ERROR=<n>    cuInit returns n
 *   FAKE_CUDA_DEVICES=<n>       number of devices (default 1, at most 8)
 *   FAKE_CUDA_CC=<major>.<minor> compute capability (default 8.0)
 *   FAKE_CUDA_DRIVER_VERSION=<n> cuDriverGetVersion (default 13000); bounds the PTX ISA accepted
 *   FAKE_CUDA_REJECT_LOADS=<n>  the first n module loads fail with CUDA_ERROR_INVALID_IMAGE
 *   FAKE_CUDA_FUNC_ATTR_DELAY_MS=<n> cuFuncSetAttribute sleeps n ms before it takes effect (widens
 *                               races between threads setting one function's attributes)
 */
#define FAKE_DRIVER_PREFIX fake_cuda
#include <time.h>

#include "fake_log.h"

#define MAX_DEVICES 8

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
};

/* ------------------------------------------------------------------------------ handles */

typedef struct Op Op;
typedef struct Ctx Ctx;

/* A stream: its queue of work not yet applied.  Destroyed streams stay allocated (marked dead)
 * so that a stale handle is an error code, not a use after free. */
typedef struct Stream {
  int id;  // 0: a context's legacy default stream
  unsigned flags;
  int dead;
  Ctx* ctx;
  Op* head;
  Op* tail;
  unsigned long long enqueued;  // sequence number of the last op queued
  unsigned long long applied;   // ... and of the last op applied
} Stream;

struct Ctx {
  int device;
  Stream legacy;  // the NULL / CU_STREAM_LEGACY stream of this context
};

typedef struct {
  int id;
  unsigned flags;
  int dead;
  Ctx* ctx;
  Stream* stream;          // where it was last recorded (NULL: never)
  unsigned long long seq;  // the stream's last op at that record
  double when_ms;
} Event;

typedef struct {
  Ctx* ctx;
  char* image;
  size_t size;
  int is_ptx;
} Module;

typedef struct {
  Module* module;
  char name[256];
  int num_params;
  int max_dyn_smem;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
} Function;

typedef struct {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int i;
    struct {
      unsigned x, y, z;
    } dim;
  } value;
} LaunchAttribute;

typedef struct {
  unsigned gx, gy, gz, bx, by, bz, smem;
  Stream* stream;
  LaunchAttribute* attrs;
  unsigned num_attrs;
} LaunchConfig;

#define CU_STREAM_NON_BLOCKING 0x1u
#define CU_EVENT_DISABLE_TIMING 0x2u
#define CU_STREAM_LEGACY_HANDLE ((Stream*)0x1)
#define CU_STREAM_PER_THREAD_HANDLE ((Stream*)0x2)

static int g_initialized = 0;
static int g_num_devices = 1;
static int g_cc_major = 8, g_cc_minor = 0;
static int g_driver_version = 13000;
static int g_reject_loads = 0;
static int g_func_attr_delay_ms = 0;
static Ctx g_ctx[MAX_DEVICES];
static __thread Ctx* t_current = NULL;
static __thread Ctx* t_stack[16];
static __thread int t_depth = 0;
static int g_next_stream = 1, g_next_event = 1;
static double g_clock_ms = 0;

/* One lock for the queues, streams, events and function attributes (the runtime calls the
 * driver from several threads). */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

/* Every stream ever created (dead ones included), for the synchronization points that wait
 * for all of a context's (or the whole device's) work. */
static Stream** g_streams = NULL;
static int g_num_streams = 0, g_cap_streams = 0;

/* How many 8-byte parameter values to record for launches of `kernel`. */
static struct {
  char name[256];
  int n;
} g_expect[64];
static int g_num_expect = 0;
API void fake_cuda_expect_params(const char* kernel, int n) {
  for (int i = 0; i < g_num_expect; ++i) {
    if (strcmp(g_expect[i].name, kernel) == 0) {
      g_expect[i].n = n;
      return;
    }
  }
  if (g_num_expect < 64) {
    snprintf(g_expect[g_num_expect].name, sizeof(g_expect[0].name), "%s", kernel);
    g_expect[g_num_expect++].n = n;
  }
}
static int ExpectedParams(const char* kernel) {
  for (int i = 0; i < g_num_expect; ++i) {
    if (strcmp(g_expect[i].name, kernel) == 0) return g_expect[i].n;
  }
  return 0;
}

static int CtxId(void) { return t_current ? t_current->device : -1; }

/* The device of the calling thread's current context (-1: none), for the fake NCCL. */
API int fake_cuda_current_device(void) { return CtxId(); }
static int StreamId(Stream* s) {
  return s == NULL || s == CU_STREAM_LEGACY_HANDLE || s == CU_STREAM_PER_THREAD_HANDLE ? 0 : s->id;
}

/* Logs why a call is refused and returns its error code. */
static CUresult Reject(const char* call, CUresult code, const char* reason) {
  Log("rejected call=%s code=%d reason=%s ctx=%d", call, code, reason, CtxId());
  return code;
}

#define REQUIRE_INIT() \
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED
#define REQUIRE_CTX(call) \
  if (!t_current) return Reject(call, CUDA_ERROR_INVALID_CONTEXT, "no_current_context")

/* ------------------------------------------------------------------------------ queue block
 *
 * Each stream holds a FIFO of ops; Enqueue() appends (after ordering the legacy stream with the
 * blocking streams of its context), ApplyUpTo() performs ops in order up to a sequence number.
 * Callers hold g_mu. */

typedef enum { OP_COPY, OP_LAUNCH } OpKind;

struct Op {
  OpKind kind;
  unsigned long long seq;
  void* dst;
  const void* src;  // for host->device copies: `staged`
  size_t bytes;
  void* staged;  // the source copied at the call (host->device), freed when applied
  Op* next;
};

static void ApplyOp(Op* op) {
  if (op->kind == OP_COPY) memmove(op->dst, op->src, op->bytes);
  free(op->staged);
}

static void ApplyUpTo(Stream* s, unsigned long long seq) {
  while (s->head != NULL && s->head->seq <= seq) {
    Op* op = s->head;
    s->head = op->next;
    if (s->head == NULL) s->tail = NULL;
    ApplyOp(op);
    s->applied = op->seq;
    free(op);
  }
}

static void ApplyAll(Stream* s) { ApplyUpTo(s, s->enqueued); }

/* Everything queued in one context (ctx == NULL: in every context). */
static void ApplyContext(Ctx* ctx) {
  for (int i = 0; i < MAX_DEVICES; ++i) {
    if (ctx == NULL || ctx == &g_ctx[i]) ApplyAll(&g_ctx[i].legacy);
  }
  for (int i = 0; i < g_num_streams; ++i) {
    if (ctx == NULL || g_streams[i]->ctx == ctx) ApplyAll(g_streams[i]);
  }
}

/* The legacy stream waits for the context's blocking streams, and they wait for it. */
static void OrderWithLegacyStream(Stream* s) {
  if (s->id == 0) {
    for (int i = 0; i < g_num_streams; ++i) {
      Stream* other = g_streams[i];
      if (other->ctx == s->ctx && !(other->flags & CU_STREAM_NON_BLOCKING)) ApplyAll(other);
    }
  } else if (!(s->flags & CU_STREAM_NON_BLOCKING)) {
    ApplyAll(&s->ctx->legacy);
  }
}

static void Enqueue(Stream* s, OpKind kind, void* dst, const void* src, size_t bytes,
                    int stage_source) {
  OrderWithLegacyStream(s);
  Op* op = (Op*)calloc(1, sizeof(Op));
  op->kind = kind;
  op->seq = ++s->enqueued;
  op->dst = dst;
  op->bytes = bytes;
  op->src = src;
  if (stage_source && bytes > 0) {
    op->staged = malloc(bytes);
    memcpy(op->staged, src, bytes);
    op->src = op->staged;
  }
  if (s->tail) {
    s->tail->next = op;
  } else {
    s->head = op;
  }
  s->tail = op;
}

/* The stream a handle names in the current context, or the error the driver returns. */
static CUresult UseStream(const char* call, Stream* handle, Stream** out) {
  REQUIRE_CTX(call);
  if (handle == NULL || handle == CU_STREAM_LEGACY_HANDLE ||
      handle == CU_STREAM_PER_THREAD_HANDLE) {
    *out = &t_current->legacy;
    return CUDA_SUCCESS;
  }
  if (handle->dead) return Reject(call, CUDA_ERROR_INVALID_HANDLE, "destroyed_stream");
  if (handle->ctx != t_current) {
    return Reject(call, CUDA_ERROR_INVALID_HANDLE, "stream_of_another_context");
  }
  *out = handle;
  return CUDA_SUCCESS;
}

/* An event used with its own context current, or the error the driver returns. */
static CUresult UseEvent(const char* call, Event* e) {
  REQUIRE_CTX(call);
  if (e == NULL || e->dead) return Reject(call, CUDA_ERROR_INVALID_HANDLE, "destroyed_event");
  if (e->ctx != t_current)
    return Reject(call, CUDA_ERROR_INVALID_HANDLE, "event_of_another_context");
  return CUDA_SUCCESS;
}

static int EventComplete(const Event* e) {
  return e->stream == NULL || e->stream->applied >= e->seq;
}

/* Ops queued on every stream and not yet applied (for tests of the fake itself). */
API long fake_cuda_pending_ops(void) {
  long n = 0;
  pthread_mutex_lock(&g_mu);
  for (int i = 0; i < MAX_DEVICES; ++i)
    n += (long)(g_ctx[i].legacy.enqueued - g_ctx[i].legacy.applied);
  for (int i = 0; i < g_num_streams; ++i)
    n += (long)(g_streams[i]->enqueued - g_streams[i]->applied);
  pthread_mutex_unlock(&g_mu);
  return n;
}

/* ------------------------------------------------------------------------------ validation block
 *
 * The checks of cuLaunchKernel(Ex) and of module images, against an A100-like device. */

#define MAX_BLOCK_X 1024u
#define MAX_BLOCK_Y 1024u
#define MAX_BLOCK_Z 64u
#define MAX_THREADS_PER_BLOCK 1024ull
#define MAX_GRID_X 2147483647u
#define MAX_GRID_YZ 65535u
#define DEFAULT_DYN_SMEM 49152
#define OPTIN_DYN_SMEM 166912 /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */

/* NULL when the launch is valid, otherwise why not (CUDA_ERROR_INVALID_VALUE). */
static const char* LaunchProblem(const Function* f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned smem) {
  if (gx == 0 || gy == 0 || gz == 0) return "zero_grid_dimension";
  if (bx == 0 || by == 0 || bz == 0) return "zero_block_dimension";
  if (bx > MAX_BLOCK_X || by > MAX_BLOCK_Y || bz > MAX_BLOCK_Z) return "block_dimension_limit";
  if ((unsigned long long)bx * by * bz > MAX_THREADS_PER_BLOCK) return "threads_per_block_limit";
  if (gx > MAX_GRID_X || gy > MAX_GRID_YZ || gz > MAX_GRID_YZ) return "grid_dimension_limit";
  if (smem > (unsigned)f->max_dyn_smem) {
    return smem > DEFAULT_DYN_SMEM && f->max_dyn_smem == DEFAULT_DYN_SMEM
               ? "dynamic_shared_memory_not_opted_in"
               : "dynamic_shared_memory_above_function_limit";
  }
  return NULL;
}

/* The highest PTX ISA (major * 10 + minor) a driver of this version JITs. */
static int MaxPtxIsa(int driver_version) {
  int major = driver_version / 1000, minor = (driver_version % 1000) / 10;
  if (major >= 13) return 90 + minor;
  if (major == 12) {
    if (minor <= 5) return 80 + minor;  // 12.0 -> 8.0 ... 12.5 -> 8.5
    if (minor <= 7) return 85;          // 12.6 -> 8.5
    return 79 + minor;                  // 12.8 -> 8.7, 12.9 -> 8.8
  }
  if (major == 11) return 70 + minor;  // 11.0 -> 7.0 ... 11.8 -> 7.8
  return 63;
}

static int DeviceSm(void) { return g_cc_major * 10 + g_cc_minor; }

/* CUDA_SUCCESS, or why this PTX cannot be JIT-compiled here (and `why` for the JIT log). */
static CUresult CheckPtx(const char* ptx, char* why, size_t why_size) {
  int vmajor = 0, vminor = 0, sm = 0;
  char suffix = 0;
  const char* v = strstr(ptx, ".version");
  if (!v || sscanf(v, ".version %d.%d", &vmajor, &vminor) != 2) {
    snprintf(why, why_size, "ptxas fatal: missing .version directive");
    return CUDA_ERROR_INVALID_PTX;
  }
  const char* t = strstr(ptx, ".target");
  if (!t || sscanf(t, ".target sm_%d%c", &sm, &suffix) < 1) {
    snprintf(why, why_size, "ptxas fatal: missing .target sm_XX directive");
    return CUDA_ERROR_INVALID_PTX;
  }
  int isa = vmajor * 10 + vminor, max_isa = MaxPtxIsa(g_driver_version);
  if (isa > max_isa) {
    snprintf(why, why_size, "ptxas fatal: PTX ISA %d.%d is newer than this driver supports (%d.%d)",
             vmajor, vminor, max_isa / 10, max_isa % 10);
    return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  }
  int arch_specific = suffix == 'a' || suffix == 'f';
  if (sm > DeviceSm() || (arch_specific && sm != DeviceSm())) {
    snprintf(why, why_size, "ptxas fatal: .target sm_%d%s is not supported by this device (sm_%d)",
             sm, arch_specific ? "a" : "", DeviceSm());
    return CUDA_ERROR_INVALID_PTX;
  }
  return CUDA_SUCCESS;
}

/* The SM a cubin was built for, from its ELF header (0: unknown).  CUDA 13 cubins (OS/ABI
 * 0x41, ABI version 8) keep it in e_flags bits 8-15; older ones (0x33) in bits 0-7. */
static int CubinSm(const char* p) {
  uint32_t flags;
  memcpy(&flags, p + 0x30, 4);
  unsigned char osabi = (unsigned char)p[7];
  if (osabi == 0x41) return (int)((flags >> 8) & 0xff);
  if (osabi == 0x33) return (int)(flags & 0xff);
  return 0;
}

/* A cubin runs on its own major architecture, at its minor version or newer. */
static CUresult CheckCubin(const char* image, char* why, size_t why_size) {
  int sm = CubinSm(image);
  if (sm == 0) {
    snprintf(why, why_size, "not a CUDA cubin (ELF OS/ABI %d)", (unsigned char)image[7]);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  if (sm / 10 != g_cc_major || sm % 10 > g_cc_minor) {
    snprintf(why, why_size, "cubin for sm_%d cannot run on this device (sm_%d)", sm, DeviceSm());
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  return CUDA_SUCCESS;
}

/* CUDA graphs (the block at the end): work on a capturing stream is recorded, not done. */
static int FakeCaptureLaunch(Stream* s, Function* f, const unsigned dims[7], void** params);
static int FakeCaptureCopy(Stream* s, const char* kind, void* dst, const void* src, size_t n);

/* ------------------------------------------------------------------------------ init, devices */

API CUresult cuInit(unsigned flags) {
  int err = EnvInt("FAKE_CUDA_INIT_ERROR", 0);
  if (err) return err;
  g_num_devices = EnvInt("FAKE_CUDA_DEVICES", 1);
  if (g_num_devices > MAX_DEVICES) g_num_devices = MAX_DEVICES;
  const char* cc = getenv("FAKE_CUDA_CC");
  if (cc && *cc) sscanf(cc, "%d.%d", &g_cc_major, &g_cc_minor);
  g_driver_version = EnvInt("FAKE_CUDA_DRIVER_VERSION", 13000);
  g_reject_loads = EnvInt("FAKE_CUDA_REJECT_LOADS", 0);
  g_func_attr_delay_ms = EnvInt("FAKE_CUDA_FUNC_ATTR_DELAY_MS", 0);
  for (int i = 0; i < MAX_DEVICES; ++i) {
    g_ctx[i].device = i;
    g_ctx[i].legacy.ctx = &g_ctx[i];
  }
  g_initialized = 1;
  Log("init");
  return 0;
}

API CUresult cuDriverGetVersion(int* v) {
  *v = EnvInt("FAKE_CUDA_DRIVER_VERSION", 13000);
  return 0;
}

static const struct {
  int code;
  const char* name;
  const char* text;
} kErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
};

API CUresult cuGetErrorName(CUresult e, const char** s) {
  for (size_t i = 0; i < sizeof(kErrors) / sizeof(kErrors[0]); ++i) {
    if (kErrors[i].code == e) {
      *s = kErrors[i].name;
      return 0;
    }
  }
  *s = NULL;
  return 1;
}

API CUresult cuGetErrorString(CUresult e, const char** s) {
  for (size_t i = 0; i < sizeof(kErrors) / sizeof(kErrors[0]); ++i) {
    if (kErrors[i].code == e) {
      *s = kErrors[i].text;
      return 0;
    }
  }
  *s = NULL;
  return 1;
}

API CUresult cuDeviceGetCount(int* n) {
  REQUIRE_INIT();
  *n = g_num_devices;
  return 0;
}

API CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  REQUIRE_INIT();
  if (ordinal < 0 || ordinal >= g_num_devices) return 101;
  *d = ordinal;
  return 0;
}

API CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  snprintf(name, (size_t)len, "Fake CUDA Device %d", d);
  return 0;
}

/* CUdevice_attribute -> value, roughly an A100; compute capability comes from FAKE_CUDA_CC. */
static const int kAttributes[][2] = {
    {1, 1024},      /* max threads per block */
    {2, 1024},      /* block dim x */
    {3, 1024},      /* block dim y */
    {4, 64},        /* block dim z */
    {8, 49152},     /* shared memory per block */
    {10, 32},       /* warp size */
    {12, 65536},    /* registers per block */
    {13, 1410000},  /* clock rate, kHz */
    {16, 108},      /* multiprocessors */
    {38, 40 << 20}, /* L2 bytes */
    {39, 2048},     /* threads per multiprocessor */
    {81, 167936},   /* shared memory per multiprocessor */
    {82, 65536},    /* registers per multiprocessor */
    {97, 166912},   /* shared memory per block, opt-in */
};

API CUresult cuDeviceGetAttribute(int* v, int attr, CUdevice d) {
  REQUIRE_INIT();
  if (attr == 75 || attr == 76) {
    *v = attr == 75 ? g_cc_major : g_cc_minor;
    return 0;
  }
  for (size_t i = 0; i < sizeof(kAttributes) / sizeof(kAttributes[0]); ++i) {
    if (kAttributes[i][0] == attr) {
      *v = kAttributes[i][1];
      return 0;
    }
  }
  return 1;
}

API CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
  *bytes = (size_t)16 << 30;
  return 0;
}

/* ------------------------------------------------------------------------------ contexts */

API CUresult cuDevicePrimaryCtxRetain(void** ctx, CUdevice d) {
  REQUIRE_INIT();
  if (d < 0 || d >= g_num_devices) return CUDA_ERROR_INVALID_DEVICE;
  *ctx = &g_ctx[d];
  Log("retain device=%d", d);
  return 0;
}

API CUresult cuCtxSetCurrent(void* ctx) {
  t_current = (Ctx*)ctx;
  Log("set_current ctx=%d", CtxId());
  return 0;
}

API CUresult cuCtxGetCurrent(void** ctx) {
  *ctx = t_current;
  return 0;
}

API CUresult cuCtxPushCurrent_v2(void* ctx) {
  if (t_depth >= 16) return 1;
  t_stack[t_depth++] = t_current;
  t_current = (Ctx*)ctx;
  return 0;
}

API CUresult cuCtxPopCurrent_v2(void** ctx) {
  if (t_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx) *ctx = t_current;
  t_current = t_stack[--t_depth];
  return 0;
}

/* A synchronization point: all work queued in the current context. */
API CUresult cuCtxSynchronize(void) {
  REQUIRE_CTX("cuCtxSynchronize");
  pthread_mutex_lock(&g_mu);
  ApplyContext(t_current);
  pthread_mutex_unlock(&g_mu);
  Log("ctx_sync ctx=%d", CtxId());
  return 0;
}

/* ------------------------------------------------------------------------------ memory */

API CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  REQUIRE_CTX("cuMemAlloc");
  if (n == 0) return CUDA_ERROR_INVALID_VALUE;
  if (n > ((size_t)1 << 40)) return CUDA_ERROR_OUT_OF_MEMORY;
  void* mem = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!mem) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = (CUdeviceptr)(uintptr_t)mem;
  ++g_live_allocations;
  Log("alloc ctx=%d bytes=%zu", CtxId(), n);
  return 0;
}

/* Freeing waits for the queued work that may still use the memory, as the driver does. */
API CUresult cuMemFree_v2(CUdeviceptr p) {
  REQUIRE_CTX("cuMemFree");
  pthread_mutex_lock(&g_mu);
  ApplyContext(NULL);
  pthread_mutex_unlock(&g_mu);
  free((void*)(uintptr_t)p);
  --g_live_allocations;
  Log("free ctx=%d", CtxId());
  return 0;
}

API CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  REQUIRE_CTX("cuMemGetInfo");
  *free_bytes = (size_t)15 << 30;
  *total = (size_t)16 << 30;
  return 0;
}

API CUresult cuMemHostAlloc(void** p, size_t n, unsigned flags) {
  REQUIRE_CTX("cuMemHostAlloc");
  *p = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
  ++g_live_allocations;
  Log("host_alloc bytes=%zu flags=%u", n, flags);
  return *p ? 0 : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuMemFreeHost(void* p) {
  pthread_mutex_lock(&g_mu);
  ApplyContext(NULL);
  pthread_mutex_unlock(&g_mu);
  free(p);
  --g_live_allocations;
  Log("host_free");
  return 0;
}

/* ------------------------------------------------------------------------------ copies
 *
 * Asynchronous copies: resolve the stream, log, queue (the queue block applies them later). */

static CUresult QueueCopy(const char* call, Stream* handle, void* dst, const void* src, size_t n,
                          int stage_source) {
  Stream* s = NULL;
  pthread_mutex_lock(&g_mu);
  CUresult rc = UseStream(call, handle, &s);
  if (rc == CUDA_SUCCESS) Enqueue(s, OP_COPY, dst, src, n, stage_source);
  pthread_mutex_unlock(&g_mu);
  return rc;
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, Stream* s) {
  if (FakeCaptureCopy(s, "htod", (void*)(uintptr_t)dst, src, n)) return 0;
  CUresult rc = QueueCopy("cuMemcpyHtoDAsync", s, (void*)(uintptr_t)dst, src, n, 1);
  if (rc) return rc;
  Log("copy htod bytes=%zu stream=%d ctx=%d", n, StreamId(s), CtxId());
  return 0;
}

API CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, Stream* s) {
  if (FakeCaptureCopy(s, "dtoh", dst, (const void*)(uintptr_t)src, n)) return 0;
  CUresult rc = QueueCopy("cuMemcpyDtoHAsync", s, dst, (const void*)(uintptr_t)src, n, 0);
  if (rc) return rc;
  Log("copy dtoh bytes=%zu stream=%d ctx=%d", n, StreamId(s), CtxId());
  return 0;
}

API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, Stream* s) {
  if (FakeCaptureCopy(s, "dtod", (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n)) return 0;
  CUresult rc =
      QueueCopy("cuMemcpyDtoDAsync", s, (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n, 0);
  if (rc) return rc;
  Log("copy dtod bytes=%zu stream=%d ctx=%d", n, StreamId(s), CtxId());
  return 0;
}

API CUresult cuMemcpyPeerAsync(CUdeviceptr dst, Ctx* dst_ctx, CUdeviceptr src, Ctx* src_ctx,
                               size_t n, Stream* s) {
  if (FakeCaptureCopy(s, "peer", (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n)) return 0;
  CUresult rc =
      QueueCopy("cuMemcpyPeerAsync", s, (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n, 0);
  if (rc) return rc;
  Log("copy peer bytes=%zu from=%d to=%d stream=%d", n, src_ctx->device, dst_ctx->device,
      StreamId(s));
  return 0;
}

/* Synchronous copies: the legacy stream (and the blocking streams) first, then the copy. */
static CUresult SyncCopy(const char* call, void* dst, const void* src, size_t n) {
  REQUIRE_CTX(call);
  pthread_mutex_lock(&g_mu);
  OrderWithLegacyStream(&t_current->legacy);
  ApplyAll(&t_current->legacy);
  pthread_mutex_unlock(&g_mu);
  memmove(dst, src, n);
  Log("copy_sync call=%s bytes=%zu ctx=%d", call, n, CtxId());
  return 0;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  return SyncCopy("cuMemcpyHtoD", (void*)(uintptr_t)dst, src, n);
}
API CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  return SyncCopy("cuMemcpyDtoH", dst, (const void*)(uintptr_t)src, n);
}
API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return SyncCopy("cuMemcpyDtoD", (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n);
}

/* ------------------------------------------------------------------------------ streams, events */

API CUresult cuStreamCreate(Stream** s, unsigned flags) {
  REQUIRE_CTX("cuStreamCreate");
  Stream* stream = (Stream*)calloc(1, sizeof(Stream));
  stream->flags = flags;
  stream->ctx = t_current;
  pthread_mutex_lock(&g_mu);
  stream->id = g_next_stream++;
  if (g_num_streams == g_cap_streams) {
    g_cap_streams = g_cap_streams ? 2 * g_cap_streams : 16;
    g_streams = (Stream**)realloc(g_streams, (size_t)g_cap_streams * sizeof(Stream*));
  }
  g_streams[g_num_streams++] = stream;
  pthread_mutex_unlock(&g_mu);
  *s = stream;
  Log("stream_create id=%d flags=%u ctx=%d", stream->id, flags, CtxId());
  return 0;
}

/* The driver finishes the stream's work, then releases it. */
API CUresult cuStreamDestroy_v2(Stream* handle) {
  Stream* s = NULL;
  pthread_mutex_lock(&g_mu);
  CUresult rc = UseStream("cuStreamDestroy", handle, &s);
  if (rc == CUDA_SUCCESS && s->id != 0) {
    ApplyAll(s);
    s->dead = 1;
  }
  pthread_mutex_unlock(&g_mu);
  if (rc) return rc;
  Log("stream_destroy id=%d", StreamId(handle));
  return 0;
}

API CUresult cuStreamGetCtx(Stream* handle, void** ctx) {
  if (handle == NULL || handle == CU_STREAM_LEGACY_HANDLE ||
      handle == CU_STREAM_PER_THREAD_HANDLE) {
    REQUIRE_CTX("cuStreamGetCtx");
    *ctx = t_current;
    return 0;
  }
  if (handle->dead) return Reject("cuStreamGetCtx", CUDA_ERROR_INVALID_HANDLE, "destroyed_stream");
  *ctx = handle->ctx;
  return 0;
}

API CUresult cuStreamSynchronize(Stream* handle) {
  Stream* s = NULL;
  pthread_mutex_lock(&g_mu);
  CUresult rc = UseStream("cuStreamSynchronize", handle, &s);
  if (rc == CUDA_SUCCESS) ApplyAll(s);
  pthread_mutex_unlock(&g_mu);
  if (rc) return rc;
  Log("stream_sync id=%d ctx=%d", StreamId(handle), CtxId());
  return 0;
}

/* Later work on the stream waits for the event: the fake applies the event's stream up to the
 * record now (the event may come from another context, as the driver allows). */
API CUresult cuStreamWaitEvent(Stream* handle, Event* e, unsigned flags) {
  Stream* s = NULL;
  pthread_mutex_lock(&g_mu);
  CUresult rc = UseStream("cuStreamWaitEvent", handle, &s);
  if (rc == CUDA_SUCCESS && (e == NULL || e->dead)) {
    rc = Reject("cuStreamWaitEvent", CUDA_ERROR_INVALID_HANDLE, "destroyed_event");
  }
  if (rc == CUDA_SUCCESS && e->stream != NULL) ApplyUpTo(e->stream, e->seq);
  pthread_mutex_unlock(&g_mu);
  if (rc) return rc;
  Log("stream_wait stream=%d event=%d", StreamId(handle), e->id);
  return 0;
}

API CUresult cuEventCreate(Event** e, unsigned flags) {
  REQUIRE_CTX("cuEventCreate");
  Event* event = (Event*)calloc(1, sizeof(Event));
  event->flags = flags;
  event->ctx = t_current;
  pthread_mutex_lock(&g_mu);
  event->id = g_next_event++;
  pthread_mutex_unlock(&g_mu);
  *e = event;
  Log("event_create id=%d flags=%u ctx=%d", event->id, flags, CtxId());
  return 0;
}

/* Destroyed events stay allocated (marked dead): a stale handle is an error, not a crash. */
API CUresult cuEventDestroy_v2(Event* e) {
  pthread_mutex_lock(&g_mu);
  CUresult rc = UseEvent("cuEventDestroy", e);
  if (rc == CUDA_SUCCESS) e->dead = 1;
  pthread_mutex_unlock(&g_mu);
  if (rc) return rc;
  Log("event_destroy id=%d", e->id);
  return 0;
}

API CUresult cuEventRecord(Event* e, Stream* handle) {
  Stream* s = NULL;
  pthread_mutex_lock(&g_mu);
  CUresult rc = UseEvent("cuEventRecord", e);
  if (rc == CUDA_SUCCESS) rc = UseStream("cuEventRecord", handle, &s);
  if (rc == CUDA_SUCCESS) {
    g_clock_ms += 1.25;  // every recorded event is 1.25 ms after the previous one
    e->stream = s;
    e->seq = s->enqueued;
    e->when_ms = g_clock_ms;
  }
  pthread_mutex_unlock(&g_mu);
  if (rc) return rc;
  Log("event_record id=%d stream=%d", e->id, StreamId(handle));
  return 0;
}

API CUresult cuEventSynchronize(Event* e) {
  pthread_mutex_lock(&g_mu);
  CUresult rc = UseEvent("cuEventSynchronize", e);
  if (rc == CUDA_SUCCESS && e->stream != NULL) ApplyUpTo(e->stream, e->seq);
  pthread_mutex_unlock(&g_mu);
  return rc;
}

API CUresult cuEventElapsedTime_v2(float* ms, Event* start, Event* end) {
  pthread_mutex_lock(&g_mu);
  CUresult rc = UseEvent("cuEventElapsedTime", start);
  if (rc == CUDA_SUCCESS) rc = UseEvent("cuEventElapsedTime", end);
  if (rc == CUDA_SUCCESS && ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING)) {
    rc = Reject("cuEventElapsedTime", CUDA_ERROR_INVALID_HANDLE, "event_without_timing");
  }
  if (rc == CUDA_SUCCESS && (start->stream == NULL || end->stream == NULL)) {
    rc = Reject("cuEventElapsedTime", CUDA_ERROR_INVALID_HANDLE, "event_never_recorded");
  }
  if (rc == CUDA_SUCCESS && (!EventComplete(start) || !EventComplete(end))) {
    rc = CUDA_ERROR_NOT_READY;
  }
  if (rc == CUDA_SUCCESS) *ms = (float)(end->when_ms - start->when_ms);
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* ------------------------------------------------------------------------------ modules */

API CUresult cuModuleLoadDataEx(Module** m, const void* image, unsigned n, int* opts, void** vals) {
  REQUIRE_CTX("cuModuleLoadDataEx");
  const char* p = (const char*)image;
  char* log = NULL;
  size_t log_size = 0;
  for (unsigned i = 0; i < n; ++i) {
    if (opts[i] == 5) log = (char*)vals[i];
    if (opts[i] == 6) log_size = (size_t)(uintptr_t)vals[i];
  }
  static const char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
  int is_cubin = memcmp(p, kElfMagic, 4) == 0;
  int is_ptx = !is_cubin && strstr(p, ".version") != NULL;
  size_t size = 0;
  if (is_cubin) {
    size = Elf64Size(p);
  } else if (is_ptx) {
    size = strlen(p);
  }
  if ((!is_cubin && !is_ptx) || g_reject_loads > 0) {
    if (g_reject_loads > 0) --g_reject_loads;
    if (log && log_size) snprintf(log, log_size, "fake JIT: image rejected");
    Log("module_load rejected ctx=%d", CtxId());
    return CUDA_ERROR_INVALID_IMAGE;
  }
  char why[256] = "";
  CUresult rc = is_ptx ? CheckPtx(p, why, sizeof(why)) : CheckCubin(p, why, sizeof(why));
  if (rc != CUDA_SUCCESS) {
    if (log && log_size) snprintf(log, log_size, "%s", why);
    return Reject("cuModuleLoadDataEx", rc,
                  is_ptx ? "ptx_not_for_this_device" : "cubin_not_for_this_device");
  }
  Module* mod = (Module*)calloc(1, sizeof(Module));
  mod->ctx = t_current;
  mod->image = (char*)malloc(size + 1);
  memcpy(mod->image, p, size);
  mod->image[size] = '\0';
  mod->size = size;
  mod->is_ptx = is_ptx;
  *m = mod;
  Log("module_load ctx=%d kind=%s bytes=%zu fnv=%016llx", CtxId(), is_ptx ? "ptx" : "cubin", size,
      (unsigned long long)Fnv1a(p, size));
  return 0;
}

API CUresult cuModuleUnload(Module* m) {
  REQUIRE_CTX("cuModuleUnload");
  if (m->ctx != t_current) return CUDA_ERROR_INVALID_CONTEXT;
  Log("module_unload ctx=%d", CtxId());
  free(m->image);
  free(m);
  return 0;
}

/* Whether the image holds `prefix` + `name` followed by one of `ends` (exact names only:
 * looking up `add` must not find `add_kernel`).  A NUL in `ends` is written as "\1". */
static int HasSymbol(const Module* m, const char* prefix, const char* name, const char* ends) {
  char needle[300];
  int n = snprintf(needle, sizeof(needle), "%s%s", prefix, name);
  if (n <= 0 || (size_t)n >= sizeof(needle) || (size_t)n >= m->size) return 0;
  for (size_t i = 0; i + (size_t)n < m->size; ++i) {
    if (memcmp(m->image + i, needle, (size_t)n) != 0) continue;
    char next = m->image[i + (size_t)n];
    for (const char* e = ends; *e; ++e) {
      if (next == (*e == '\1' ? '\0' : *e)) return 1;
    }
  }
  return 0;
}

API CUresult cuModuleGetFunction(Function** f, Module* m, const char* name) {
  // PTX: ".entry <name>(" (or whitespace before the parenthesis); cubin: section ".text.<name>".
  int found =
      m->is_ptx ? HasSymbol(m, ".entry ", name, "( \t\r\n") : HasSymbol(m, ".text.", name, "\1");
  if (!found) return CUDA_ERROR_NOT_FOUND;
  *f = (Function*)calloc(1, sizeof(Function));
  (*f)->module = m;
  (*f)->max_dyn_smem = DEFAULT_DYN_SMEM;
  snprintf((*f)->name, sizeof((*f)->name), "%s", name);
  return 0;
}

API CUresult cuFuncSetAttribute(Function* f, int attr, int value) {
  if (attr == 8 /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */ &&
      (value < 0 || value > OPTIN_DYN_SMEM)) {
    return Reject("cuFuncSetAttribute", CUDA_ERROR_INVALID_VALUE,
                  "dynamic_shared_memory_above_optin");
  }
  if (g_func_attr_delay_ms > 0) {
    struct timespec delay = {g_func_attr_delay_ms / 1000,
                             (long)(g_func_attr_delay_ms % 1000) * 1000000};
    nanosleep(&delay, NULL);
  }
  pthread_mutex_lock(&g_mu);
  if (attr == 8) f->max_dyn_smem = value;
  pthread_mutex_unlock(&g_mu);
  Log("func_attr kernel=%s attr=%d value=%d", f->name, attr, value);
  return 0;
}

static void LogTensorMapParams(const char* kernel, void** params, int n); /* TMA block, below */
/* ------------------------------------------------------------------------------ launches
 *
 * Both entry points: check the context, validate (validation block), log, queue (queue block). */

static void LogLaunch(const char* what, Function* f, unsigned gx, unsigned gy, unsigned gz,
                      unsigned bx, unsigned by, unsigned bz, unsigned smem, Stream* s,
                      void** params, const char* extra) {
  char values[2048] = "";
  int n = ExpectedParams(f->name);
  size_t used = 0;
  for (int i = 0; i < n && used < sizeof(values) - 32; ++i) {
    uint64_t v;
    memcpy(&v, params[i], 8);
    used += (size_t)snprintf(values + used, sizeof(values) - used, "%s%llx", i ? "," : "",
                             (unsigned long long)v);
  }
  Log("%s kernel=%s grid=%u,%u,%u block=%u,%u,%u smem=%u stream=%d ctx=%d params=%s%s", what,
      f->name, gx, gy, gz, bx, by, bz, smem, StreamId(s), CtxId(), values, extra);
  LogTensorMapParams(f->name, params, n);
}

/* Context, stream and limits of a launch; queues it when valid. */
static CUresult CheckAndQueueLaunch(const char* call, Function* f, unsigned gx, unsigned gy,
                                    unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                    unsigned smem, Stream* handle) {
  REQUIRE_CTX(call);
  if (f->module->ctx != t_current) {
    return Reject(call, CUDA_ERROR_INVALID_HANDLE, "function_of_another_context");
  }
  Stream* s = NULL;
  pthread_mutex_lock(&g_mu);
  CUresult rc = UseStream(call, handle, &s);
  const char* problem = rc ? NULL : LaunchProblem(f, gx, gy, gz, bx, by, bz, smem);
  if (problem) rc = Reject(call, CUDA_ERROR_INVALID_VALUE, problem);
  if (rc == CUDA_SUCCESS) Enqueue(s, OP_LAUNCH, NULL, NULL, 0, 0);
  pthread_mutex_unlock(&g_mu);
  return rc;
}

API CUresult cuLaunchKernel(Function* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned smem, Stream* s, void** params,
                            void** extra) {
  if (FakeCaptureLaunch(s, f, (const unsigned[7]){gx, gy, gz, bx, by, bz, smem}, params)) return 0;
  CUresult rc = CheckAndQueueLaunch("cuLaunchKernel", f, gx, gy, gz, bx, by, bz, smem, s);
  if (rc) return rc;
  LogLaunch("launch", f, gx, gy, gz, bx, by, bz, smem, s, params, "");
  return 0;
}

API CUresult cuLaunchKernelEx(const LaunchConfig* c, Function* f, void** params, void** extra) {
  if (FakeCaptureLaunch(c->stream, f,
                        (const unsigned[7]){c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->smem},
                        params))
    return 0;
  CUresult rc = CheckAndQueueLaunch("cuLaunchKernelEx", f, c->gx, c->gy, c->gz, c->bx, c->by, c->bz,
                                    c->smem, c->stream);
  if (rc) return rc;
  char attrs[512] = " attrs=";
  size_t used = strlen(attrs);
  for (unsigned i = 0; i < c->num_attrs; ++i) {
    const LaunchAttribute* a = &c->attrs[i];
    if (a->id == 4 || a->id == 11) {
      used += (size_t)snprintf(attrs + used, sizeof(attrs) - used, "%s%d:%u,%u,%u", i ? ";" : "",
                               a->id, a->value.dim.x, a->value.dim.y, a->value.dim.z);
    } else {
      used += (size_t)snprintf(attrs + used, sizeof(attrs) - used, "%s%d:%d", i ? ";" : "", a->id,
                               a->value.i);
    }
  }
  LogLaunch("launch_ex", f, c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->smem, c->stream, params,
            attrs);
  return 0;
}

/* ------------------------------------------------------------------------------ CUDA graphs
 *
 * Stream capture and replay.  Between cuStreamBeginCapture_v2 and cuStreamEndCapture, launches
 * and copies on the capturing stream become nodes of a graph (logged as `graph_node`, never as
 * `launch` or `copy`); kernel parameter values are copied at capture, as the real driver does
 * (as many 8-byte values as fake_cuda_expect_params asked for).  cuGraphLaunch logs
 * `graph_launch` and one `replay` line per node, naming the kernel and its parameter values (the
 * buffer pointers), so tests can check that replays reuse the captured kernels and buffers;
 * copies are performed again at replay.  Capture on the legacy stream fails as it does on a GPU.
 * Built with -DFAKE_CUDA_NO_GRAPHS, the driver exports none of these entry points (an old
 * driver).
 */

#define FAKE_GRAPH_MAX_PARAMS 32
#define FAKE_MAX_CAPTURES 16

typedef struct {
  int is_copy;
  char what[256]; /* kernel name, or the copy kind */
  unsigned dims[7];
  int num_params;
  uint64_t params[FAKE_GRAPH_MAX_PARAMS];
  void* dst;
  const void* src;
  size_t bytes;
} FakeGraphNode;

typedef struct {
  int id;
  int num_nodes, cap;
  FakeGraphNode* nodes;
} FakeGraph;

typedef struct {
  int id;
  FakeGraph graph; /* its own copy of the nodes: the graph may be destroyed after instantiation */
} FakeGraphExec;

static pthread_mutex_t g_graph_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  Stream* stream;
  FakeGraph* graph;
} g_captures[FAKE_MAX_CAPTURES];
static int g_next_graph = 1, g_next_graph_exec = 1;
static long g_live_graph_execs = 0;

/* The graph `s` is capturing into, or NULL. */
static FakeGraph* CapturingGraph(Stream* s) {
  FakeGraph* g = NULL;
  pthread_mutex_lock(&g_graph_mu);
  for (int i = 0; s && i < FAKE_MAX_CAPTURES; ++i) {
    if (g_captures[i].stream == s) g = g_captures[i].graph;
  }
  pthread_mutex_unlock(&g_graph_mu);
  return g;
}

static FakeGraphNode* AddNode(FakeGraph* g) {
  if (g->num_nodes == g->cap) {
    g->cap = g->cap ? g->cap * 2 : 8;
    g->nodes = (FakeGraphNode*)realloc(g->nodes, sizeof(FakeGraphNode) * (size_t)g->cap);
  }
  FakeGraphNode* n = &g->nodes[g->num_nodes++];
  memset(n, 0, sizeof(*n));
  return n;
}

/* "kernel=<name> grid=x,y,z block=x,y,z smem=n params=a,b" or "copy=<kind> bytes=n". */
static void DescribeNode(const FakeGraphNode* n, char* out, size_t size) {
  if (n->is_copy) {
    snprintf(out, size, "copy=%s bytes=%zu", n->what, n->bytes);
    return;
  }
  int used =
      snprintf(out, size, "kernel=%s grid=%u,%u,%u block=%u,%u,%u smem=%u params=", n->what,
               n->dims[0], n->dims[1], n->dims[2], n->dims[3], n->dims[4], n->dims[5], n->dims[6]);
  for (int i = 0; i < n->num_params && used > 0 && (size_t)used < size - 20; ++i) {
    used += snprintf(out + used, size - (size_t)used, "%s%llx", i ? "," : "",
                     (unsigned long long)n->params[i]);
  }
}

static int FakeCaptureLaunch(Stream* s, Function* f, const unsigned dims[7], void** params) {
  FakeGraph* g = CapturingGraph(s);
  if (!g) return 0;
  FakeGraphNode* n = AddNode(g);
  snprintf(n->what, sizeof(n->what), "%s", f->name);
  memcpy(n->dims, dims, sizeof(n->dims));
  n->num_params = ExpectedParams(f->name);
  if (n->num_params > FAKE_GRAPH_MAX_PARAMS) n->num_params = FAKE_GRAPH_MAX_PARAMS;
  for (int i = 0; i < n->num_params; ++i) memcpy(&n->params[i], params[i], 8);
  char text[2048];
  DescribeNode(n, text, sizeof(text));
  Log("graph_node graph=%d stream=%d %s", g->id, StreamId(s), text);
  return 1;
}

static int FakeCaptureCopy(Stream* s, const char* kind, void* dst, const void* src, size_t n) {
  FakeGraph* g = CapturingGraph(s);
  if (!g) return 0;
  FakeGraphNode* node = AddNode(g);
  node->is_copy = 1;
  snprintf(node->what, sizeof(node->what), "%s", kind);
  node->dst = dst;
  node->src = src;
  node->bytes = n;
  Log("graph_node graph=%d stream=%d copy=%s bytes=%zu", g->id, StreamId(s), kind, n);
  return 1;
}

API long fake_cuda_live_graph_execs(void) { return g_live_graph_execs; }

#ifndef FAKE_CUDA_NO_GRAPHS

API CUresult cuStreamBeginCapture_v2(Stream* s, int mode) {
  REQUIRE_CTX("cuStreamBeginCapture");
  if (!s) return 900; /* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: the legacy stream */
  if (CapturingGraph(s)) return 1;
  FakeGraph* g = (FakeGraph*)calloc(1, sizeof(FakeGraph));
  int slot = -1;
  pthread_mutex_lock(&g_graph_mu);
  g->id = g_next_graph++;
  for (int i = 0; i < FAKE_MAX_CAPTURES && slot < 0; ++i) {
    if (!g_captures[i].stream) slot = i;
  }
  if (slot >= 0) {
    g_captures[slot].stream = s;
    g_captures[slot].graph = g;
  }
  pthread_mutex_unlock(&g_graph_mu);
  if (slot < 0) {
    free(g);
    return 2;
  }
  Log("capture_begin stream=%d mode=%d graph=%d ctx=%d", StreamId(s), mode, g->id, CtxId());
  return 0;
}

API CUresult cuStreamEndCapture(Stream* s, FakeGraph** graph) {
  FakeGraph* g = NULL;
  pthread_mutex_lock(&g_graph_mu);
  for (int i = 0; s && i < FAKE_MAX_CAPTURES; ++i) {
    if (g_captures[i].stream == s) {
      g = g_captures[i].graph;
      g_captures[i].stream = NULL;
      g_captures[i].graph = NULL;
    }
  }
  pthread_mutex_unlock(&g_graph_mu);
  if (!g) return 903; /* CUDA_ERROR_STREAM_CAPTURE_UNMATCHED: not capturing */
  *graph = g;
  Log("capture_end stream=%d graph=%d nodes=%d", StreamId(s), g->id, g->num_nodes);
  return 0;
}

API CUresult cuGraphInstantiateWithFlags(FakeGraphExec** exec, FakeGraph* g,
                                         unsigned long long flags) {
  REQUIRE_CTX("cuGraphInstantiateWithFlags");
  FakeGraphExec* e = (FakeGraphExec*)calloc(1, sizeof(FakeGraphExec));
  pthread_mutex_lock(&g_graph_mu);
  e->id = g_next_graph_exec++;
  ++g_live_graph_execs;
  pthread_mutex_unlock(&g_graph_mu);
  e->graph = *g;
  e->graph.cap = g->num_nodes;
  e->graph.nodes = (FakeGraphNode*)malloc(sizeof(FakeGraphNode) * (size_t)(g->num_nodes + 1));
  memcpy(e->graph.nodes, g->nodes, sizeof(FakeGraphNode) * (size_t)g->num_nodes);
  *exec = e;
  Log("graph_instantiate graph=%d exec=%d nodes=%d flags=%llu", g->id, e->id, g->num_nodes, flags);
  return 0;
}

API CUresult cuGraphLaunch(FakeGraphExec* e, Stream* s) {
  REQUIRE_CTX("cuGraphLaunch");
  if (CapturingGraph(s)) return 900; /* a graph launched into a capture: not modelled */
  Log("graph_launch exec=%d stream=%d nodes=%d ctx=%d", e->id, StreamId(s), e->graph.num_nodes,
      CtxId());
  for (int i = 0; i < e->graph.num_nodes; ++i) {
    const FakeGraphNode* n = &e->graph.nodes[i];
    if (n->is_copy) memmove(n->dst, n->src, n->bytes);
    char text[2048];
    DescribeNode(n, text, sizeof(text));
    Log("replay exec=%d node=%d stream=%d %s", e->id, i, StreamId(s), text);
  }
  return 0;
}

API CUresult cuGraphExecDestroy(FakeGraphExec* e) {
  Log("graph_exec_destroy exec=%d", e->id);
  pthread_mutex_lock(&g_graph_mu);
  --g_live_graph_execs;
  pthread_mutex_unlock(&g_graph_mu);
  free(e->graph.nodes);
  free(e);
  return 0;
}

API CUresult cuGraphDestroy(FakeGraph* g) {
  Log("graph_destroy graph=%d", g->id);
  free(g->nodes);
  free(g);
  return 0;
}

#endif /* FAKE_CUDA_NO_GRAPHS */

/* ------------------------------------------------------------------------------ TMA tensor maps
 *
 * cuTensorMapEncodeTiled logs every argument and writes a recognizable 128-byte map: word 0 the
 * magic below, words 1..14 what was encoded, word 15 the FNV-1a of words 0..14.  A launch whose
 * recorded parameters (fake_cuda_expect_params) include such a map logs a `launch_tensor_map`
 * line with the FNV-1a of all 128 bytes it received, so a test can match it with the encode.
 * Built with -DFAKE_CUDA_NO_TENSOR_MAP, the symbol is absent, as in drivers older than CUDA 12.
 *   FAKE_CUDA_TENSOR_MAP_ERROR=<n>  cuTensorMapEncodeTiled returns n
 */
#define FAKE_TENSOR_MAP_MAGIC 0x50414d54454b4146ULL /* "FAKETMAP" */

static void LogTensorMapParams(const char* kernel, void** params, int n) {
  for (int i = 0; i < n; ++i) {
    uint64_t words[16];
    memcpy(words, params[i], 8);
    if (words[0] != FAKE_TENSOR_MAP_MAGIC) continue;
    memcpy(words, params[i], sizeof(words)); /* what the driver copies for a CUtensorMap param */
    int intact = Fnv1a((const char*)words, 15 * 8) == words[15];
    Log("launch_tensor_map kernel=%s param=%d fnv=%016llx intact=%d", kernel, i,
        (unsigned long long)Fnv1a((const char*)words, sizeof(words)), intact);
  }
}

#ifndef FAKE_CUDA_NO_TENSOR_MAP
static int g_tensor_maps_encoded = 0;

static void JoinU64(char* out, size_t cap, const uint64_t* v, unsigned n) {
  size_t used = 0;
  out[0] = '\0';
  for (unsigned i = 0; i < n && used < cap; ++i) {
    used +=
        (size_t)snprintf(out + used, cap - used, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
  }
}

static void JoinU32(char* out, size_t cap, const unsigned* v, unsigned n) {
  uint64_t wide[5] = {0};
  for (unsigned i = 0; i < n && i < 5; ++i) wide[i] = v[i];
  JoinU64(out, cap, wide, n < 5 ? n : 5);
}

API CUresult cuTensorMapEncodeTiled(void* map, int dtype, unsigned rank, void* address,
                                    const uint64_t* dims, const uint64_t* strides,
                                    const unsigned* box, const unsigned* element_strides,
                                    int interleave, int swizzle, int l2_promotion, int oob_fill) {
  int forced_error = EnvInt("FAKE_CUDA_TENSOR_MAP_ERROR", 0);
  if (forced_error) return forced_error;
  /* The driver's own minimal checks; the runtime is expected to have rejected these already. */
  if (!map || !address || rank < 1 || rank > 5 || ((uintptr_t)address & 15) != 0) return 1;
  char sdims[128], sstrides[128], sbox[128], selem[128];
  JoinU64(sdims, sizeof(sdims), dims, rank);
  JoinU64(sstrides, sizeof(sstrides), strides, rank - 1);
  JoinU32(sbox, sizeof(sbox), box, rank);
  JoinU32(selem, sizeof(selem), element_strides, rank);
  uint64_t words[16] = {FAKE_TENSOR_MAP_MAGIC, (uint64_t)(uintptr_t)address,
                        (uint64_t)dtype | ((uint64_t)rank << 32)};
  for (unsigned i = 0; i < rank; ++i) {
    words[3 + i] = dims[i];
    words[8 + i] = ((uint64_t)box[i] << 32) | element_strides[i];
  }
  words[13] = (uint64_t)interleave | ((uint64_t)swizzle << 16) | ((uint64_t)l2_promotion << 32) |
              ((uint64_t)oob_fill << 48);
  words[14] = (uint64_t)++g_tensor_maps_encoded;
  words[15] = Fnv1a((const char*)words, 15 * 8);
  memcpy(map, words, sizeof(words));
  Log("tensor_map_encode dtype=%d rank=%u address=%llx dims=%s strides=%s box=%s "
      "element_strides=%s interleave=%d swizzle=%d l2_promotion=%d oob_fill=%d fnv=%016llx",
      dtype, rank, (unsigned long long)(uintptr_t)address, sdims, rank > 1 ? sstrides : "-", sbox,
      selem, interleave, swizzle, l2_promotion, oob_fill,
      (unsigned long long)Fnv1a((const char*)words, sizeof(words)));
  return 0;
}
#endif /* FAKE_CUDA_NO_TENSOR_MAP */
