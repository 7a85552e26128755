/*
 * A fake cuBLASLt (libcublasLt.so stand-in) for testing cublas_json without a GPU, on the fake
 * CUDA driver (tests/fakes/fake_cuda.c), whose device memory is host memory.
 *
 * It implements the entry points tvm-runtime-cuda resolves and checks every call the way the
 * real library would fail it: handles, descriptors and layouts must be live objects it created
 * (never destroyed, never of another kind); the layouts must agree with the operation
 * (transposes, shapes, leading dimensions, batch counts and strides, dtypes for the compute
 * type); the preference must carry a workspace limit the chosen algorithm fits in; cublasLtMatmul
 * must get an algorithm from the heuristic, a workspace at least that large, C == D.  A
 * rejected call returns CUBLAS_STATUS_INVALID_VALUE and logs "error: <why>".  Every call is
 * logged (fake_cublaslt_log()), and the product is computed on the CPU in double precision, so
 * tests compare outputs with numpy.
 *
 * Compute types: CUBLAS_COMPUTE_32F (plain fp32 for float32 inputs), CUBLAS_COMPUTE_32F_FAST_TF32
 * (float32 inputs only; the product is computed on TF32-rounded operands, fake_tf32.h) and
 * CUBLAS_COMPUTE_32I.  The matmul's log line names the compute type and tf32=0/1.
 *
 * Environment:
 *   FAKE_CUBLASLT_NO_ALGO=1        the heuristic finds no algorithm
 *   FAKE_CUBLASLT_ALGO_WORKSPACE=n the workspace the algorithm needs (default 1 MiB)
 */
#define FAKE_DRIVER_PREFIX fake_cublaslt
#include <math.h>

#include "fake_half.h"
#include "fake_log.h"
#include "fake_objects.h"
#include "fake_tf32.h"

typedef int Status;
enum { OK = 0, INVALID = 7, NOT_SUPPORTED = 15 };
enum { KIND_HANDLE = 1, KIND_DESC, KIND_LAYOUT, KIND_PREF };
enum { R_32F = 0, R_16F = 2, R_8I = 3, R_32I = 10, R_16BF = 14, R_8F_E4M3 = 28 };
enum { COMPUTE_32F = 68, COMPUTE_32I = 72, COMPUTE_32F_FAST_TF32 = 77 };
enum { EPI_DEFAULT = 1, EPI_RELU = 2, EPI_BIAS = 4, EPI_GELU = 32 };
#define ALGO_MAGIC 0xA160A160A160ULL

typedef struct {
  int kind;
} Object;
typedef struct {
  Object base;
} Handle;
typedef struct {
  Object base;
  int compute, scale_type, transa, transb, epilogue;
  const void *bias, *scale_a, *scale_b;
} Desc;
typedef struct {
  Object base;
  int type;
  uint64_t rows, cols;
  int64_t ld, stride;
  int batch;
} Layout;
typedef struct {
  Object base;
  size_t max_workspace;
  int workspace_set;
} Pref;
typedef struct {
  uint64_t data[8];
} Algo;
typedef struct {
  Algo algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
} HeuristicResult;

static void* New(size_t size, int kind) { return FakeObjectNew(size, kind); }
static int Live(const void* p, int kind) { return FakeObjectLive(p, kind); }
static Status Free(void* p, int kind, const char* what) {
  return FakeObjectFree(p, kind, what) ? OK : INVALID;
}

static Status Reject(const char* fmt, const char* detail) {
  Log(fmt, detail);
  return INVALID;
}

API Status cublasLtCreate(Handle** out) {
  if (out == NULL) return Reject("error: cublasLtCreate(%s)", "NULL");
  *out = (Handle*)New(sizeof(Handle), KIND_HANDLE);
  Log("cublasLtCreate handle=%p", (void*)*out);
  return OK;
}
API Status cublasLtDestroy(Handle* h) { return Free(h, KIND_HANDLE, "cublasLtDestroy"); }
API size_t cublasLtGetVersion(void) { return 130100; }
API const char* cublasLtGetStatusString(Status s) {
  switch (s) {
    case OK:
      return "CUBLAS_STATUS_SUCCESS";
    case INVALID:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "CUBLAS_STATUS_UNKNOWN";
  }
}

