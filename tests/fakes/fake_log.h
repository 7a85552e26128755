/*
 * What every fake vendor library of the test suite (tests/fakes/fake_*.c) shares: the text log of
 * calls that tests read back, the count of live allocations, FNV-1a hashes of loaded images and
 * integer settings from the environment.  tests/fakes/__init__.py builds the fakes and reads the
 * log back (FakeLibrary.log()).
 *
 * Include it once per fake, after defining FAKE_DRIVER_PREFIX (e.g. fake_cuda): the fake then
 * exports <prefix>_log(), <prefix>_clear_log() and <prefix>_live_allocations().
 */
#ifndef TVM_RUNTIME_TESTS_FAKES_FAKE_LOG_H_
#define TVM_RUNTIME_TESTS_FAKES_FAKE_LOG_H_

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_DRIVER_PREFIX
#error "define FAKE_DRIVER_PREFIX before including fake_log.h"
#endif

#define API __attribute__((visibility("default")))
/* Not every fake uses every helper below. */
#define FAKE_HELPER static __attribute__((unused))
#define FAKE_JOIN2(a, b) a##_##b
#define FAKE_JOIN(a, b) FAKE_JOIN2(a, b)
#define FAKE_EXPORT(name) FAKE_JOIN(FAKE_DRIVER_PREFIX, name)

static char* g_log = NULL;
static size_t g_log_size = 0, g_log_cap = 0;
static long g_live_allocations = 0;
/* Disco's thread workers call a fake from several threads at once. */
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;

/* Appends one line ("<what> key=value ...") to the log. */
FAKE_HELPER void Log(const char* fmt, ...) {
  char line[8192]; /* Metal's compile log quotes whole MSL lines */
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof(line) - 2) n = (int)sizeof(line) - 2;
  line[n++] = '\n';
  pthread_mutex_lock(&g_log_mu);
  if (g_log_size + (size_t)n + 1 > g_log_cap) {
    g_log_cap = (g_log_cap + (size_t)n + 1) * 2;
    g_log = (char*)realloc(g_log, g_log_cap);
  }
  memcpy(g_log + g_log_size, line, (size_t)n);
  g_log_size += (size_t)n;
  g_log[g_log_size] = '\0';
  pthread_mutex_unlock(&g_log_mu);
}

API const char* FAKE_EXPORT(log)(void) { return g_log ? g_log : ""; }
API void FAKE_EXPORT(clear_log)(void) {
  pthread_mutex_lock(&g_log_mu);
  g_log_size = 0;
  if (g_log) g_log[0] = '\0';
  pthread_mutex_unlock(&g_log_mu);
}
API long FAKE_EXPORT(live_allocations)(void) { return g_live_allocations; }

/* FNV-1a, so tests can check which image was loaded. */
FAKE_HELPER uint64_t Fnv1a(const char* p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
  return h;
}

FAKE_HELPER int EnvInt(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

/* The size of an ELF64 file: it ends with its section or its program header table. */
FAKE_HELPER size_t Elf64Size(const char* p) {
  uint64_t shoff, phoff;
  uint16_t phentsize, phnum, shentsize, shnum;
  memcpy(&phoff, p + 0x20, 8);
  memcpy(&shoff, p + 0x28, 8);
  memcpy(&phentsize, p + 0x36, 2);
  memcpy(&phnum, p + 0x38, 2);
  memcpy(&shentsize, p + 0x3A, 2);
  memcpy(&shnum, p + 0x3C, 2);
  uint64_t sh_end = shoff + (uint64_t)shentsize * shnum;
  uint64_t ph_end = phoff + (uint64_t)phentsize * phnum;
  return (size_t)(sh_end > ph_end ? sh_end : ph_end);
}

#endif  // TVM_RUNTIME_TESTS_FAKES_FAKE_LOG_H_
