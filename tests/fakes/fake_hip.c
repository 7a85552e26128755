/*
 * A fake HIP runtime (libamdhip64.so stand-in) for testing tvm-runtime-rocm without an AMD GPU.
 *
 * It implements exactly the entry points the backend resolves, on host memory (copies really
 * copy), and records every allocation, copy, stream, event, module load and launch in a text log
 * (fake_log.h) that tests read through fake_hip_log().  Like the real runtime it
 * keeps a current device per thread and rejects a launch on a device the code object was not
 * loaded on.  Launches record their packed argument buffer byte for byte; nothing is executed.
 *
 * Where a lenient fake would hide a bug, it is as strict as HIP:
 *   - work is asynchronous per stream: a copy between device and pinned (hipHostMalloc) memory
 *     is queued on its stream and lands only when that stream is synchronized (hipStream- or
 *     hipEventSynchronize, a wait on an event of it, hipFree/hipHostFree, stream destruction),
 *     so a missing synchronization reads stale data.  A copy from or to pageable host memory is
 *     synchronous, as HIP makes it (the stream's earlier work lands first).  Other fakes (the
 *     fake NCCL) queue their work on a stream through fake_hip_stream_enqueue();
 *   - a code object whose processor (e_flags) is not the device's is refused with
 *     hipErrorNoBinaryForGpu;
 *   - a kernel is found only by its exact name in the code object's metadata (the
 *     NT_AMDGPU_METADATA note), and only if its kernel descriptor symbol (<name>.kd) exists;
 *   - a launch whose argument buffer does not match the kernel's .kernarg_segment_size (from the
 *     same metadata; hidden arguments may be left out) is refused with hipErrorInvalidValue.
 *
 * Environment (read at hipInit):
 *   FAKE_HIP_INIT_ERROR=<n>   hipInit returns n
 *   FAKE_HIP_DEVICES=<n>      number of devices (default 1, at most 8; 0: hipErrorNoDevice)
 *   FAKE_HIP_ARCH=<name>      gcnArchName (default "gfx90a:sramecc+:xnack-")
 *   FAKE_HIP_WARP=<n>         wavefront size (default 64)
 *   FAKE_HIP_REJECT_LOADS=<n> the first n module loads fail with hipErrorNoBinaryForGpu
 */
#define FAKE_DRIVER_PREFIX fake_hip
#include "fake_log.h"

#define MAX_DEVICES 8
#define RUNTIME_VERSION 60342134 /* ROCm 6.3 */

typedef int hipError_t;

typedef struct Stream Stream;
typedef struct {
  int id;
  int recorded;
  double when_ms;
  Stream* stream; /* where it was last recorded */
} Event;
typedef struct {
  int device;
  char* image;
  size_t size;
} Module;
typedef struct {
  Module* module;
  char name[256];
  uint64_t kernarg_size, explicit_end; /* from the code object's metadata */
} Function;

static int g_initialized = 0;
static int g_num_devices = 1;
static int g_warp = 64;
static char g_arch[256] = "gfx90a:sramecc+:xnack-";
static int g_reject_loads = 0;
static __thread int t_device = 0;

/* The calling thread's current device, for the fake NCCL (RCCL). */
API int fake_hip_current_device(void) { return t_device; }
static int g_next_stream = 1, g_next_event = 1;
static double g_clock_ms = 0;


#define REQUIRE_INIT() \
  if (!g_initialized) return 3 /* hipErrorNotInitialized */
#define REQUIRE_DEVICE(d) \
  if ((d) < 0 || (d) >= g_num_devices) return 101 /* hipErrorInvalidDevice */

/* ------------------------------------------------------------------------------ init, errors */

API hipError_t hipInit(unsigned flags) {
  int err = EnvInt("FAKE_HIP_INIT_ERROR", 0);
  if (err) return err;
  g_num_devices = EnvInt("FAKE_HIP_DEVICES", 1);
  if (g_num_devices > MAX_DEVICES) g_num_devices = MAX_DEVICES;
  g_warp = EnvInt("FAKE_HIP_WARP", 64);
  const char* arch = getenv("FAKE_HIP_ARCH");
  if (arch && *arch) snprintf(g_arch, sizeof(g_arch), "%s", arch);
  g_reject_loads = EnvInt("FAKE_HIP_REJECT_LOADS", 0);
  g_initialized = 1;
  Log("init flags=%u", flags);
  return 0;
}