API Status cublasLtMatmulDescCreate(Desc** out, int compute, int scale_type) {
  if (compute != COMPUTE_32F && compute != COMPUTE_32I && compute != COMPUTE_32F_FAST_TF32) {
    return Reject("error: cublasLtMatmulDescCreate: compute type %s", "unsupported");
  }
  if ((compute != COMPUTE_32I) != (scale_type == R_32F) ||
      (compute == COMPUTE_32I) != (scale_type == R_32I)) {
    return Reject("error: cublasLtMatmulDescCreate: %s", "scale type does not match the compute");
  }
  Desc* d = (Desc*)New(sizeof(Desc), KIND_DESC);
  d->compute = compute;
  d->scale_type = scale_type;
  d->epilogue = EPI_DEFAULT;
  *out = d;
  Log("cublasLtMatmulDescCreate desc=%p compute=%d scale=%d", (void*)d, compute, scale_type);
  return OK;
}
API Status cublasLtMatmulDescDestroy(Desc* d) {
  return Free(d, KIND_DESC, "cublasLtMatmulDescDestroy");
}

static Status CopyAttr(void* dst, size_t want, const void* buf, size_t size, const char* name) {
  if (buf == NULL || size != want) return Reject("error: attribute %s: wrong size", name);
  memcpy(dst, buf, size);
  return OK;
}

API Status cublasLtMatmulDescSetAttribute(Desc* d, int attr, const void* buf, size_t size) {
  if (!Live(d, KIND_DESC)) return Reject("error: cublasLtMatmulDescSetAttribute: %s", "bad desc");
  Status s;
  switch (attr) {
    case 3:
      s = CopyAttr(&d->transa, sizeof(int), buf, size, "TRANSA");
      break;
    case 4:
      s = CopyAttr(&d->transb, sizeof(int), buf, size, "TRANSB");
      break;
    case 7:
      s = CopyAttr(&d->epilogue, sizeof(int), buf, size, "EPILOGUE");
      break;
    case 8:
      s = CopyAttr(&d->bias, sizeof(void*), buf, size, "BIAS_POINTER");
      break;
    case 17:
      s = CopyAttr(&d->scale_a, sizeof(void*), buf, size, "A_SCALE_POINTER");
      break;
    case 18:
      s = CopyAttr(&d->scale_b, sizeof(void*), buf, size, "B_SCALE_POINTER");
      break;
    default:
      return Reject("error: cublasLtMatmulDescSetAttribute: attribute %s not faked", "?");
  }
  if (s == OK) Log("cublasLtMatmulDescSetAttribute desc=%p attr=%d", (void*)d, attr);
  if (s == OK && (d->transa > 1 || d->transb > 1 || d->transa < 0 || d->transb < 0)) {
    return Reject("error: %s", "transpose must be CUBLAS_OP_N or CUBLAS_OP_T");
  }
  return s;
}

static int KnownType(int t) {
  return t == R_32F || t == R_16F || t == R_8I || t == R_32I || t == R_16BF || t == R_8F_E4M3;
}

API Status cublasLtMatrixLayoutCreate(Layout** out, int type, uint64_t rows, uint64_t cols,
                                      int64_t ld) {
  if (!KnownType(type)) return Reject("error: cublasLtMatrixLayoutCreate: %s", "unknown type");
  if (rows == 0 || cols == 0 || ld < (int64_t)rows) {
    return Reject("error: cublasLtMatrixLayoutCreate: %s", "ld smaller than rows, or empty");
  }
  Layout* l = (Layout*)New(sizeof(Layout), KIND_LAYOUT);
  l->type = type;
  l->rows = rows;
  l->cols = cols;
  l->ld = ld;
  l->batch = 1;
  *out = l;
  Log("cublasLtMatrixLayoutCreate layout=%p type=%d rows=%llu cols=%llu ld=%lld", (void*)l, type,
      (unsigned long long)rows, (unsigned long long)cols, (long long)ld);
  return OK;
}
API Status cublasLtMatrixLayoutDestroy(Layout* l) {
  return Free(l, KIND_LAYOUT, "cublasLtMatrixLayoutDestroy");
}
API Status cublasLtMatrixLayoutSetAttribute(Layout* l, int attr, const void* buf, size_t size) {
  if (!Live(l, KIND_LAYOUT)) return Reject("error: cublasLtMatrixLayoutSetAttribute: %s", "bad");
  Status s;
  if (attr == 5) {
    s = CopyAttr(&l->batch, sizeof(int), buf, size, "BATCH_COUNT");
  } else if (attr == 6) {
    s = CopyAttr(&l->stride, sizeof(int64_t), buf, size, "STRIDED_BATCH_OFFSET");
  } else {
    return Reject("error: cublasLtMatrixLayoutSetAttribute: attribute %s not faked", "?");
  }
  if (s == OK) Log("cublasLtMatrixLayoutSetAttribute layout=%p attr=%d", (void*)l, attr);
  return s;
}

