/*
 * A fake CUDA driver (libcuda.so.1 stand-in) for testing tvm-runtime-cuda without a GPU.
 *
 * It implements exactly the driver entry points the backend resolves, on host memory, and
 * records every launch, copy, allocation and attribute change in a text log that tests read
 * through fake_cuda_log().  Like the real driver it needs a current context for allocations,
 * module loads and launches, and rejects a launch whose function belongs to another context, so
 * context handling bugs show up here too.  Nothing is executed: kernels are only recorded.
 *
 * Environment (read at cuInit):
 *   FAKE_CUDA_INIT_ERROR=<n>    cuInit returns n
 *   FAKE_CUDA_DEVICES=<n>       number of devices (default 1, at most 8)
 *   FAKE_CUDA_CC=<major>.<minor> compute capability (default 8.0)
 *   FAKE_CUDA_DRIVER_VERSION=<n> cuDriverGetVersion (default 13000)
 *   FAKE_CUDA_REJECT_LOADS=<n>  the first n module loads fail with CUDA_ERROR_INVALID_IMAGE
 */
#define FAKE_DRIVER_PREFIX fake_cuda
#include "../../fake_drivers/fake_log.h"

#define MAX_DEVICES 8

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

typedef struct {
  int device;
} Ctx;
typedef struct {
  int id;
} Stream;
typedef struct {
  int id;
  int recorded;
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

static int g_initialized = 0;
static int g_num_devices = 1;
static int g_cc_major = 8, g_cc_minor = 0;
static int g_driver_version = 13000;
static int g_reject_loads = 0;
static Ctx g_ctx[MAX_DEVICES];
static __thread Ctx* t_current = NULL;
static __thread Ctx* t_stack[16];
static __thread int t_depth = 0;
static int g_next_stream = 1, g_next_event = 1;
static double g_clock_ms = 0;

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
static int StreamId(Stream* s) { return s ? s->id : 0; }

#define REQUIRE_INIT() \
  if (!g_initialized) return 3 /* CUDA_ERROR_NOT_INITIALIZED */
#define REQUIRE_CTX() \
  if (!t_current) return 201 /* CUDA_ERROR_INVALID_CONTEXT */

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
  for (int i = 0; i < MAX_DEVICES; ++i) g_ctx[i].device = i;
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
} kErrorNames[] = {
    {0, "CUDA_SUCCESS"},
    {1, "CUDA_ERROR_INVALID_VALUE"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"},
    {100, "CUDA_ERROR_NO_DEVICE"},
    {200, "CUDA_ERROR_INVALID_IMAGE"},
    {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {400, "CUDA_ERROR_INVALID_HANDLE"},
    {500, "CUDA_ERROR_NOT_FOUND"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
};

API CUresult cuGetErrorName(CUresult e, const char** s) {
  for (size_t i = 0; i < sizeof(kErrorNames) / sizeof(kErrorNames[0]); ++i) {
    if (kErrorNames[i].code == e) {
      *s = kErrorNames[i].name;
      return 0;
    }
  }
  *s = NULL;
  return 1;
}

API CUresult cuGetErrorString(CUresult e, const char** s) {
  const char* name = NULL;
  if (cuGetErrorName(e, &name) != 0) return 1;
  *s = "fake driver error";
  return 0;
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
  if (d < 0 || d >= g_num_devices) return 101;
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
  if (t_depth == 0) return 201;
  if (ctx) *ctx = t_current;
  t_current = t_stack[--t_depth];
  return 0;
}

/* ------------------------------------------------------------------------------ memory */

API CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  REQUIRE_CTX();
  if (n == 0) return 1;
  if (n > ((size_t)1 << 40)) return 2;
  void* mem = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!mem) return 2;
  *p = (CUdeviceptr)(uintptr_t)mem;
  ++g_live_allocations;
  Log("alloc ctx=%d bytes=%zu", CtxId(), n);
  return 0;
}

API CUresult cuMemFree_v2(CUdeviceptr p) {
  REQUIRE_CTX();
  free((void*)(uintptr_t)p);
  --g_live_allocations;
  Log("free ctx=%d", CtxId());
  return 0;
}

API CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  REQUIRE_CTX();
  *free_bytes = (size_t)15 << 30;
  *total = (size_t)16 << 30;
  return 0;
}

API CUresult cuMemHostAlloc(void** p, size_t n, unsigned flags) {
  REQUIRE_CTX();
  *p = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
  ++g_live_allocations;
  Log("host_alloc bytes=%zu flags=%u", n, flags);
  return *p ? 0 : 2;
}

API CUresult cuMemFreeHost(void* p) {
  free(p);
  --g_live_allocations;
  Log("host_free");
  return 0;
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, Stream* s) {
  if (FakeCaptureCopy(s, "htod", (void*)(uintptr_t)dst, src, n)) return 0;
  REQUIRE_CTX();
  memcpy((void*)(uintptr_t)dst, src, n);
  Log("copy htod bytes=%zu stream=%d ctx=%d", n, StreamId(s), CtxId());
  return 0;
}

API CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, Stream* s) {
  if (FakeCaptureCopy(s, "dtoh", dst, (const void*)(uintptr_t)src, n)) return 0;
  REQUIRE_CTX();
  memcpy(dst, (const void*)(uintptr_t)src, n);
  Log("copy dtoh bytes=%zu stream=%d ctx=%d", n, StreamId(s), CtxId());
  return 0;
}