API hipError_t hipRuntimeGetVersion(int* v) {
  *v = RUNTIME_VERSION;
  return 0;
}

API hipError_t hipDriverGetVersion(int* v) {
  *v = RUNTIME_VERSION;
  return 0;
}

static const struct {
  int code;
  const char* name;
  const char* text;
} kErrors[] = {
    {0, "hipSuccess", "no error"},
    {1, "hipErrorInvalidValue", "invalid argument"},
    {2, "hipErrorOutOfMemory", "out of memory"},
    {3, "hipErrorNotInitialized", "initialization error"},
    {100, "hipErrorNoDevice", "no ROCm-capable device is detected"},
    {101, "hipErrorInvalidDevice", "invalid device ordinal"},
    {209, "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"},
    {400, "hipErrorInvalidHandle", "invalid resource handle"},
    {500, "hipErrorNotFound", "named symbol not found"},
};

static int ErrorIndex(hipError_t e) {
  for (size_t i = 0; i < sizeof(kErrors) / sizeof(kErrors[0]); ++i) {
    if (kErrors[i].code == e) return (int)i;
  }
  return -1;
}

API const char* hipGetErrorName(hipError_t e) {
  int i = ErrorIndex(e);
  return i < 0 ? "hipErrorUnknown" : kErrors[i].name;
}

API const char* hipGetErrorString(hipError_t e) {
  int i = ErrorIndex(e);
  return i < 0 ? "unknown error" : kErrors[i].text;
}

/* ------------------------------------------------------------------------------ devices */

API hipError_t hipGetDeviceCount(int* n) {
  REQUIRE_INIT();
  *n = g_num_devices;
  return g_num_devices > 0 ? 0 : 100;
}

API hipError_t hipDeviceGetName(char* name, int len, int d) {
  REQUIRE_DEVICE(d);
  snprintf(name, (size_t)len, "Fake AMD GPU %d", d);
  return 0;
}

API hipError_t hipDeviceGetAttribute(int* v, int attr, int d) {
  REQUIRE_DEVICE(d);
  switch (attr) {
    case 5:
      *v = 1700000;
      break; /* ClockRate, kHz */
    case 19:
      *v = 8 << 20;
      break; /* L2CacheSize */
    case 23:
      *v = 9;
      break; /* ComputeCapabilityMajor */
    case 26:
    case 27:
      *v = 1024;
      break; /* MaxBlockDimX, Y */
    case 28:
      *v = 1024;
      break; /* MaxBlockDimZ */
    case 56:
      *v = 1024;
      break; /* MaxThreadsPerBlock */
    case 57:
      *v = 2048;
      break; /* MaxThreadsPerMultiProcessor */
    case 61:
      *v = 0;
      break; /* ComputeCapabilityMinor */
    case 63:
      *v = 104;
      break; /* MultiprocessorCount */
    case 71:
      *v = 65536;
      break; /* MaxRegistersPerBlock */
    case 74:
      *v = 65536;
      break; /* MaxSharedMemoryPerBlock */
    case 87:
      *v = g_warp;
      break; /* WarpSize */
    case 10002:
      *v = 65536;
      break; /* MaxSharedMemoryPerMultiprocessor */
    default:
      return 1;
  }
  return 0;
}

/* hipDeviceProp_tR0600: name at 0, totalGlobalMem at 288, gcnArchName at 1160. */
API hipError_t hipGetDevicePropertiesR0600(void* prop, int d) {
  REQUIRE_DEVICE(d);
  char* p = (char*)prop;
  memset(p, 0, 1472);
  snprintf(p, 256, "Fake AMD GPU %d", d);
  size_t total = (size_t)64 << 30;
  memcpy(p + 288, &total, sizeof(total));
  snprintf(p + 1160, 256, "%s", g_arch);
  return 0;
}

API hipError_t hipDeviceTotalMem(size_t* bytes, int d) {
  REQUIRE_DEVICE(d);
  *bytes = (size_t)64 << 30;
  return 0;
}

API hipError_t hipMemGetInfo(size_t* free_bytes, size_t* total) {
  *free_bytes = (size_t)60 << 30;
  *total = (size_t)64 << 30;
  return 0;
}