API Status cublasLtMatmulPreferenceCreate(Pref** out) {
  *out = (Pref*)New(sizeof(Pref), KIND_PREF);
  Log("cublasLtMatmulPreferenceCreate pref=%p", (void*)*out);
  return OK;
}
API Status cublasLtMatmulPreferenceDestroy(Pref* p) {
  return Free(p, KIND_PREF, "cublasLtMatmulPreferenceDestroy");
}
API Status cublasLtMatmulPreferenceSetAttribute(Pref* p, int attr, const void* buf, size_t size) {
  if (!Live(p, KIND_PREF) || attr != 1) return Reject("error: preference attribute %s", "bad");
  Status s = CopyAttr(&p->max_workspace, sizeof(size_t), buf, size, "MAX_WORKSPACE_BYTES");
  if (s == OK) {
    p->workspace_set = 1;
    Log("cublasLtMatmulPreferenceSetAttribute pref=%p max_workspace=%zu", (void*)p,
        p->max_workspace);
  }
  return s;
}

/* Which input and output types cuBLASLt accepts for a compute type (the subset we use). */
static const char* CheckTypes(const Desc* d, const Layout* a, const Layout* b, const Layout* c) {
  if (a->type != b->type) return "A and B types differ";
  if (d->compute == COMPUTE_32I) {
    return a->type == R_8I && c->type == R_32I ? NULL : "32I compute needs int8 A/B and int32 C";
  }
  if (a->type == R_8I || c->type == R_32I) return "int8/int32 need the 32I compute type";
  if (d->compute == COMPUTE_32F_FAST_TF32 && a->type != R_32F) {
    return "the FAST_TF32 compute type takes float32 A/B";
  }
  if (a->type == R_8F_E4M3 && d->transa != 1) return "fp8 GEMMs need TRANSA=T";
  if (a->type == R_32F && c->type != R_32F) return "fp32 inputs need an fp32 output";
  return NULL;
}

/* Everything the operation needs, as the real library checks it; NULL when valid. */
static const char* Validate(const Handle* h, const Desc* d, const Layout* a, const Layout* b,
                            const Layout* c, const Layout* dd, uint64_t* m, uint64_t* n,
                            uint64_t* k) {
  if (!Live(h, KIND_HANDLE)) return "the handle is not live";
  if (!Live(d, KIND_DESC)) return "the matmul descriptor is not live";
  if (!Live(a, KIND_LAYOUT) || !Live(b, KIND_LAYOUT) || !Live(c, KIND_LAYOUT) ||
      !Live(dd, KIND_LAYOUT)) {
    return "a layout is not live";
  }
  if (c->type != dd->type || c->rows != dd->rows || c->cols != dd->cols || c->ld != dd->ld) {
    return "C and D layouts differ";
  }
  const char* types = CheckTypes(d, a, b, c);
  if (types) return types;
  uint64_t a_rows = d->transa ? a->cols : a->rows, a_cols = d->transa ? a->rows : a->cols;
  uint64_t b_rows = d->transb ? b->cols : b->rows, b_cols = d->transb ? b->rows : b->cols;
  if (a_rows != c->rows || b_cols != c->cols || a_cols != b_rows) {
    return "op(A) x op(B) does not have the shape of D";
  }
  if (a->batch != b->batch || a->batch != c->batch || a->batch < 1) return "batch counts differ";
  if (a->batch > 1) {
    if (a->stride < (int64_t)(a->ld * a->cols) || b->stride < (int64_t)(b->ld * b->cols) ||
        c->stride < (int64_t)(c->ld * c->cols)) {
      return "batch strides overlap";
    }
  }
  int epi = d->epilogue;
  if (epi != EPI_DEFAULT && epi != EPI_BIAS && epi != (EPI_RELU | EPI_BIAS) &&
      epi != (EPI_GELU | EPI_BIAS) && epi != EPI_RELU && epi != EPI_GELU) {
    return "unknown epilogue";
  }
  if ((epi & EPI_BIAS) && d->bias == NULL) return "a BIAS epilogue without BIAS_POINTER";
  if (!(epi & EPI_BIAS) && d->bias != NULL) return "BIAS_POINTER without a BIAS epilogue";
  if ((d->scale_a || d->scale_b) && a->type != R_8F_E4M3) return "scale pointers need fp8";
  *m = c->rows;
  *n = c->cols;
  *k = a_cols;
  return NULL;
}

