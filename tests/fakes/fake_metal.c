/*
 * A fake Metal.framework (plus the Foundation and libdispatch pieces the backend touches) for
 * the Metal backend tests, built on the fake Objective-C runtime of fake_objc.c.
 *
 * Every message the backend sends is appended to a text log, one line per message:
 * `<selector> key=value ...` (objects as `<Class>#<serial>`, setBytes payloads in hex), which the
 * tests read with fake_metal_log().  "Compiling" MSL finds the `kernel void <name>(` functions of
 * the source; a committed command buffer "runs" (when the host waits for it, see m_commit) its
 * blits and dispatches, the latter by calling the executor the test
 * registered (fake_metal_set_executor), a CPU reference keyed by kernel name, with the bound
 * buffers' contents, the setBytes payload and the grid.  Failures are injected through
 * environment variables read at each call:
 *   FAKE_METAL_NO_DEVICE=1            no device (MTLCreateSystemDefaultDevice returns nil)
 *   FAKE_METAL_DEVICES=N              the number of devices MTLCopyAllDevices returns (1)
 *   FAKE_METAL_COMPILE_ERROR=<log>    newLibraryWithSource fails with this compiler log
 *   FAKE_METAL_LIBRARY_ERROR=<text>   newLibraryWithData fails with this description
 *   FAKE_METAL_MISSING_FUNCTION=<n>   newFunctionWithName: returns nil for kernel n
 *   FAKE_METAL_PIPELINE_ERROR=<text>  newComputePipelineStateWithFunction fails
 *   FAKE_METAL_MAX_THREADS=N          the pipelines' maxTotalThreadsPerThreadgroup (1024)
 *   FAKE_METAL_FAMILY=N               the newest MTLGPUFamily supportsFamily: accepts (5001)
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_objc.h"

#define FAKE_DRIVER_PREFIX fake_metal
#include "fake_log.h"

typedef unsigned long NSUInteger;
typedef struct {
  NSUInteger width, height, depth;
} MTLSize;

/* ----------------------------------------------------------------------------- live objects */

int64_t fake_metal_live(const char* cls) { return fake_objc_live(cls); }

/* "<Class>#<serial>" of an object, "nil" for NULL. */
static const char* name_of(id object, char* buf, size_t size) {
  if (object == NULL) return "nil";
  snprintf(buf, size, "%s#%llu", fake_objc_class_name(object),
           (unsigned long long)((FakeObject*)object)->serial);
  return buf;
}
#define NAME(obj) name_of((obj), (char[64]){0}, 64)

static long env_long(const char* name, long fallback) {
  const char* v = getenv(name);
  return v != NULL && v[0] != '\0' ? strtol(v, NULL, 10) : fallback;
}

static const char* env_text(const char* name) {
  const char* v = getenv(name);
  return v != NULL && v[0] != '\0' ? v : NULL;
}

/* ---------------------------------------------------------------------------------- classes */

static FakeClass *NSObject, *NSString, *NSError, *NSArray, *DispatchData, *CompileOptions;
static FakeClass *Device, *Queue, *Buffer, *Library, *Function, *Pipeline, *CommandBuffer;
static FakeClass *ComputeEncoder, *BlitEncoder;

typedef struct {
  FakeObject base;
  char* text;
} FString;

typedef struct {
  FakeObject base;
  id description;  // NSString
} FError;

typedef struct {
  FakeObject base;
  id items[8];
  NSUInteger count;
} FArray;

typedef struct {
  FakeObject base;
  void* bytes;
  size_t size;
} FData;

typedef struct {
  FakeObject base;
  NSUInteger language_version;
  int fast_math;
} FOptions;

typedef struct {
  FakeObject base;
  int index;
} FDevice;

typedef struct {
  FakeObject base;
  void* contents;
  NSUInteger length;
} FBuffer;

typedef struct {
  FakeObject base;
  char names[16][128];
  int count;
} FLibrary;

typedef struct {
  FakeObject base;
  char name[128];
} FFunction;