API hipError_t hipSetDevice(int d) {
  REQUIRE_INIT();
  REQUIRE_DEVICE(d);
  t_device = d;
  Log("set_device device=%d", d);
  return 0;
}

API hipError_t hipGetDevice(int* d) {
  REQUIRE_INIT();
  *d = t_device;
  return 0;
}

/* ------------------------------------------------------------------------------ memory */

/* Every live hipMalloc / hipHostMalloc range, so a copy knows pageable host memory from device
 * or pinned memory (only the latter are asynchronous). */
typedef struct Range {
  char* p;
  size_t n;
  int pinned;
  struct Range* next;
} Range;
static Range* g_ranges = NULL;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* ranges and stream queues */

static void AddRange(void* p, size_t n, int pinned) {
  Range* r = (Range*)calloc(1, sizeof(Range));
  r->p = (char*)p;
  r->n = n;
  r->pinned = pinned;
  pthread_mutex_lock(&g_mu);
  r->next = g_ranges;
  g_ranges = r;
  pthread_mutex_unlock(&g_mu);
}

static void RemoveRange(void* p) {
  pthread_mutex_lock(&g_mu);
  for (Range** r = &g_ranges; *r; r = &(*r)->next) {
    if ((*r)->p == (char*)p) {
      Range* dead = *r;
      *r = dead->next;
      free(dead);
      break;
    }
  }
  pthread_mutex_unlock(&g_mu);
}

/* 1 when [p, p + n) lies in device or pinned memory (the runtime's own allocations). */
static int RuntimeMemory(const void* p, size_t n) {
  int found = 0;
  pthread_mutex_lock(&g_mu);
  for (Range* r = g_ranges; r && !found; r = r->next) {
    found = (const char*)p >= r->p && (const char*)p + n <= r->p + r->n;
  }
  pthread_mutex_unlock(&g_mu);
  return found;
}

/* ------------------------------------------------------------------------------ stream queues */

typedef struct Op {
  void (*run)(void*);
  void* arg;
  struct Op* next;
} Op;

struct Stream {
  int id;
  int device;
  Op *head, *tail;
};
static Stream g_null_streams[MAX_DEVICES]; /* each device's null stream (id 0) */

static Stream* Resolve(Stream* s) { return s ? s : &g_null_streams[t_device]; }
static int StreamId(Stream* s) { return s ? s->id : 0; }

static void Enqueue(Stream* s, void (*run)(void*), void* arg) {
  Op* op = (Op*)calloc(1, sizeof(Op));
  op->run = run;
  op->arg = arg;
  pthread_mutex_lock(&g_mu);
  if (s->tail) {
    s->tail->next = op;
  } else {
    s->head = op;
  }
  s->tail = op;
  pthread_mutex_unlock(&g_mu);
}

/* Runs the stream's queued work in order: what the GPU would have finished by a sync. */
static void Drain(Stream* s) {
  for (;;) {
    pthread_mutex_lock(&g_mu);
    Op* op = s->head;
    if (op) {
      s->head = op->next;
      if (!s->head) s->tail = NULL;
    }
    pthread_mutex_unlock(&g_mu);
    if (!op) return;
    op->run(op->arg);
    free(op);
  }
}

/* Created streams, so a device-wide synchronization (hipFree) reaches every queue. */
#define MAX_STREAMS 256
static Stream* g_streams[MAX_STREAMS];

static void DrainAll(void) {
  for (int d = 0; d < MAX_DEVICES; ++d) Drain(&g_null_streams[d]);
  for (int i = 0; i < MAX_STREAMS; ++i) {
    pthread_mutex_lock(&g_mu);
    Stream* s = g_streams[i];
    pthread_mutex_unlock(&g_mu);
    if (s) Drain(s);
  }
}

/* For other fakes (the fake NCCL): queue `run(arg)` on `stream` (NULL: the calling thread's
 * device's null stream), or run the stream's queued work now (fake_hip_stream_flush). */
API void fake_hip_stream_enqueue(void* stream, void (*run)(void*), void* arg) {
  Enqueue(Resolve((Stream*)stream), run, arg);
}
API void fake_hip_stream_flush(void* stream) { Drain(Resolve((Stream*)stream)); }

