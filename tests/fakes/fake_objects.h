/*
 * The live objects of a fake vendor library (handles, descriptors, layouts), so that a destroyed
 * or foreign pointer is caught instead of dereferenced.  Every object starts with its int kind
 * (the fake's first struct member); the count of live ones is fake_log.h's live_allocations.
 * Include after fake_log.h.
 */
#ifndef TVM_RUNTIME_TESTS_FAKES_FAKE_OBJECTS_H_
#define TVM_RUNTIME_TESTS_FAKES_FAKE_OBJECTS_H_

#define FAKE_MAX_OBJECTS 4096
static void* g_fake_objects[FAKE_MAX_OBJECTS];
static pthread_mutex_t g_fake_objects_mu = PTHREAD_MUTEX_INITIALIZER;

/* A zeroed object of `size` bytes whose leading int is `kind`, registered as live. */
FAKE_HELPER void* FakeObjectNew(size_t size, int kind) {
  int* o = (int*)calloc(1, size);
  *o = kind;
  pthread_mutex_lock(&g_fake_objects_mu);
  for (int i = 0; i < FAKE_MAX_OBJECTS; ++i) {
    if (g_fake_objects[i] == NULL) {
      g_fake_objects[i] = o;
      break;
    }
  }
  g_live_allocations++;
  pthread_mutex_unlock(&g_fake_objects_mu);
  return o;
}

/* Whether `p` is a live object of `kind`. */
FAKE_HELPER int FakeObjectLive(const void* p, int kind) {
  int found = 0;
  pthread_mutex_lock(&g_fake_objects_mu);
  for (int i = 0; i < FAKE_MAX_OBJECTS && !found; ++i) found = p != NULL && g_fake_objects[i] == p;
  pthread_mutex_unlock(&g_fake_objects_mu);
  return found && *(const int*)p == kind;
}

/* Frees a live object of `kind` (logging "<what> <p>") and returns 1; for anything else logs
 * the error and returns 0. */
FAKE_HELPER int FakeObjectFree(void* p, int kind, const char* what) {
  if (!FakeObjectLive(p, kind)) {
    Log("error: %s of %p, which is not a live object of that kind", what, p);
    return 0;
  }
  pthread_mutex_lock(&g_fake_objects_mu);
  for (int i = 0; i < FAKE_MAX_OBJECTS; ++i) {
    if (g_fake_objects[i] == p) g_fake_objects[i] = NULL;
  }
  g_live_allocations--;
  pthread_mutex_unlock(&g_fake_objects_mu);
  Log("%s %p", what, p);
  free(p);
  return 1;
}

#endif  // TVM_RUNTIME_TESTS_FAKES_FAKE_OBJECTS_H_