typedef struct {
  FakeObject base;
  char name[128];
  NSUInteger max_threads;
} FPipeline;

#define MAX_BINDINGS 32

typedef struct {
  char kernel[128];
  id buffers[MAX_BINDINGS];  // retained until the command buffer is freed
  unsigned char bytes[4096];
  NSUInteger bytes_length;
  long bytes_index;
  MTLSize grid, block;
} Dispatch;

typedef struct {
  FakeObject base;
  Dispatch* dispatches;
  int num_dispatches;
  struct {
    id src, dst;
    NSUInteger src_offset, dst_offset, size;
  } blits[4];
  int num_blits;
  NSUInteger status;  // MTLCommandBufferStatus
  id error;
  Dispatch current;  // being encoded
  FPipeline* pipeline;
} FCommandBuffer;

typedef struct {
  FakeObject base;
  FCommandBuffer* command_buffer;  // not retained, as in Metal (the encoder lives shorter)
  int ended;
} FEncoder;

static void free_string(FakeObject* o) { free(((FString*)o)->text); }

static id new_string(const char* text) {
  FString* s = fake_objc_new(NSString, sizeof(FString), free_string);
  s->text = strdup(text);
  return s;
}

static void free_error(FakeObject* o) { fake_objc_release(((FError*)o)->description); }
static void free_array(FakeObject* o) {
  FArray* a = (FArray*)o;
  for (NSUInteger i = 0; i < a->count; ++i) fake_objc_release(a->items[i]);
}
static void free_data(FakeObject* o) { free(((FData*)o)->bytes); }
static void free_buffer(FakeObject* o) { free(((FBuffer*)o)->contents); }
static void free_command_buffer(FakeObject* o) {
  FCommandBuffer* cb = (FCommandBuffer*)o;
  for (int d = 0; d < cb->num_dispatches; ++d) {
    for (int i = 0; i < MAX_BINDINGS; ++i) fake_objc_release(cb->dispatches[d].buffers[i]);
  }
  free(cb->dispatches);
  fake_objc_release(cb->error);
}

static id new_error(const char* text) {
  FError* e = fake_objc_new(NSError, sizeof(FError), free_error);
  e->description = new_string(text);
  return fake_objc_autorelease(e);
}

/* ---------------------------------------------------------------------------- NSObject etc. */

static id m_alloc(FakeClass* cls, SEL _cmd) {
  if (cls == CompileOptions) {
    FOptions* o = fake_objc_new(CompileOptions, sizeof(FOptions), NULL);
    Log("alloc class=MTLCompileOptions");
    return o;
  }
  fprintf(stderr, "fake metal: +[%s alloc] is not faked\n", fake_objc_class_name(cls));
  abort();
}
static id m_init(id self, SEL _cmd) {
  Log("init object=%s", NAME(self));
  return self;
}
static id m_retain(id self, SEL _cmd) {
  fake_objc_retain(self);
  return self;
}
static void m_release(id self, SEL _cmd) {
  Log("release object=%s", NAME(self));
  fake_objc_release(self);
}

static id m_string_with_utf8(FakeClass* cls, SEL _cmd, const char* text) {
  return fake_objc_autorelease(new_string(text));
}
static const char* m_utf8(id self, SEL _cmd) { return ((FString*)self)->text; }
static id m_localized_description(id self, SEL _cmd) {
  Log("localizedDescription error=%s", NAME(self));
  return ((FError*)self)->description;
}
static NSUInteger m_count(id self, SEL _cmd) { return ((FArray*)self)->count; }
static id m_object_at_index(id self, SEL _cmd, NSUInteger i) {
  FArray* a = self;
  if (i >= a->count) {
    fprintf(stderr, "fake metal: objectAtIndex:%lu out of range\n", i);
    abort();
  }
  return a->items[i];
}