/* Work still queued on any stream: what a missing synchronization left behind. */
API int fake_hip_pending_ops(void) {
  int n = 0;
  pthread_mutex_lock(&g_mu);
  for (int d = 0; d < MAX_DEVICES; ++d) {
    for (Op* op = g_null_streams[d].head; op; op = op->next) ++n;
  }
  for (int i = 0; i < MAX_STREAMS; ++i) {
    for (Op* op = g_streams[i] ? g_streams[i]->head : NULL; op; op = op->next) ++n;
  }
  pthread_mutex_unlock(&g_mu);
  return n;
}

/* ------------------------------------------------------------------------------ allocations */

API hipError_t hipMalloc(void** p, size_t n) {
  REQUIRE_INIT();
  if (n == 0) return 1;
  if (n > ((size_t)1 << 40)) return 2;
  *p = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!*p) return 2;
  AddRange(*p, n, 0);
  ++g_live_allocations;
  Log("alloc device=%d bytes=%zu", t_device, n);
  return 0;
}

API hipError_t hipFree(void* p) {
  DrainAll(); /* hipFree synchronizes the device */
  RemoveRange(p);
  free(p);
  --g_live_allocations;
  Log("free");
  return 0;
}

API hipError_t hipHostMalloc(void** p, size_t n, unsigned flags) {
  *p = malloc(n);
  AddRange(*p, n, 1);
  ++g_live_allocations;
  Log("host_alloc bytes=%zu flags=%u", n, flags);
  return 0;
}

API hipError_t hipHostFree(void* p) {
  DrainAll();
  RemoveRange(p);
  free(p);
  --g_live_allocations;
  Log("host_free");
  return 0;
}

typedef struct {
  void* dst;
  const void* src;
  char* staged; /* a pageable source, read at the call as HIP does */
  size_t n;
} Copy;

static void RunCopy(void* arg) {
  Copy* c = (Copy*)arg;
  memcpy(c->dst, c->staged ? c->staged : c->src, c->n);
  free(c->staged);
  free(c);
}

/* Queues the copy on `s`; with pageable host memory on either side it completes before return. */
static void CopyOn(Stream* s, void* dst, const void* src, size_t n) {
  Copy* c = (Copy*)calloc(1, sizeof(Copy));
  c->dst = dst;
  c->src = src;
  c->n = n;
  int src_pageable = !RuntimeMemory(src, n), dst_pageable = !RuntimeMemory(dst, n);
  if (src_pageable) {
    c->staged = (char*)malloc(n ? n : 1);
    memcpy(c->staged, src, n);
  }
  Enqueue(s, RunCopy, c);
  if (src_pageable || dst_pageable) Drain(s);
}

API hipError_t hipMemcpyAsync(void* dst, const void* src, size_t n, int kind, Stream* s) {
  static const char* kKinds[] = {"htoh", "htod", "dtoh", "dtod", "default"};
  if (kind < 0 || kind > 4) return 1;
  Log("copy %s bytes=%zu stream=%d device=%d", kKinds[kind], n, StreamId(s), t_device);
  CopyOn(Resolve(s), dst, src, n);
  return 0;
}

API hipError_t hipMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                                  size_t n, Stream* s) {
  REQUIRE_DEVICE(dst_device);
  REQUIRE_DEVICE(src_device);
  Log("copy peer bytes=%zu from=%d to=%d stream=%d", n, src_device, dst_device, StreamId(s));
  CopyOn(Resolve(s), dst, src, n);
  return 0;
}

/* ------------------------------------------------------------------------------ streams, events */

API hipError_t hipStreamCreateWithFlags(Stream** s, unsigned flags) {
  *s = (Stream*)calloc(1, sizeof(Stream));
  (*s)->device = t_device;
  pthread_mutex_lock(&g_mu);
  (*s)->id = g_next_stream++;
  for (int i = 0; i < MAX_STREAMS; ++i) {
    if (!g_streams[i]) {
      g_streams[i] = *s;
      break;
    }
  }
  pthread_mutex_unlock(&g_mu);
  Log("stream_create id=%d flags=%u device=%d", (*s)->id, flags, t_device);
  return 0;
}

API hipError_t hipStreamDestroy(Stream* s) {
  Log("stream_destroy id=%d", StreamId(s));
  Drain(s); /* queued work still completes */
  pthread_mutex_lock(&g_mu);
  for (int i = 0; i < MAX_STREAMS; ++i) {
    if (g_streams[i] == s) g_streams[i] = NULL;
  }
  pthread_mutex_unlock(&g_mu);
  free(s);
  return 0;
}