static size_t AlgoWorkspace(void) {
  return (size_t)EnvInt("FAKE_CUBLASLT_ALGO_WORKSPACE", 1 << 20);
}

API Status cublasLtMatmulAlgoGetHeuristic(Handle* h, Desc* d, Layout* a, Layout* b, Layout* c,
                                          Layout* dd, Pref* pref, int requested,
                                          HeuristicResult* results, int* returned) {
  uint64_t m, n, k;
  const char* why = Validate(h, d, a, b, c, dd, &m, &n, &k);
  if (why) return Reject("error: cublasLtMatmulAlgoGetHeuristic: %s", why);
  if (!Live(pref, KIND_PREF)) return Reject("error: heuristic: %s", "the preference is not live");
  if (!pref->workspace_set) return Reject("error: heuristic: %s", "no MAX_WORKSPACE_BYTES");
  if (requested < 1 || results == NULL || returned == NULL) {
    return Reject("error: heuristic: %s", "no room for results");
  }
  *returned = 0;
  if (EnvInt("FAKE_CUBLASLT_NO_ALGO", 0) || AlgoWorkspace() > pref->max_workspace) {
    Log("cublasLtMatmulAlgoGetHeuristic found=0");
    return OK;
  }
  memset(&results[0], 0, sizeof(results[0]));
  results[0].algo.data[0] = ALGO_MAGIC;
  results[0].algo.data[1] = (uint64_t)(uintptr_t)d;  // an algorithm is chosen for this desc
  results[0].workspaceSize = AlgoWorkspace();
  results[0].state = OK;
  *returned = 1;
  Log("cublasLtMatmulAlgoGetHeuristic found=1 m=%llu n=%llu k=%llu", (unsigned long long)m,
      (unsigned long long)n, (unsigned long long)k);
  return OK;
}

/* ---- element access ------------------------------------------------------------------------ */

static float E4m3ToFloat(uint8_t v) {
  int sign = v >> 7, exp = (v >> 3) & 0xf, man = v & 7;
  float r = exp == 0 ? ldexpf((float)man, -9) : ldexpf(1.0f + man / 8.0f, exp - 7);
  if (exp == 15 && man == 7) r = NAN;
  return sign ? -r : r;
}

static double Load(int type, const void* base, int64_t i) {
  switch (type) {
    case R_32F:
      return ((const float*)base)[i];
    case R_16F:
      return HalfToFloat(((const uint16_t*)base)[i]);
    case R_16BF: {
      uint32_t bits = (uint32_t)((const uint16_t*)base)[i] << 16;
      float f;
      memcpy(&f, &bits, 4);
      return f;
    }
    case R_8I:
      return ((const int8_t*)base)[i];
    case R_32I:
      return ((const int32_t*)base)[i];
    default:
      return E4m3ToFloat(((const uint8_t*)base)[i]);
  }
}

static void Store(int type, void* base, int64_t i, double v) {
  switch (type) {
    case R_32F:
      ((float*)base)[i] = (float)v;
      break;
    case R_16F:
      ((uint16_t*)base)[i] = FloatToHalf((float)v);
      break;
    case R_16BF: {
      float f = (float)v;
      uint32_t bits;
      memcpy(&bits, &f, 4);
      bits += 0x7fff + ((bits >> 16) & 1);
      ((uint16_t*)base)[i] = (uint16_t)(bits >> 16);
      break;
    }
    default:
      ((int32_t*)base)[i] = (int32_t)v;
  }
}