static void m_set_language_version(id self, SEL _cmd, NSUInteger v) {
  ((FOptions*)self)->language_version = v;
  Log("setLanguageVersion: options=%s version=0x%lx", NAME(self), v);
}
static void m_set_fast_math(id self, SEL _cmd, signed char enabled) {
  ((FOptions*)self)->fast_math = enabled;
  Log("setFastMathEnabled: options=%s enabled=%d", NAME(self), (int)enabled);
}

/* ------------------------------------------------------------------------------- MTLDevice */

static id new_device(int index) {
  FDevice* d = fake_objc_new(Device, sizeof(FDevice), NULL);
  d->index = index;
  return d;
}

id MTLCreateSystemDefaultDevice(void) {
  Log("MTLCreateSystemDefaultDevice");
  if (env_long("FAKE_METAL_NO_DEVICE", 0)) return NULL;
  return new_device(0);
}

id MTLCopyAllDevices(void) {
  Log("MTLCopyAllDevices");
  FArray* a = fake_objc_new(NSArray, sizeof(FArray), free_array);
  if (!env_long("FAKE_METAL_NO_DEVICE", 0)) {
    long n = env_long("FAKE_METAL_DEVICES", 1);
    for (long i = 0; i < n && i < 8; ++i) a->items[a->count++] = new_device((int)i);
  }
  return a;
}

static id m_device_name(id self, SEL _cmd) {
  char text[64];
  snprintf(text, sizeof(text), "Fake Apple M0 GPU %d", ((FDevice*)self)->index);
  return fake_objc_autorelease(new_string(text));
}
static MTLSize m_max_threads_per_threadgroup(id self, SEL _cmd) {
  Log("maxThreadsPerThreadgroup device=%s", NAME(self));
  MTLSize s = {1024, 1024, 1024};
  return s;
}
static NSUInteger m_max_threadgroup_memory(id self, SEL _cmd) { return 32768; }
static unsigned long long m_working_set(id self, SEL _cmd) { return 8ull << 30; }
static signed char m_unified(id self, SEL _cmd) { return 1; }
static signed char m_supports_family(id self, SEL _cmd, long family) {
  Log("supportsFamily: device=%s family=%ld", NAME(self), family);
  return family <= env_long("FAKE_METAL_FAMILY", 5001);
}
static id m_new_command_queue(id self, SEL _cmd) {
  id q = fake_objc_new(Queue, sizeof(FakeObject), NULL);
  Log("newCommandQueue device=%s queue=%s", NAME(self), NAME(q));
  return q;
}
static id m_new_buffer(id self, SEL _cmd, NSUInteger length, NSUInteger options) {
  FBuffer* b = fake_objc_new(Buffer, sizeof(FBuffer), free_buffer);
  b->length = length;
  b->contents = aligned_alloc(64, (length + 63) / 64 * 64);
  memset(b->contents, 0xCD, length);  // garbage, as uninitialized GPU memory is
  Log("newBufferWithLength:options: device=%s length=%lu options=%lu buffer=%s", NAME(self), length,
      options, NAME(b));
  return b;
}

/* The `kernel void <name>(` functions of an MSL source. */
static void find_kernels(const char* source, FLibrary* lib) {
  const char* p = source;
  while ((p = strstr(p, "kernel void ")) != NULL) {
    p += strlen("kernel void ");
    size_t n = strcspn(p, "( \t\n");
    if (lib->count < 16 && n < 127) {
      memcpy(lib->names[lib->count], p, n);
      lib->names[lib->count++][n] = '\0';
    }
  }
}

static void join_names(const FLibrary* lib, char* out, size_t size) {
  out[0] = '\0';
  for (int i = 0; i < lib->count; ++i) {
    if (i) strncat(out, ",", size - strlen(out) - 1);
    strncat(out, lib->names[i], size - strlen(out) - 1);
  }
}