API hipError_t hipStreamSynchronize(Stream* s) {
  Log("stream_sync id=%d device=%d", StreamId(s), t_device);
  Drain(Resolve(s));
  return 0;
}

API hipError_t hipStreamWaitEvent(Stream* s, Event* e, unsigned flags) {
  Log("stream_wait stream=%d event=%d", StreamId(s), e->id);
  /* What `s` runs next comes after the event's work: that work lands first. */
  if (e->stream) Drain(e->stream);
  return 0;
}

API hipError_t hipEventCreateWithFlags(Event** e, unsigned flags) {
  *e = (Event*)calloc(1, sizeof(Event));
  (*e)->id = g_next_event++;
  Log("event_create id=%d flags=%u", (*e)->id, flags);
  return 0;
}

API hipError_t hipEventDestroy(Event* e) {
  Log("event_destroy id=%d", e->id);
  free(e);
  return 0;
}

API hipError_t hipEventRecord(Event* e, Stream* s) {
  /* Each record is 1.25 ms after the previous one, so elapsed times are predictable. */
  g_clock_ms += 1.25;
  e->recorded = 1;
  e->when_ms = g_clock_ms;
  e->stream = Resolve(s);
  Log("event_record id=%d stream=%d", e->id, StreamId(s));
  return 0;
}

API hipError_t hipEventSynchronize(Event* e) {
  if (!e->recorded) return 600;
  if (e->stream) Drain(e->stream);
  return 0;
}

API hipError_t hipEventElapsedTime(float* ms, Event* start, Event* end) {
  if (!start->recorded || !end->recorded) return 600; /* hipErrorNotReady */
  *ms = (float)(end->when_ms - start->when_ms);
  return 0;
}

/* ------------------------------------------------------------------------------ code objects */

/* EF_AMDGPU_MACH (e_flags & 0xff) of the processors the tests use. */
static const struct {
  unsigned mach;
  const char* name;
} kMachs[] = {{0x2f, "gfx906"}, {0x30, "gfx908"},  {0x3f, "gfx90a"},  {0x4c, "gfx942"},
              {0x4f, "gfx950"}, {0x36, "gfx1030"}, {0x41, "gfx1100"}, {0x48, "gfx1200"}};

static const char* MachName(unsigned mach) {
  for (size_t i = 0; i < sizeof(kMachs) / sizeof(kMachs[0]); ++i) {
    if (kMachs[i].mach == mach) return kMachs[i].name;
  }
  return "unknown";
}

/* 1 when the device's gcnArchName (e.g. "gfx90a:sramecc+:xnack-") names processor `name`. */
static int DeviceIs(const char* name) {
  size_t n = strlen(name);
  return strncmp(g_arch, name, n) == 0 && (g_arch[n] == '\0' || g_arch[n] == ':');
}

/* A minimal MessagePack reader for the NT_AMDGPU_METADATA note: enough to walk maps, arrays,
 * strings and integers, and skip anything else. */
typedef struct {
  const unsigned char *p, *end;
  int bad;
} Msg;

static uint64_t Big(Msg* m, int bytes) {
  uint64_t v = 0;
  if (m->end - m->p < bytes) {
    m->bad = 1;
    return 0;
  }
  for (int i = 0; i < bytes; ++i) v = (v << 8) | *m->p++;
  return v;
}

enum { kMsgOther, kMsgInt, kMsgStr, kMsgArray, kMsgMap };

/* Reads one header: its kind and its value (integer), length (string) or count (array, map).
 * A string's bytes start at m->p; the caller consumes them. */