/* Element (r, c) of op(X) in batch `bt`, X column-major. */
static double At(const Layout* l, const void* x, int trans, uint64_t r, uint64_t c, int bt) {
  uint64_t row = trans ? c : r, col = trans ? r : c;
  return Load(l->type, x, bt * l->stride + (int64_t)(col * (uint64_t)l->ld + row));
}

static double Epilogue(int epi, double v) {
  if (epi & EPI_RELU) return v > 0 ? v : 0;
  if (epi & EPI_GELU) {  // cuBLASLt's GELU is the tanh approximation
    return 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  }
  return v;
}

API Status cublasLtMatmul(Handle* h, Desc* d, const void* alpha, const void* A, Layout* a,
                          const void* B, Layout* b, const void* beta, const void* C, Layout* c,
                          void* D, Layout* dd, const Algo* algo, void* workspace,
                          size_t workspace_size, void* stream) {
  uint64_t m, n, k;
  const char* why = Validate(h, d, a, b, c, dd, &m, &n, &k);
  if (why) return Reject("error: cublasLtMatmul: %s", why);
  if (algo == NULL || algo->data[0] != ALGO_MAGIC || algo->data[1] != (uint64_t)(uintptr_t)d) {
    return Reject("error: cublasLtMatmul: %s", "the algorithm is not from the heuristic for desc");
  }
  if (workspace_size < AlgoWorkspace() || (workspace_size > 0 && workspace == NULL)) {
    return Reject("error: cublasLtMatmul: %s", "the workspace is smaller than the algorithm's");
  }
  if (alpha == NULL || beta == NULL || A == NULL || B == NULL || D == NULL) {
    return Reject("error: cublasLtMatmul: %s", "a NULL pointer");
  }
  int integer = d->compute == COMPUTE_32I;
  double al = integer ? *(const int32_t*)alpha : *(const float*)alpha;
  double be = integer ? *(const int32_t*)beta : *(const float*)beta;
  if (be != 0 && C != D) return Reject("error: cublasLtMatmul: %s", "beta != 0 with C != D");
  /* The workspace is device memory of the fake driver (host memory): touch both ends. */
  if (workspace_size > 0) {
    ((volatile char*)workspace)[0] = 1;
    ((volatile char*)workspace)[workspace_size - 1] = 1;
  }
  int tf32 = d->compute == COMPUTE_32F_FAST_TF32 && FakeTf32Enabled();
  double scale = 1;
  if (d->scale_a) scale *= *(const float*)d->scale_a;
  if (d->scale_b) scale *= *(const float*)d->scale_b;
  for (int bt = 0; bt < a->batch; ++bt) {
    for (uint64_t i = 0; i < m; ++i) {
      for (uint64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (uint64_t p = 0; p < k; ++p) {
          double x = At(a, A, d->transa, i, p, bt), y = At(b, B, d->transb, p, j, bt);
          acc += tf32 ? FakeTf32Round(x) * FakeTf32Round(y) : x * y;
        }
        double v = al * scale * acc;
        if (be != 0) v += be * Load(c->type, C, bt * c->stride + (int64_t)(j * c->ld + i));
        if (d->epilogue & EPI_BIAS) v += Load(dd->type, d->bias, (int64_t)i);
        Store(dd->type, D, bt * dd->stride + (int64_t)(j * (uint64_t)dd->ld + i),
              Epilogue(d->epilogue, v));
      }
    }
  }
  Log("cublasLtMatmul handle=%p desc=%p compute=%d ab_type=%d d_type=%d m=%llu n=%llu k=%llu "
      "transa=%d transb=%d epilogue=%d bias=%p batch=%d alpha=%g scaled=%d A=%p B=%p D=%p "
      "workspace=%p workspace_size=%zu stream=%p tf32=%d",
      (void*)h, (void*)d, d->compute, a->type, dd->type, (unsigned long long)m,
      (unsigned long long)n, (unsigned long long)k, d->transa, d->transb, d->epilogue, d->bias,
      a->batch, al, d->scale_a != NULL || d->scale_b != NULL, A, B, D, workspace, workspace_size,
      stream, tf32);
  return OK;
}