static id m_new_library_with_source(id self, SEL _cmd, id source, id options, id* error) {
  FOptions* o = options;
  const char* text = ((FString*)source)->text;
  const char* fail = env_text("FAKE_METAL_COMPILE_ERROR");
  if (fail != NULL) {
    Log("newLibraryWithSource:options:error: device=%s options=%s length=%zu result=nil",
        NAME(self), NAME(options), strlen(text));
    if (error != NULL) *error = new_error(fail);
    return NULL;
  }
  FLibrary* lib = fake_objc_new(Library, sizeof(FLibrary), NULL);
  find_kernels(text, lib);
  char names[2048];
  join_names(lib, names, sizeof(names));
  Log("newLibraryWithSource:options:error: device=%s options=%s language=0x%lx fast_math=%d "
      "kernels=%s library=%s",
      NAME(self), NAME(options), o->language_version, o->fast_math, names, NAME(lib));
  return lib;
}

/* A fake metallib: "MTLB" then NUL-separated kernel names. */
static id m_new_library_with_data(id self, SEL _cmd, id data, id* error) {
  FData* d = data;
  const char* fail = env_text("FAKE_METAL_LIBRARY_ERROR");
  if (fail == NULL && (d->size < 4 || memcmp(d->bytes, "MTLB", 4) != 0)) {
    fail = "Invalid library file";
  }
  if (fail != NULL) {
    Log("newLibraryWithData:error: device=%s size=%zu result=nil", NAME(self), d->size);
    if (error != NULL) *error = new_error(fail);
    return NULL;
  }
  FLibrary* lib = fake_objc_new(Library, sizeof(FLibrary), NULL);
  const char* p = (const char*)d->bytes + 4;
  const char* end = (const char*)d->bytes + d->size;
  while (p < end && lib->count < 16) {
    size_t n = strnlen(p, end - p);
    if (n > 0 && n < 127) {
      memcpy(lib->names[lib->count], p, n);
      lib->names[lib->count++][n] = '\0';
    }
    p += n + 1;
  }
  char names[2048];
  join_names(lib, names, sizeof(names));
  Log("newLibraryWithData:error: device=%s size=%zu kernels=%s library=%s", NAME(self), d->size,
      names, NAME(lib));
  return lib;
}

static id m_new_function(id self, SEL _cmd, id name) {
  FLibrary* lib = self;
  const char* wanted = ((FString*)name)->text;
  const char* missing = env_text("FAKE_METAL_MISSING_FUNCTION");
  int found = 0;
  for (int i = 0; i < lib->count; ++i) found |= strcmp(lib->names[i], wanted) == 0;
  if (missing != NULL && strcmp(missing, wanted) == 0) found = 0;
  if (!found) {
    Log("newFunctionWithName: library=%s name=%s result=nil", NAME(self), wanted);
    return NULL;
  }
  FFunction* f = fake_objc_new(Function, sizeof(FFunction), NULL);
  snprintf(f->name, sizeof(f->name), "%s", wanted);
  Log("newFunctionWithName: library=%s name=%s function=%s", NAME(self), wanted, NAME(f));
  return f;
}

static id m_new_pipeline(id self, SEL _cmd, id function, id* error) {
  FFunction* f = function;
  const char* fail = env_text("FAKE_METAL_PIPELINE_ERROR");
  if (fail != NULL) {
    Log("newComputePipelineStateWithFunction:error: device=%s function=%s result=nil", NAME(self),
        NAME(function));
    if (error != NULL) *error = new_error(fail);
    return NULL;
  }
  FPipeline* p = fake_objc_new(Pipeline, sizeof(FPipeline), NULL);
  snprintf(p->name, sizeof(p->name), "%s", f->name);
  p->max_threads = (NSUInteger)env_long("FAKE_METAL_MAX_THREADS", 1024);
  Log("newComputePipelineStateWithFunction:error: device=%s function=%s pipeline=%s", NAME(self),
      NAME(function), NAME(p));
  return p;
}
static NSUInteger m_max_total_threads(id self, SEL _cmd) { return ((FPipeline*)self)->max_threads; }

static void* m_contents(id self, SEL _cmd) { return ((FBuffer*)self)->contents; }
static NSUInteger m_length(id self, SEL _cmd) { return ((FBuffer*)self)->length; }