static int MsgHead(Msg* m, uint64_t* v, const char** str) {
  if (m->p >= m->end) {
    m->bad = 1;
    return kMsgOther;
  }
  unsigned t = *m->p++;
  *v = 0;
  if (t <= 0x7f) return *v = t, kMsgInt;
  if (t >= 0xe0) return *v = (uint64_t)(int64_t)(int8_t)t, kMsgInt;
  if ((t & 0xf0) == 0x80) return *v = t & 0x0f, kMsgMap;
  if ((t & 0xf0) == 0x90) return *v = t & 0x0f, kMsgArray;
  if ((t & 0xe0) == 0xa0) *v = t & 0x1f;
  switch (t) {
    case 0xcc: case 0xd0: return *v = Big(m, 1), kMsgInt;
    case 0xcd: case 0xd1: return *v = Big(m, 2), kMsgInt;
    case 0xce: case 0xd2: return *v = Big(m, 4), kMsgInt;
    case 0xcf: case 0xd3: return *v = Big(m, 8), kMsgInt;
    case 0xd9: *v = Big(m, 1); break;
    case 0xda: *v = Big(m, 2); break;
    case 0xdb: *v = Big(m, 4); break;
    case 0xdc: return *v = Big(m, 2), kMsgArray;
    case 0xdd: return *v = Big(m, 4), kMsgArray;
    case 0xde: return *v = Big(m, 2), kMsgMap;
    case 0xdf: return *v = Big(m, 4), kMsgMap;
    case 0xc4: case 0xc5: case 0xc6: /* bin: skipped like a string */
      *v = Big(m, t == 0xc4 ? 1 : t == 0xc5 ? 2 : 4);
      m->p += *v <= (uint64_t)(m->end - m->p) ? *v : (uint64_t)(m->end - m->p);
      return kMsgOther;
    case 0xca: m->p += 4; return kMsgOther;
    case 0xcb: m->p += 8; return kMsgOther;
    default:
      if ((t & 0xe0) != 0xa0) return kMsgOther; /* nil, bool, ext: nothing more to read */
  }
  if (*v > (uint64_t)(m->end - m->p)) {
    m->bad = 1;
    return kMsgOther;
  }
  *str = (const char*)m->p;
  m->p += *v;
  return kMsgStr;
}

static void MsgSkip(Msg* m) {
  uint64_t v;
  const char* str;
  int kind = MsgHead(m, &v, &str);
  if (kind == kMsgArray) {
    for (uint64_t i = 0; i < v && !m->bad; ++i) MsgSkip(m);
  } else if (kind == kMsgMap) {
    for (uint64_t i = 0; i < 2 * v && !m->bad; ++i) MsgSkip(m);
  }
}

static int MsgKeyIs(const char* str, uint64_t len, const char* key) {
  return len == strlen(key) && memcmp(str, key, len) == 0;
}

/* What the metadata says about one kernel. */
typedef struct {
  int found;
  char symbol[300];
  uint64_t kernarg_size;  /* .kernarg_segment_size */
  uint64_t explicit_end;  /* where the last argument that is not hidden_* ends */
} KernelInfo;

static void ReadArgs(Msg* m, KernelInfo* k) {
  uint64_t count, v;
  const char* str;
  if (MsgHead(m, &count, &str) != kMsgArray) {
    m->bad = 1;
    return;
  }
  for (uint64_t a = 0; a < count && !m->bad; ++a) {
    uint64_t fields, offset = 0, size = 0;
    int hidden = 0;
    if (MsgHead(m, &fields, &str) != kMsgMap) {
      m->bad = 1;
      return;
    }
    for (uint64_t f = 0; f < fields && !m->bad; ++f) {
      uint64_t len;
      const char* key;
      if (MsgHead(m, &len, &key) != kMsgStr) {
        m->bad = 1;
        return;
      }
      if (MsgKeyIs(key, len, ".offset") && MsgHead(m, &v, &str) == kMsgInt) {
        offset = v;
      } else if (MsgKeyIs(key, len, ".size") && MsgHead(m, &v, &str) == kMsgInt) {
        size = v;
      } else if (MsgKeyIs(key, len, ".value_kind")) {
        hidden = MsgHead(m, &v, &str) == kMsgStr && v >= 7 && memcmp(str, "hidden_", 7) == 0;
      } else if (!MsgKeyIs(key, len, ".offset") && !MsgKeyIs(key, len, ".size")) {
        MsgSkip(m);
      }
    }
    if (!hidden && offset + size > k->explicit_end) k->explicit_end = offset + size;
  }
}

