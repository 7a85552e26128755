/*
 * A fake Objective-C runtime for the Metal backend tests: objc_getClass, sel_registerName,
 * objc_msgSend(_stret) and autorelease pools, enough for the backend's messaging layer.
 *
 * objc_msgSend is a small assembly trampoline, as the real one is: it saves every argument
 * register, asks fake_objc_lookup() for the C function implementing (class of receiver,
 * selector), restores the registers and tail-jumps there, so register and stack arguments
 * (MTLSize by value, pointers, integers, floats) reach the implementation exactly as the caller
 * passed them through its cast prototype.  A receiver that is not an object, a selector the
 * class lacks, or a struct-returning method reached through the wrong entry point aborts with a
 * message naming both: a wrong prototype in the backend cannot go unnoticed.
 */
#include "fake_objc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  SEL selector;
  void* imp;
  int stret;
} Method;

typedef struct {
  Method* items;
  int count;
  int capacity;
} MethodList;

struct FakeClass {
  FakeClass* isa;  // the metaclass (class methods); a class is itself an object
  uint32_t magic;
  int32_t refcount;
  uint64_t serial;
  void (*dealloc)(FakeObject*);
  const char* name;
  FakeClass* super;
  MethodList methods;
  int64_t live;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static FakeClass* g_classes[128];
static int g_num_classes;
static char* g_selectors[512];
static int g_num_selectors;
static uint64_t g_serial;

/* ------------------------------------------------------------------------------- selectors */

SEL sel_registerName(const char* name) {
  pthread_mutex_lock(&g_mu);
  for (int i = 0; i < g_num_selectors; ++i) {
    if (strcmp(g_selectors[i], name) == 0) {
      pthread_mutex_unlock(&g_mu);
      return g_selectors[i];
    }
  }
  if (g_num_selectors == 512) abort();
  char* copy = strdup(name);
  g_selectors[g_num_selectors++] = copy;
  pthread_mutex_unlock(&g_mu);
  return copy;
}

/* --------------------------------------------------------------------------------- classes */

static FakeClass* find_class(const char* name) {
  for (int i = 0; i < g_num_classes; ++i) {
    if (strcmp(g_classes[i]->name, name) == 0) return g_classes[i];
  }
  return NULL;
}

id objc_getClass(const char* name) {
  pthread_mutex_lock(&g_mu);
  FakeClass* cls = find_class(name);
  pthread_mutex_unlock(&g_mu);
  return cls;
}

FakeClass* fake_objc_class(const char* name, FakeClass* super) {
  pthread_mutex_lock(&g_mu);
  FakeClass* cls = find_class(name);
  if (cls == NULL) {
    FakeClass* meta = calloc(1, sizeof(FakeClass));
    meta->magic = FAKE_OBJC_MAGIC;
    meta->name = strdup(name);
    meta->super = super != NULL ? super->isa : NULL;
    cls = calloc(1, sizeof(FakeClass));
    cls->isa = meta;
    cls->magic = FAKE_OBJC_MAGIC;
    cls->refcount = 1;
    cls->name = meta->name;
    cls->super = super;
    g_classes[g_num_classes++] = cls;
  }
  pthread_mutex_unlock(&g_mu);
  return cls;
}

void fake_objc_method(FakeClass* cls, int class_method, const char* selector, void* imp,
                      int stret) {
  FakeClass* target = class_method ? cls->isa : cls;
  MethodList* list = &target->methods;
  if (list->count == list->capacity) {
    list->capacity = list->capacity ? 2 * list->capacity : 16;
    list->items = realloc(list->items, list->capacity * sizeof(Method));
  }
  list->items[list->count++] = (Method){sel_registerName(selector), imp, stret};
}

/* --------------------------------------------------------------------------------- objects */

void* fake_objc_new(FakeClass* cls, uint64_t size, void (*dealloc)(FakeObject*)) {
  FakeObject* obj = calloc(1, size);
  obj->isa = cls;
  obj->magic = FAKE_OBJC_MAGIC;
  obj->refcount = 1;
  obj->dealloc = dealloc;
  pthread_mutex_lock(&g_mu);
  obj->serial = ++g_serial;
  cls->live++;
  pthread_mutex_unlock(&g_mu);
  return obj;
}

void fake_objc_retain(id object) {
  if (object == NULL) return;
  __atomic_add_fetch(&((FakeObject*)object)->refcount, 1, __ATOMIC_SEQ_CST);
}

void fake_objc_release(id object) {
  if (object == NULL) return;
  FakeObject* obj = object;
  int32_t left = __atomic_sub_fetch(&obj->refcount, 1, __ATOMIC_SEQ_CST);
  if (left < 0) {
    fprintf(stderr, "fake objc: over-release of a %s\n", obj->isa->name);
    abort();
  }
  if (left > 0) return;
  if (obj->dealloc != NULL) obj->dealloc(obj);
  pthread_mutex_lock(&g_mu);
  obj->isa->live--;
  pthread_mutex_unlock(&g_mu);
  obj->magic = 0;
  free(obj);
}

const char* fake_objc_class_name(id object) { return ((FakeObject*)object)->isa->name; }

int64_t fake_objc_live(const char* name) {
  int64_t total = 0;
  pthread_mutex_lock(&g_mu);
  for (int i = 0; i < g_num_classes; ++i) {
    if (name == NULL || strcmp(g_classes[i]->name, name) == 0) total += g_classes[i]->live;
  }
  pthread_mutex_unlock(&g_mu);
  return total;
}

/* ------------------------------------------------------------------------ autorelease pools */

typedef struct {
  id* items;
  size_t count;
  size_t capacity;
  size_t depth;  // pools pushed
} PoolStack;

static __thread PoolStack t_pools;

void* objc_autoreleasePoolPush(void) {
  t_pools.depth++;
  return (void*)(t_pools.count + 1);  // the marker: objects above it belong to this pool
}

void objc_autoreleasePoolPop(void* marker) {
  size_t keep = (size_t)marker - 1;
  if (t_pools.depth == 0 || keep > t_pools.count) {
    fprintf(stderr, "fake objc: autorelease pool popped out of order\n");
    abort();
  }
  while (t_pools.count > keep) fake_objc_release(t_pools.items[--t_pools.count]);
  t_pools.depth--;
}

id fake_objc_autorelease(id object) {
  if (object == NULL) return NULL;
  if (t_pools.depth == 0) {
    // Real Objective-C leaks the object and logs; a backend must always have a pool here.
    fprintf(stderr, "fake objc: a %s was autoreleased with no pool in place\n",
            fake_objc_class_name(object));
    abort();
  }
  if (t_pools.count == t_pools.capacity) {
    t_pools.capacity = t_pools.capacity ? 2 * t_pools.capacity : 64;
    t_pools.items = realloc(t_pools.items, t_pools.capacity * sizeof(id));
  }
  t_pools.items[t_pools.count++] = object;
  return object;
}

/* --------------------------------------------------------------------------------- messages */

static long nil_imp(void) { return 0; }  // messages to nil return zero, as in Objective-C

static void* lookup(id self, SEL sel, int via_stret) {
  if (self == NULL) return (void*)nil_imp;
  FakeObject* obj = self;
  if (obj->magic != FAKE_OBJC_MAGIC) {
    fprintf(stderr,
            "fake objc: objc_msgSend%s to %p, which is not an object (selector %p): "
            "wrong prototype or entry point\n",
            via_stret ? "_stret" : "", self, (void*)sel);
    abort();
  }
  for (FakeClass* cls = obj->isa; cls != NULL; cls = cls->super) {
    for (int i = 0; i < cls->methods.count; ++i) {
      Method* m = &cls->methods.items[i];
      if (m->selector != sel) continue;
      if (m->stret != via_stret) {
        fprintf(stderr, "fake objc: -[%s %s] %s through objc_msgSend%s\n", obj->isa->name, sel,
                m->stret ? "returns a struct in memory but was sent" : "was sent",
                via_stret ? "_stret" : "");
        abort();
      }
      return m->imp;
    }
  }
  fprintf(stderr, "fake objc: -[%s %s]: unrecognized selector sent to instance %p\n",
          obj->isa->name, sel, self);
  abort();
}

__attribute__((visibility("hidden"), used)) void* fake_objc_lookup(id self, SEL sel) {
  return lookup(self, sel, 0);
}

__attribute__((visibility("hidden"), used)) void* fake_objc_lookup_stret(id self, SEL sel) {
#if defined(__x86_64__)
  return lookup(self, sel, 1);
#else
  return lookup(self, sel, 0);
#endif
}

/* The trampolines' symbol directives: Mach-O (the macOS job) prefixes C names with '_' and has
 * no .type/.size; ELF has both. */
#if defined(__APPLE__)
#define FAKE_C(name) "_" #name
#define FAKE_BEGIN(name) ".globl _" #name "\n.p2align 2\n_" #name ":\n"
#define FAKE_END(name) ""
#else
#define FAKE_C(name) #name
#define FAKE_BEGIN(name) ".globl " #name "\n.type " #name ", %function\n" #name ":\n"
#define FAKE_END(name) ".size " #name ", .-" #name "\n"
#endif

#if defined(__x86_64__)
/* Saves rdi, rsi, rdx, rcx, r8, r9, rax (the vector-register count of variadic calls) and
 * xmm0-7 in a frame that keeps rsp 16-byte aligned at the call (entry: rsp = 8 mod 16). */
#define FAKE_SAVE                                                                              \
  "  subq $200, %rsp\n"                                                                        \
  "  movq %rdi, 0(%rsp)\n  movq %rsi, 8(%rsp)\n  movq %rdx, 16(%rsp)\n"                        \
  "  movq %rcx, 24(%rsp)\n  movq %r8, 32(%rsp)\n  movq %r9, 40(%rsp)\n  movq %rax, 48(%rsp)\n" \
  "  movdqu %xmm0, 56(%rsp)\n  movdqu %xmm1, 72(%rsp)\n  movdqu %xmm2, 88(%rsp)\n"             \
  "  movdqu %xmm3, 104(%rsp)\n  movdqu %xmm4, 120(%rsp)\n  movdqu %xmm5, 136(%rsp)\n"          \
  "  movdqu %xmm6, 152(%rsp)\n  movdqu %xmm7, 168(%rsp)\n"
#define FAKE_RESTORE_AND_JUMP                                                                  \
  "  movq %rax, %r11\n"                                                                        \
  "  movq 0(%rsp), %rdi\n  movq 8(%rsp), %rsi\n  movq 16(%rsp), %rdx\n"                        \
  "  movq 24(%rsp), %rcx\n  movq 32(%rsp), %r8\n  movq 40(%rsp), %r9\n  movq 48(%rsp), %rax\n" \
  "  movdqu 56(%rsp), %xmm0\n  movdqu 72(%rsp), %xmm1\n  movdqu 88(%rsp), %xmm2\n"             \
  "  movdqu 104(%rsp), %xmm3\n  movdqu 120(%rsp), %xmm4\n  movdqu 136(%rsp), %xmm5\n"          \
  "  movdqu 152(%rsp), %xmm6\n  movdqu 168(%rsp), %xmm7\n"                                     \
  "  addq $200, %rsp\n"                                                                        \
  "  jmp *%r11\n"
__asm__(
    ".text\n" FAKE_BEGIN(objc_msgSend) FAKE_SAVE "  call " FAKE_C(fake_objc_lookup) "\n"
    FAKE_RESTORE_AND_JUMP FAKE_END(objc_msgSend)
    /* objc_msgSend_stret(void* result, id self, SEL sel, ...): the receiver is the 2nd arg. */
    FAKE_BEGIN(objc_msgSend_stret) FAKE_SAVE
    "  movq %rsi, %rdi\n  movq %rdx, %rsi\n"
    "  call " FAKE_C(fake_objc_lookup_stret) "\n" FAKE_RESTORE_AND_JUMP
    FAKE_END(objc_msgSend_stret));
#elif defined(__aarch64__)
/* Saves x0-x8 (x8: the address of a returned struct) and q0-q7; jumps through x16 as the
 * real one does. */
__asm__(
    ".text\n" FAKE_BEGIN(objc_msgSend)
    "  stp x29, x30, [sp, #-224]!\n"
    "  mov x29, sp\n"
    "  stp x0, x1, [sp, #16]\n  stp x2, x3, [sp, #32]\n  stp x4, x5, [sp, #48]\n"
    "  stp x6, x7, [sp, #64]\n  str x8, [sp, #80]\n"
    "  stp q0, q1, [sp, #96]\n  stp q2, q3, [sp, #128]\n  stp q4, q5, [sp, #160]\n"
    "  stp q6, q7, [sp, #192]\n"
    "  bl " FAKE_C(fake_objc_lookup) "\n"
    "  mov x16, x0\n"
    "  ldp x0, x1, [sp, #16]\n  ldp x2, x3, [sp, #32]\n  ldp x4, x5, [sp, #48]\n"
    "  ldp x6, x7, [sp, #64]\n  ldr x8, [sp, #80]\n"
    "  ldp q0, q1, [sp, #96]\n  ldp q2, q3, [sp, #128]\n  ldp q4, q5, [sp, #160]\n"
    "  ldp q6, q7, [sp, #192]\n"
    "  ldp x29, x30, [sp], #224\n"
    "  br x16\n" FAKE_END(objc_msgSend));
#else
#error "the fake objc_msgSend exists for x86_64 and aarch64 only"
#endif