/* ----------------------------------------------------------------------- dispatch_data_t */

id dispatch_data_create(const void* buffer, size_t size, void* queue, void* destructor) {
  FData* d = fake_objc_new(DispatchData, sizeof(FData), free_data);
  d->bytes = malloc(size ? size : 1);
  memcpy(d->bytes, buffer, size);
  d->size = size;
  Log("dispatch_data_create size=%zu queue=%p destructor=%p data=%s", size, queue, destructor,
      NAME(d));
  return d;
}

void dispatch_release(id object) {
  Log("dispatch_release object=%s", NAME(object));
  fake_objc_release(object);
}

/* ------------------------------------------------------------------- queue, command buffer */

typedef int (*Executor)(const char* kernel, int num_buffers, void** contents,
                        const NSUInteger* lengths, const void* bytes, NSUInteger bytes_length,
                        const NSUInteger* grid, const NSUInteger* block);
static Executor g_executor;

void fake_metal_set_executor(Executor executor) { g_executor = executor; }

static id m_command_buffer(id self, SEL _cmd) {
  FCommandBuffer* cb = fake_objc_new(CommandBuffer, sizeof(FCommandBuffer), free_command_buffer);
  Log("commandBuffer queue=%s command_buffer=%s", NAME(self), NAME(cb));
  return fake_objc_autorelease(cb);
}

static id new_encoder(FakeClass* cls, FCommandBuffer* cb) {
  FEncoder* e = fake_objc_new(cls, sizeof(FEncoder), NULL);
  e->command_buffer = cb;
  return fake_objc_autorelease(e);
}

static id m_compute_encoder(id self, SEL _cmd) {
  FCommandBuffer* cb = self;
  memset(&cb->current, 0, sizeof(cb->current));
  cb->current.bytes_index = -1;
  id e = new_encoder(ComputeEncoder, cb);
  Log("computeCommandEncoder command_buffer=%s encoder=%s", NAME(self), NAME(e));
  return e;
}
static id m_blit_encoder(id self, SEL _cmd) {
  id e = new_encoder(BlitEncoder, self);
  Log("blitCommandEncoder command_buffer=%s encoder=%s", NAME(self), NAME(e));
  return e;
}

static void run(FCommandBuffer* cb) {
  for (int b = 0; b < cb->num_blits; ++b) {
    FBuffer* src = cb->blits[b].src;
    FBuffer* dst = cb->blits[b].dst;
    memmove((char*)dst->contents + cb->blits[b].dst_offset,
            (char*)src->contents + cb->blits[b].src_offset, cb->blits[b].size);
  }
  for (int d = 0; d < cb->num_dispatches; ++d) {
    Dispatch* x = &cb->dispatches[d];
    void* contents[MAX_BINDINGS] = {0};
    NSUInteger lengths[MAX_BINDINGS] = {0};
    int n = 0;
    for (int i = 0; i < MAX_BINDINGS; ++i) {
      if (x->buffers[i] == NULL) continue;
      contents[i] = ((FBuffer*)x->buffers[i])->contents;
      lengths[i] = ((FBuffer*)x->buffers[i])->length;
      n = i + 1;
    }
    NSUInteger grid[3] = {x->grid.width, x->grid.height, x->grid.depth};
    NSUInteger block[3] = {x->block.width, x->block.height, x->block.depth};
    const char* fail = env_text("FAKE_METAL_GPU_ERROR");
    int rc = fail != NULL         ? 1
             : g_executor != NULL ? g_executor(x->kernel, n, contents, lengths, x->bytes,
                                               x->bytes_length, grid, block)
                                  : 0;
    if (rc != 0 && cb->error == NULL) {
      char text[512];
      snprintf(text, sizeof(text), "%s (kernel %s)",
               fail != NULL ? fail : "the test's CPU reference of this kernel failed", x->kernel);
      cb->error = new_string(text);  // wrapped into an NSError by -error
      cb->status = 5;
    }
  }
}