/* Looks kernel `name` up in the amdhsa.kernels list of the metadata note `desc`. */
static KernelInfo FindKernel(const unsigned char* desc, size_t n, const char* name) {
  KernelInfo out;
  memset(&out, 0, sizeof(out));
  Msg m = {desc, desc + n, 0};
  uint64_t top, v;
  const char* str;
  if (MsgHead(&m, &top, &str) != kMsgMap) return out;
  for (uint64_t i = 0; i < top && !m.bad; ++i) {
    uint64_t len;
    const char* key;
    if (MsgHead(&m, &len, &key) != kMsgStr) return out;
    if (!MsgKeyIs(key, len, "amdhsa.kernels")) {
      MsgSkip(&m);
      continue;
    }
    uint64_t kernels;
    if (MsgHead(&m, &kernels, &str) != kMsgArray) return out;
    for (uint64_t k = 0; k < kernels && !m.bad; ++k) {
      KernelInfo info;
      memset(&info, 0, sizeof(info));
      int named = 0;
      uint64_t fields;
      if (MsgHead(&m, &fields, &str) != kMsgMap) return out;
      for (uint64_t f = 0; f < fields && !m.bad; ++f) {
        if (MsgHead(&m, &len, &key) != kMsgStr) return out;
        if (MsgKeyIs(key, len, ".name")) {
          named = MsgHead(&m, &v, &str) == kMsgStr && MsgKeyIs(str, v, name);
        } else if (MsgKeyIs(key, len, ".symbol")) {
          if (MsgHead(&m, &v, &str) == kMsgStr && v < sizeof(info.symbol)) {
            memcpy(info.symbol, str, v);
          }
        } else if (MsgKeyIs(key, len, ".kernarg_segment_size")) {
          if (MsgHead(&m, &v, &str) == kMsgInt) info.kernarg_size = v;
        } else if (MsgKeyIs(key, len, ".args")) {
          ReadArgs(&m, &info);
        } else {
          MsgSkip(&m);
        }
      }
      if (named && !m.bad) {
        info.found = 1;
        return info;
      }
    }
  }
  return out;
}

typedef struct {
  uint32_t sh_name, sh_type;
  uint64_t sh_flags, sh_addr, sh_offset, sh_size;
  uint32_t sh_link, sh_info;
  uint64_t sh_addralign, sh_entsize;
} Shdr;

static int Section(const char* image, size_t size, int i, Shdr* out) {
  uint64_t shoff;
  uint16_t shentsize, shnum;
  memcpy(&shoff, image + 0x28, 8);
  memcpy(&shentsize, image + 0x3A, 2);
  memcpy(&shnum, image + 0x3C, 2);
  if (i >= shnum || shentsize < sizeof(Shdr) || shoff + (uint64_t)(i + 1) * shentsize > size) return 0;
  memcpy(out, image + shoff + (uint64_t)i * shentsize, sizeof(Shdr));
  return out->sh_offset + out->sh_size <= size;
}

/* The kernel's entry in the NT_AMDGPU_METADATA note (type 32, owner "AMDGPU"). */
static KernelInfo KernelMetadata(const char* image, size_t size, const char* name) {
  KernelInfo none;
  memset(&none, 0, sizeof(none));
  Shdr sh;
  for (int i = 0; Section(image, size, i, &sh); ++i) {
    if (sh.sh_type != 7 /* SHT_NOTE */) continue;
    const unsigned char* q = (const unsigned char*)image + sh.sh_offset;
    const unsigned char* end = q + sh.sh_size;
    while (end - q >= 12) {
      uint32_t namesz, descsz, type;
      memcpy(&namesz, q, 4);
      memcpy(&descsz, q + 4, 4);
      memcpy(&type, q + 8, 4);
      const unsigned char* owner = q + 12;
      const unsigned char* desc = owner + ((namesz + 3) & ~3u);
      if (desc > end || descsz > (size_t)(end - desc)) break;
      if (type == 32 && namesz == 7 && memcmp(owner, "AMDGPU", 7) == 0) {
        return FindKernel(desc, descsz, name);
      }
      q = desc + ((descsz + 3) & ~3u);
    }
  }
  return none;
}