API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, Stream* s) {
  if (FakeCaptureCopy(s, "dtod", (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n)) return 0;
  REQUIRE_CTX();
  memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n);
  Log("copy dtod bytes=%zu stream=%d ctx=%d", n, StreamId(s), CtxId());
  return 0;
}

API CUresult cuMemcpyPeerAsync(CUdeviceptr dst, Ctx* dst_ctx, CUdeviceptr src, Ctx* src_ctx,
                               size_t n, Stream* s) {
  if (FakeCaptureCopy(s, "peer", (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n)) return 0;
  REQUIRE_CTX();
  memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n);
  Log("copy peer bytes=%zu from=%d to=%d stream=%d", n, src_ctx->device, dst_ctx->device,
      StreamId(s));
  return 0;
}

/* ------------------------------------------------------------------------------ streams, events */

API CUresult cuStreamCreate(Stream** s, unsigned flags) {
  REQUIRE_CTX();
  *s = (Stream*)malloc(sizeof(Stream));
  (*s)->id = g_next_stream++;
  Log("stream_create id=%d flags=%u ctx=%d", (*s)->id, flags, CtxId());
  return 0;
}

API CUresult cuStreamDestroy_v2(Stream* s) {
  Log("stream_destroy id=%d", StreamId(s));
  free(s);
  return 0;
}

API CUresult cuStreamSynchronize(Stream* s) {
  REQUIRE_CTX();
  Log("stream_sync id=%d ctx=%d", StreamId(s), CtxId());
  return 0;
}

API CUresult cuStreamWaitEvent(Stream* s, Event* e, unsigned flags) {
  Log("stream_wait stream=%d event=%d", StreamId(s), e->id);
  return 0;
}

API CUresult cuEventCreate(Event** e, unsigned flags) {
  REQUIRE_CTX();
  *e = (Event*)calloc(1, sizeof(Event));
  (*e)->id = g_next_event++;
  Log("event_create id=%d flags=%u", (*e)->id, flags);
  return 0;
}

API CUresult cuEventDestroy_v2(Event* e) {
  Log("event_destroy id=%d", e->id);
  free(e);
  return 0;
}

API CUresult cuEventRecord(Event* e, Stream* s) {
  REQUIRE_CTX();
  g_clock_ms += 1.25;  // every recorded event is 1.25 ms after the previous one
  e->recorded = 1;
  e->when_ms = g_clock_ms;
  Log("event_record id=%d stream=%d", e->id, StreamId(s));
  return 0;
}

API CUresult cuEventSynchronize(Event* e) { return e->recorded ? 0 : 600; }

API CUresult cuEventElapsedTime_v2(float* ms, Event* start, Event* end) {
  if (!start->recorded || !end->recorded) return 600; /* CUDA_ERROR_NOT_READY */
  *ms = (float)(end->when_ms - start->when_ms);
  return 0;
}

/* ------------------------------------------------------------------------------ modules */

API CUresult cuModuleLoadDataEx(Module** m, const void* image, unsigned n, int* opts, void** vals) {
  REQUIRE_CTX();
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
    return 200; /* CUDA_ERROR_INVALID_IMAGE */
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
  REQUIRE_CTX();
  if (m->ctx != t_current) return 201;
  Log("module_unload ctx=%d", CtxId());
  free(m->image);
  free(m);
  return 0;
}

static int Contains(const Module* m, const char* needle) {
  size_t n = strlen(needle);
  if (n == 0 || n > m->size) return 0;
  for (size_t i = 0; i + n <= m->size; ++i) {
    if (memcmp(m->image + i, needle, n) == 0) return 1;
  }
  return 0;
}

API CUresult cuModuleGetFunction(Function** f, Module* m, const char* name) {
  char needle[300];
  snprintf(needle, sizeof(needle), m->is_ptx ? ".entry %s(" : ".text.%s", name);
  if (!Contains(m, needle)) return 500; /* CUDA_ERROR_NOT_FOUND */
  *f = (Function*)calloc(1, sizeof(Function));
  (*f)->module = m;
  snprintf((*f)->name, sizeof((*f)->name), "%s", name);
  return 0;
}

API CUresult cuFuncSetAttribute(Function* f, int attr, int value) {
  Log("func_attr kernel=%s attr=%d value=%d", f->name, attr, value);
  return 0;
}

static void LogTensorMapParams(const char* kernel, void** params, int n); /* TMA block, below */

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

API CUresult cuLaunchKernel(Function* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned smem, Stream* s, void** params,
                            void** extra) {
  if (FakeCaptureLaunch(s, f, (const unsigned[7]){gx, gy, gz, bx, by, bz, smem}, params)) return 0;
  REQUIRE_CTX();
  if (f->module->ctx != t_current) return 400; /* launched in another device's context */
  if ((unsigned long long)bx * by * bz > 1024) return 1;
  LogLaunch("launch", f, gx, gy, gz, bx, by, bz, smem, s, params, "");
  return 0;
}

API CUresult cuLaunchKernelEx(const LaunchConfig* c, Function* f, void** params, void** extra) {
  if (FakeCaptureLaunch(c->stream, f,
                        (const unsigned[7]){c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->smem},
                        params))
    return 0;
  REQUIRE_CTX();
  if (f->module->ctx != t_current) return 400;
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
  REQUIRE_CTX();
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
  REQUIRE_CTX();
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
  REQUIRE_CTX();
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