/* Committed command buffers that have not run yet, in commit order: as on a GPU, a command
 * buffer's work lands only when the host waits for it (waitUntilCompleted, which also runs every
 * command buffer committed before it), so a missing wait reads stale buffer contents.  Polling
 * -status does not make progress here: a poll-only wait would never finish, which the tests see. */
#define MAX_PENDING 4096
static FCommandBuffer* g_pending[MAX_PENDING];
static int g_num_pending;
static pthread_mutex_t g_pending_mu = PTHREAD_MUTEX_INITIALIZER;

int fake_metal_pending(void) {
  pthread_mutex_lock(&g_pending_mu);
  int n = g_num_pending;
  pthread_mutex_unlock(&g_pending_mu);
  return n;
}

static void m_commit(id self, SEL _cmd) {
  FCommandBuffer* cb = self;
  Log("commit command_buffer=%s dispatches=%d blits=%d", NAME(self), cb->num_dispatches,
      cb->num_blits);
  cb->status = 2;          // MTLCommandBufferStatusCommitted
  fake_objc_retain(self);  // the queue keeps it until it ran
  pthread_mutex_lock(&g_pending_mu);
  if (g_num_pending == MAX_PENDING) {
    fprintf(stderr, "fake metal: more than %d command buffers committed without a wait\n",
            MAX_PENDING);
    abort();
  }
  g_pending[g_num_pending++] = cb;
  pthread_mutex_unlock(&g_pending_mu);
}
static void m_wait(id self, SEL _cmd) {
  Log("waitUntilCompleted command_buffer=%s", NAME(self));
  for (;;) {
    pthread_mutex_lock(&g_pending_mu);
    int found = 0;
    for (int i = 0; i < g_num_pending && !found; ++i) found = g_pending[i] == self;
    FCommandBuffer* next = found ? g_pending[0] : NULL;
    if (found) memmove(g_pending, g_pending + 1, (size_t)--g_num_pending * sizeof(g_pending[0]));
    pthread_mutex_unlock(&g_pending_mu);
    if (next == NULL) return;  // already ran (or never committed)
    next->status = 4;          // MTLCommandBufferStatusCompleted, unless a dispatch fails
    run(next);
    fake_objc_release((id)next);
    if ((id)next == self) return;
  }
}
static NSUInteger m_status(id self, SEL _cmd) { return ((FCommandBuffer*)self)->status; }
static id m_error(id self, SEL _cmd) {
  FCommandBuffer* cb = self;
  if (cb->error == NULL) return NULL;
  FError* e = fake_objc_new(NSError, sizeof(FError), free_error);
  e->description = new_string(((FString*)cb->error)->text);
  return fake_objc_autorelease(e);
}

/* ---------------------------------------------------------------------------- encoders */

static FCommandBuffer* encoding(id self, const char* what) {
  FEncoder* e = self;
  if (e->ended) {
    fprintf(stderr, "fake metal: %s after endEncoding\n", what);
    abort();
  }
  return e->command_buffer;
}

static void m_set_pipeline(id self, SEL _cmd, id pipeline) {
  FCommandBuffer* cb = encoding(self, "setComputePipelineState:");
  cb->pipeline = pipeline;
  snprintf(cb->current.kernel, sizeof(cb->current.kernel), "%s", ((FPipeline*)pipeline)->name);
  Log("setComputePipelineState: encoder=%s pipeline=%s kernel=%s", NAME(self), NAME(pipeline),
      cb->current.kernel);
}

static void m_set_buffer(id self, SEL _cmd, id buffer, NSUInteger offset, NSUInteger index) {
  FCommandBuffer* cb = encoding(self, "setBuffer:offset:atIndex:");
  Log("setBuffer:offset:atIndex: encoder=%s buffer=%s offset=%lu index=%lu", NAME(self),
      NAME(buffer), offset, index);
  if (index >= MAX_BINDINGS || offset != 0) {
    fprintf(stderr, "fake metal: setBuffer index %lu / offset %lu not supported\n", index, offset);
    abort();
  }
  fake_objc_retain(buffer);
  fake_objc_release(cb->current.buffers[index]);
  cb->current.buffers[index] = buffer;
}