/* 1 when the dynamic symbol table defines exactly `name`. */
static int DefinesSymbol(const char* image, size_t size, const char* name) {
  Shdr sh, strtab;
  for (int i = 0; Section(image, size, i, &sh); ++i) {
    if (sh.sh_type != 11 /* SHT_DYNSYM */ && sh.sh_type != 2 /* SHT_SYMTAB */) continue;
    if (!Section(image, size, (int)sh.sh_link, &strtab)) continue;
    for (uint64_t off = 0; off + 24 <= sh.sh_size; off += 24) {
      uint32_t st_name;
      uint16_t shndx;
      memcpy(&st_name, image + sh.sh_offset + off, 4);
      memcpy(&shndx, image + sh.sh_offset + off + 6, 2);
      if (shndx == 0 || st_name >= strtab.sh_size) continue; /* undefined */
      const char* sym = image + strtab.sh_offset + st_name;
      size_t room = strtab.sh_size - st_name;
      if (strnlen(sym, room) < room && strcmp(sym, name) == 0) return 1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------------ modules */

API hipError_t hipModuleLoadData(Module** m, const void* image) {
  REQUIRE_INIT();
  const char* p = (const char*)image;
  static const char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
  uint16_t machine = 0;
  memcpy(&machine, p + 18, 2);
  if (memcmp(p, kElfMagic, 4) != 0 || machine != 224 /* EM_AMDGPU */) {
    Log("module_load rejected device=%d", t_device);
    return 200; /* hipErrorInvalidImage */
  }
  if (g_reject_loads > 0) {
    --g_reject_loads;
    Log("module_load rejected device=%d", t_device);
    return 209; /* hipErrorNoBinaryForGpu */
  }
  size_t size = Elf64Size(p);
  uint32_t flags;
  memcpy(&flags, p + 48, 4);
  if (!DeviceIs(MachName(flags & 0xff))) {
    Log("module_load rejected device=%d reason=arch image=%s device_arch=%s", t_device,
        MachName(flags & 0xff), g_arch);
    return 209; /* hipErrorNoBinaryForGpu: no code object for this processor */
  }
  Module* mod = (Module*)calloc(1, sizeof(Module));
  mod->device = t_device;
  mod->image = (char*)malloc(size);
  memcpy(mod->image, p, size);
  mod->size = size;
  *m = mod;
  Log("module_load device=%d bytes=%zu fnv=%016llx mach=0x%x", t_device, size,
      (unsigned long long)Fnv1a(p, size), flags & 0xff);
  return 0;
}

API hipError_t hipModuleUnload(Module* m) {
  Log("module_unload device=%d", m->device);
  free(m->image);
  free(m);
  return 0;
}

API hipError_t hipModuleGetFunction(Function** f, Module* m, const char* name) {
  KernelInfo info = KernelMetadata(m->image, m->size, name);
  if (!info.found || !DefinesSymbol(m->image, m->size, info.symbol)) {
    Log("get_function rejected name=%s", name);
    return 500; /* hipErrorNotFound */
  }
  *f = (Function*)calloc(1, sizeof(Function));
  (*f)->module = m;
  (*f)->kernarg_size = info.kernarg_size;
  (*f)->explicit_end = info.explicit_end;
  snprintf((*f)->name, sizeof((*f)->name), "%s", name);
  return 0;
}

API hipError_t hipModuleLaunchKernel(Function* f, unsigned gx, unsigned gy, unsigned gz,
                                     unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                     Stream* s, void** params, void** extra) {
  REQUIRE_INIT();
  if (f->module->device != t_device) return 400; /* loaded on another device */
  if ((unsigned long long)bx * by * bz > 1024) return 1;
  /* apache-tvm's convention: no kernelParams, one packed buffer through `extra`. */
  if (params != NULL || extra == NULL || extra[0] != (void*)0x1 || extra[2] != (void*)0x2 ||
      extra[4] != (void*)0x3) {
    Log("launch_rejected kernel=%s reason=extra", f->name);
    return 1;
  }
  const unsigned char* buffer = (const unsigned char*)extra[1];
  size_t size = *(const size_t*)extra[3];
  /* The buffer must hold every explicit argument and fit the kernel's kernarg segment. */
  if (size < f->explicit_end || size > f->kernarg_size) {
    Log("launch_rejected kernel=%s reason=kernarg_size size=%zu expected=%llu..%llu", f->name,
        size, (unsigned long long)f->explicit_end, (unsigned long long)f->kernarg_size);
    return 1;
  }
  char hex[4096] = "";
  for (size_t i = 0; i < size && 2 * i + 2 < sizeof(hex); ++i) {
    snprintf(hex + 2 * i, 3, "%02x", buffer[i]);
  }
  Log("launch kernel=%s grid=%u,%u,%u block=%u,%u,%u smem=%u stream=%d device=%d size=%zu args=%s",
      f->name, gx, gy, gz, bx, by, bz, smem, StreamId(s), t_device, size, hex);
  return 0;
}
