/*
 * A fake HIP runtime (libamdhip64.so stand-in) for testing tvm-runtime-rocm without an AMD GPU.
 *
 * It implements exactly the entry points the backend resolves, on host memory (copies really
 * copy), and records every allocation, copy, stream, event, module load and launch in a text log
 * (fake_drivers/fake_log.h) that tests read through fake_hip_log().  Like the real runtime it
 * keeps a current device per thread and rejects a launch on a device the code object was not
 * loaded on.  Launches record their packed argument buffer byte for byte; nothing is executed.
 *
 * Environment (read at hipInit):
 *   FAKE_HIP_INIT_ERROR=<n>   hipInit returns n
 *   FAKE_HIP_DEVICES=<n>      number of devices (default 1, at most 8; 0: hipErrorNoDevice)
 *   FAKE_HIP_ARCH=<name>      gcnArchName (default "gfx90a:sramecc+:xnack-")
 *   FAKE_HIP_WARP=<n>         wavefront size (default 64)
 *   FAKE_HIP_REJECT_LOADS=<n> the first n module loads fail with hipErrorNoBinaryForGpu
 */
#define FAKE_DRIVER_PREFIX fake_hip
#include "../../fake_drivers/fake_log.h"

#define MAX_DEVICES 8
#define RUNTIME_VERSION 60342134 /* ROCm 6.3 */

typedef int hipError_t;

typedef struct {
  int id;
} Stream;
typedef struct {
  int id;
  int recorded;
  double when_ms;
} Event;
typedef struct {
  int device;
  char* image;
  size_t size;
} Module;
typedef struct {
  Module* module;
  char name[256];
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

static int StreamId(Stream* s) { return s ? s->id : 0; }

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

API hipError_t hipMalloc(void** p, size_t n) {
  REQUIRE_INIT();
  if (n == 0) return 1;
  if (n > ((size_t)1 << 40)) return 2;
  *p = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!*p) return 2;
  ++g_live_allocations;
  Log("alloc device=%d bytes=%zu", t_device, n);
  return 0;
}

API hipError_t hipFree(void* p) {
  free(p);
  --g_live_allocations;
  Log("free");
  return 0;
}

API hipError_t hipHostMalloc(void** p, size_t n, unsigned flags) {
  *p = malloc(n);
  ++g_live_allocations;
  Log("host_alloc bytes=%zu flags=%u", n, flags);
  return 0;
}

API hipError_t hipHostFree(void* p) {
  free(p);
  --g_live_allocations;
  Log("host_free");
  return 0;
}

API hipError_t hipMemcpyAsync(void* dst, const void* src, size_t n, int kind, Stream* s) {
  static const char* kKinds[] = {"htoh", "htod", "dtoh", "dtod", "default"};
  if (kind < 0 || kind > 4) return 1;
  memcpy(dst, src, n);
  Log("copy %s bytes=%zu stream=%d device=%d", kKinds[kind], n, StreamId(s), t_device);
  return 0;
}

API hipError_t hipMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                                  size_t n, Stream* s) {
  REQUIRE_DEVICE(dst_device);
  REQUIRE_DEVICE(src_device);
  memcpy(dst, src, n);
  Log("copy peer bytes=%zu from=%d to=%d stream=%d", n, src_device, dst_device, StreamId(s));
  return 0;
}

/* ------------------------------------------------------------------------------ streams, events */

API hipError_t hipStreamCreateWithFlags(Stream** s, unsigned flags) {
  *s = (Stream*)calloc(1, sizeof(Stream));
  (*s)->id = g_next_stream++;
  Log("stream_create id=%d flags=%u device=%d", (*s)->id, flags, t_device);
  return 0;
}

API hipError_t hipStreamDestroy(Stream* s) {
  Log("stream_destroy id=%d", StreamId(s));
  free(s);
  return 0;
}

API hipError_t hipStreamSynchronize(Stream* s) {
  Log("stream_sync id=%d device=%d", StreamId(s), t_device);
  return 0;
}

API hipError_t hipStreamWaitEvent(Stream* s, Event* e, unsigned flags) {
  Log("stream_wait stream=%d event=%d", StreamId(s), e->id);
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
  Log("event_record id=%d stream=%d", e->id, StreamId(s));
  return 0;
}

API hipError_t hipEventSynchronize(Event* e) { return e->recorded ? 0 : 600; }

API hipError_t hipEventElapsedTime(float* ms, Event* start, Event* end) {
  if (!start->recorded || !end->recorded) return 600; /* hipErrorNotReady */
  *ms = (float)(end->when_ms - start->when_ms);
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

/* A kernel is defined when its name is a NUL-terminated string of the image (its symbol). */
static int DefinesSymbol(const Module* m, const char* name) {
  size_t n = strlen(name) + 1;
  if (n < 2 || n > m->size) return 0;
  for (size_t i = 0; i + n <= m->size; ++i) {
    if (memcmp(m->image + i, name, n) == 0 && (i == 0 || m->image[i - 1] == '\0')) return 1;
  }
  return 0;
}

API hipError_t hipModuleGetFunction(Function** f, Module* m, const char* name) {
  if (!DefinesSymbol(m, name)) return 500; /* hipErrorNotFound */
  *f = (Function*)calloc(1, sizeof(Function));
  (*f)->module = m;
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
  char hex[4096] = "";
  for (size_t i = 0; i < size && 2 * i + 2 < sizeof(hex); ++i) {
    snprintf(hex + 2 * i, 3, "%02x", buffer[i]);
  }
  Log("launch kernel=%s grid=%u,%u,%u block=%u,%u,%u smem=%u stream=%d device=%d size=%zu args=%s",
      f->name, gx, gy, gz, bx, by, bz, smem, StreamId(s), t_device, size, hex);
  return 0;
}