static void m_set_bytes(id self, SEL _cmd, const void* bytes, NSUInteger length, NSUInteger index) {
  FCommandBuffer* cb = encoding(self, "setBytes:length:atIndex:");
  char hex[8300];
  size_t shown = length < 4096 ? length : 4096;
  for (size_t i = 0; i < shown; ++i) sprintf(hex + 2 * i, "%02x", ((const unsigned char*)bytes)[i]);
  hex[2 * shown] = '\0';
  Log("setBytes:length:atIndex: encoder=%s length=%lu index=%lu bytes=%s", NAME(self), length,
      index, hex);
  memcpy(cb->current.bytes, bytes, shown);  // Metal copies the bytes at once
  cb->current.bytes_length = shown;
  cb->current.bytes_index = (long)index;
}

static void m_dispatch(id self, SEL _cmd, MTLSize grid, MTLSize block) {
  FCommandBuffer* cb = encoding(self, "dispatchThreadgroups:threadsPerThreadgroup:");
  Log("dispatchThreadgroups:threadsPerThreadgroup: encoder=%s kernel=%s grid=%lu,%lu,%lu "
      "block=%lu,%lu,%lu",
      NAME(self), cb->current.kernel, grid.width, grid.height, grid.depth, block.width,
      block.height, block.depth);
  cb->current.grid = grid;
  cb->current.block = block;
  cb->dispatches = realloc(cb->dispatches, (cb->num_dispatches + 1) * sizeof(Dispatch));
  cb->dispatches[cb->num_dispatches++] = cb->current;
  for (int i = 0; i < MAX_BINDINGS; ++i) fake_objc_retain(cb->current.buffers[i]);
}

static void m_copy(id self, SEL _cmd, id src, NSUInteger src_offset, id dst, NSUInteger dst_offset,
                   NSUInteger size) {
  FCommandBuffer* cb = encoding(self, "copyFromBuffer:...");
  Log("copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size: encoder=%s source=%s "
      "source_offset=%lu destination=%s destination_offset=%lu size=%lu",
      NAME(self), NAME(src), src_offset, NAME(dst), dst_offset, size);
  if (cb->num_blits < 4) {
    cb->blits[cb->num_blits].src = src;
    cb->blits[cb->num_blits].dst = dst;
    cb->blits[cb->num_blits].src_offset = src_offset;
    cb->blits[cb->num_blits].dst_offset = dst_offset;
    cb->blits[cb->num_blits++].size = size;
  }
}

static void m_end_encoding(id self, SEL _cmd) {
  FEncoder* e = self;
  Log("endEncoding encoder=%s", NAME(self));
  if (e->ended) {
    fprintf(stderr, "fake metal: endEncoding twice\n");
    abort();
  }
  e->ended = 1;
  // The encoder's bindings belong to the dispatch recorded; drop the ones being encoded.
  for (int i = 0; i < MAX_BINDINGS; ++i) {
    fake_objc_release(e->command_buffer->current.buffers[i]);
    e->command_buffer->current.buffers[i] = NULL;
  }
}

/* --------------------------------------------------------------------------- registration */

#define METHOD(cls, sel, fn) fake_objc_method((cls), 0, (sel), (void*)(fn), 0)
#define CLASS_METHOD(cls, sel, fn) fake_objc_method((cls), 1, (sel), (void*)(fn), 0)

__attribute__((constructor)) static void define_classes(void) {
  NSObject = fake_objc_class("NSObject", NULL);
  CLASS_METHOD(NSObject, "alloc", m_alloc);
  METHOD(NSObject, "init", m_init);
  METHOD(NSObject, "retain", m_retain);
  METHOD(NSObject, "release", m_release);
  NSString = fake_objc_class("NSString", NSObject);
  CLASS_METHOD(NSString, "stringWithUTF8String:", m_string_with_utf8);
  METHOD(NSString, "UTF8String", m_utf8);
  NSError = fake_objc_class("NSError", NSObject);
  METHOD(NSError, "localizedDescription", m_localized_description);
  NSArray = fake_objc_class("NSArray", NSObject);
  METHOD(NSArray, "count", m_count);
  METHOD(NSArray, "objectAtIndex:", m_object_at_index);
  DispatchData = fake_objc_class("OS_dispatch_data", NSObject);
  CompileOptions = fake_objc_class("MTLCompileOptions", NSObject);
  METHOD(CompileOptions, "setLanguageVersion:", m_set_language_version);
  METHOD(CompileOptions, "setFastMathEnabled:", m_set_fast_math);
  Device = fake_objc_class("FakeMTLDevice", NSObject);
  METHOD(Device, "name", m_device_name);
#if defined(__x86_64__)
  fake_objc_method(Device, 0, "maxThreadsPerThreadgroup", (void*)m_max_threads_per_threadgroup, 1);
#else
  METHOD(Device, "maxThreadsPerThreadgroup", m_max_threads_per_threadgroup);
#endif
  METHOD(Device, "maxThreadgroupMemoryLength", m_max_threadgroup_memory);
  METHOD(Device, "recommendedMaxWorkingSetSize", m_working_set);
  METHOD(Device, "hasUnifiedMemory", m_unified);
  METHOD(Device, "supportsFamily:", m_supports_family);
  METHOD(Device, "newCommandQueue", m_new_command_queue);
  METHOD(Device, "newBufferWithLength:options:", m_new_buffer);
  METHOD(Device, "newLibraryWithSource:options:error:", m_new_library_with_source);
  METHOD(Device, "newLibraryWithData:error:", m_new_library_with_data);
  METHOD(Device, "newComputePipelineStateWithFunction:error:", m_new_pipeline);
  Queue = fake_objc_class("FakeMTLCommandQueue", NSObject);
  METHOD(Queue, "commandBuffer", m_command_buffer);
  Buffer = fake_objc_class("FakeMTLBuffer", NSObject);
  METHOD(Buffer, "contents", m_contents);
  METHOD(Buffer, "length", m_length);
  Library = fake_objc_class("FakeMTLLibrary", NSObject);
  METHOD(Library, "newFunctionWithName:", m_new_function);
  Function = fake_objc_class("FakeMTLFunction", NSObject);
  Pipeline = fake_objc_class("FakeMTLComputePipelineState", NSObject);
  METHOD(Pipeline, "maxTotalThreadsPerThreadgroup", m_max_total_threads);
  CommandBuffer = fake_objc_class("FakeMTLCommandBuffer", NSObject);
  METHOD(CommandBuffer, "computeCommandEncoder", m_compute_encoder);
  METHOD(CommandBuffer, "blitCommandEncoder", m_blit_encoder);
  METHOD(CommandBuffer, "commit", m_commit);
  METHOD(CommandBuffer, "waitUntilCompleted", m_wait);
  METHOD(CommandBuffer, "status", m_status);
  METHOD(CommandBuffer, "error", m_error);
  ComputeEncoder = fake_objc_class("FakeMTLComputeCommandEncoder", NSObject);
  METHOD(ComputeEncoder, "setComputePipelineState:", m_set_pipeline);
  METHOD(ComputeEncoder, "setBuffer:offset:atIndex:", m_set_buffer);
  METHOD(ComputeEncoder, "setBytes:length:atIndex:", m_set_bytes);
  METHOD(ComputeEncoder, "dispatchThreadgroups:threadsPerThreadgroup:", m_dispatch);
  METHOD(ComputeEncoder, "endEncoding", m_end_encoding);
  BlitEncoder = fake_objc_class("FakeMTLBlitCommandEncoder", NSObject);
  METHOD(BlitEncoder, "copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size:", m_copy);
  METHOD(BlitEncoder, "endEncoding", m_end_encoding);
}
