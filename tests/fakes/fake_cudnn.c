/*
 * A fake cuDNN 9 (libcudnn.so.9 stand-in) for testing cudnn_json without a GPU, on the fake
 * CUDA driver (tests/fakes/fake_cuda.c), whose device memory is host memory.
 *
 * It implements the entry points tvm-runtime-cuda resolves and checks every call as cuDNN
 * would: the handle and every descriptor must be live objects of the right kind, fully set;
 * tensor, filter and convolution descriptors must agree (channels, groups, output size, formats,
 * dtypes); the algorithm must be one the heuristic offered (IMPLICIT_PRECOMP_GEMM for an
 * identity activation); the workspace must be at least what cudnnGetConvolutionForwardWorkspace-
 * Size said; the bias must be 1 x K x 1 x 1.  A rejected call returns CUDNN_STATUS_BAD_PARAM and
 * logs "error: <why>".  Every call is logged (fake_cudnn_log()) and the convolution computed on
 * the CPU in double precision, so tests compare outputs with numpy.
 *
 * Math types as cuDNN 9 has them: the convolution descriptor's math type (cudnnSetConvolution-
 * MathType, CUDNN_DEFAULT_MATH until set) decides what the heuristic offers, each candidate with
 * its own mathType: for float32 under DEFAULT or TENSOR_OP math a TF32 kernel (GEMM, TENSOR_OP)
 * ranked before an FMA one (IMPLICIT_PRECOMP_GEMM, FMA); under FMA math only FMA kernels.  A
 * float32 convolution whose descriptor allows tensor cores when it runs computes on TF32-rounded
 * operands (fake_tf32.h).  The run's log line names the descriptor's math type, the math type
 * the heuristic gave that algorithm on that descriptor (-1: not from the heuristic) and tf32=0/1.
 *
 * Environment:
 *   FAKE_CUDNN_WORKSPACE=n  the workspace the algorithms need (default 4096 bytes)
 *   FAKE_CUDNN_NO_ALGO=1    the heuristic offers no usable algorithm
 *   FAKE_CUDNN_TF32_FIRST=1 the heuristic ranks a TF32 candidate first even under FMA math (a
 *                           caller that forbids TF32 must skip it)
 *   FAKE_CUDNN_TF32_ONLY=1  the heuristic offers float32 only TF32 candidates, whatever the math
 */
#define FAKE_DRIVER_PREFIX fake_cudnn
#include "fake_half.h"
#include "fake_log.h"
#include "fake_objects.h"
#include "fake_tf32.h"

typedef int Status;
enum { OK = 0, BAD_PARAM = 2000, NOT_SUPPORTED = 3000 };
enum { KIND_HANDLE = 1, KIND_TENSOR, KIND_FILTER, KIND_CONV, KIND_ACT };
enum { DATA_FLOAT = 0, DATA_HALF = 2 };
enum { NCHW = 0, NHWC = 1 };
enum { CROSS_CORRELATION = 1, ACT_RELU = 1, ACT_IDENTITY = 5, ALGO_PRECOMP = 1, ALGO_GEMM = 2 };
enum { MATH_DEFAULT = 0, MATH_TENSOR_OP = 1, MATH_ALLOW_CONVERSION = 2, MATH_FMA = 3 };
#define ALGOS 8

typedef struct {
  int kind, set;
} Object;
typedef struct {
  Object base;
  void* stream;
} Handle;
typedef struct {
  Object base;
  int format, dtype, n, c, h, w;
} Tensor; /* also the filter: n = K */
typedef struct {
  Object base;
  int pad_h, pad_w, u, v, dil_h, dil_w, mode, compute, groups, math;
  int offered_math[ALGOS]; /* what the last heuristic call said of each algorithm, -1: nothing */
} Conv;
typedef struct {
  Object base;
  int mode, nan;
  double coef;
} Act;
typedef struct {
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism, mathType, reserved[3];
} Perf;

static Status Create(void** out, size_t size, int kind, const char* what) {
  if (out == NULL) {
    Log("error: %s(NULL)", what);
    return BAD_PARAM;
  }
  *out = FakeObjectNew(size, kind);
  Log("%s %p", what, *out);
  return OK;
}

/* The object if `p` is a live object of `kind` (and, when `need_set`, fully described). */
static void* Get(const void* p, int kind, int need_set) {
  if (!FakeObjectLive(p, kind)) return NULL;
  if (need_set && !((const Object*)p)->set) return NULL;
  return (void*)p;
}

static Status Destroy(void* p, int kind, const char* what) {
  return FakeObjectFree(p, kind, what) ? OK : BAD_PARAM;
}

static Status Reject(const char* what, const char* why) {
  Log("error: %s: %s", what, why);
  return BAD_PARAM;
}

API size_t cudnnGetVersion(void) { return 92400; }
API const char* cudnnGetErrorString(Status s) {
  return s == OK              ? "CUDNN_STATUS_SUCCESS"
         : s == NOT_SUPPORTED ? "CUDNN_STATUS_NOT_SUPPORTED"
                              : "CUDNN_STATUS_BAD_PARAM";
}
API Status cudnnCreate(void** h) { return Create(h, sizeof(Handle), KIND_HANDLE, "cudnnCreate"); }
API Status cudnnDestroy(void* h) { return Destroy(h, KIND_HANDLE, "cudnnDestroy"); }
API Status cudnnSetStream(Handle* h, void* stream) {
  if (!Get(h, KIND_HANDLE, 0)) return Reject("cudnnSetStream", "not a live handle");
  h->stream = stream;
  h->base.set = 1;
  Log("cudnnSetStream handle=%p stream=%p", (void*)h, stream);
  return OK;
}

/* cudnnCreate<Name>Descriptor / cudnnDestroy<Name>Descriptor of an object of `type`. */
#define DESCRIPTOR_LIFETIME(Name, type, kind)                               \
  API Status cudnnCreate##Name##Descriptor(void** d) {                      \
    return Create(d, sizeof(type), kind, "cudnnCreate" #Name "Descriptor"); \
  }                                                                         \
  API Status cudnnDestroy##Name##Descriptor(void* d) {                      \
    return Destroy(d, kind, "cudnnDestroy" #Name "Descriptor");             \
  }
DESCRIPTOR_LIFETIME(Tensor, Tensor, KIND_TENSOR)
DESCRIPTOR_LIFETIME(Filter, Tensor, KIND_FILTER)
DESCRIPTOR_LIFETIME(Activation, Act, KIND_ACT)

API Status cudnnCreateConvolutionDescriptor(void** d) {
  Status s = Create(d, sizeof(Conv), KIND_CONV, "cudnnCreateConvolutionDescriptor");
  if (s == OK) {
    Conv* c = (Conv*)*d;
    c->groups = 1;
    c->math = MATH_DEFAULT;
    for (int i = 0; i < ALGOS; ++i) c->offered_math[i] = -1;
  }
  return s;
}
API Status cudnnDestroyConvolutionDescriptor(void* d) {
  return Destroy(d, KIND_CONV, "cudnnDestroyConvolutionDescriptor");
}

static Status Set4d(Tensor* t, int kind, int format, int dtype, int n, int c, int h, int w,
                    const char* what) {
  if (!Get(t, kind, 0)) return Reject(what, "not a live descriptor of that kind");
  if ((format != NCHW && format != NHWC) || (dtype != DATA_FLOAT && dtype != DATA_HALF)) {
    return Reject(what, "unknown format or dtype");
  }
  if (n < 1 || c < 1 || h < 1 || w < 1) return Reject(what, "non-positive dimension");
  t->format = format;
  t->dtype = dtype;
  t->n = n, t->c = c, t->h = h, t->w = w;
  t->base.set = 1;
  Log("%s desc=%p format=%d dtype=%d dims=%d,%d,%d,%d", what, (void*)t, format, dtype, n, c, h, w);
  return OK;
}
API Status cudnnSetTensor4dDescriptor(Tensor* t, int format, int dtype, int n, int c, int h,
                                      int w) {
  return Set4d(t, KIND_TENSOR, format, dtype, n, c, h, w, "cudnnSetTensor4dDescriptor");
}
API Status cudnnSetFilter4dDescriptor(Tensor* t, int dtype, int format, int k, int c, int h,
                                      int w) {
  return Set4d(t, KIND_FILTER, format, dtype, k, c, h, w, "cudnnSetFilter4dDescriptor");
}
API Status cudnnSetConvolution2dDescriptor(Conv* c, int pad_h, int pad_w, int u, int v, int dil_h,
                                           int dil_w, int mode, int compute) {
  if (!Get(c, KIND_CONV, 0)) return Reject("cudnnSetConvolution2dDescriptor", "not live");
  if (pad_h < 0 || pad_w < 0 || u < 1 || v < 1 || dil_h < 1 || dil_w < 1 ||
      mode != CROSS_CORRELATION || compute != DATA_FLOAT) {
    return Reject("cudnnSetConvolution2dDescriptor", "invalid or unexpected parameters");
  }
  c->pad_h = pad_h, c->pad_w = pad_w, c->u = u, c->v = v, c->dil_h = dil_h, c->dil_w = dil_w;
  c->mode = mode;
  c->compute = compute;
  c->base.set = 1;
  Log("cudnnSetConvolution2dDescriptor desc=%p pad=%d,%d stride=%d,%d dilation=%d,%d", (void*)c,
      pad_h, pad_w, u, v, dil_h, dil_w);
  return OK;
}
API Status cudnnSetConvolutionGroupCount(Conv* c, int groups) {
  if (!Get(c, KIND_CONV, 0) || groups < 1) return Reject("cudnnSetConvolutionGroupCount", "bad");
  c->groups = groups;
  Log("cudnnSetConvolutionGroupCount desc=%p groups=%d", (void*)c, groups);
  return OK;
}
API Status cudnnSetConvolutionMathType(Conv* c, int math) {
  if (!Get(c, KIND_CONV, 0)) return Reject("cudnnSetConvolutionMathType", "not live");
  if (math < MATH_DEFAULT || math > MATH_FMA) return Reject("cudnnSetConvolutionMathType", "bad");
  c->math = math;
  Log("cudnnSetConvolutionMathType desc=%p math=%d", (void*)c, math);
  return OK;
}
API Status cudnnSetActivationDescriptor(Act* a, int mode, int nan, double coef) {
  if (!Get(a, KIND_ACT, 0) || (mode != ACT_RELU && mode != ACT_IDENTITY)) {
    return Reject("cudnnSetActivationDescriptor", "bad descriptor or mode");
  }
  a->mode = mode, a->nan = nan, a->coef = coef;
  a->base.set = 1;
  Log("cudnnSetActivationDescriptor desc=%p mode=%d", (void*)a, mode);
  return OK;
}

/* The descriptors of one convolution, checked against each other; NULL when consistent. */
static const char* Consistent(const Handle* h, const Tensor* x, const Tensor* w, const Conv* c,
                              const Tensor* y) {
  if (!Get(h, KIND_HANDLE, 0)) return "the handle is not live";
  if (!Get(x, KIND_TENSOR, 1) || !Get(y, KIND_TENSOR, 1)) return "a tensor descriptor is not set";
  if (!Get(w, KIND_FILTER, 1)) return "the filter descriptor is not set";
  if (!Get(c, KIND_CONV, 1)) return "the convolution descriptor is not set";
  if (x->format != w->format || x->format != y->format) return "formats differ";
  if (x->dtype != w->dtype || x->dtype != y->dtype) return "dtypes differ";
  if (x->c != w->c * c->groups || w->n % c->groups != 0) return "channels do not match groups";
  int oh = (x->h + 2 * c->pad_h - c->dil_h * (w->h - 1) - 1) / c->u + 1;
  int ow = (x->w + 2 * c->pad_w - c->dil_w * (w->w - 1) - 1) / c->v + 1;
  if (y->n != x->n || y->c != w->n || y->h != oh || y->w != ow) return "wrong output size";
  return NULL;
}

static size_t Workspace(void) { return (size_t)EnvInt("FAKE_CUDNN_WORKSPACE", 4096); }

API Status cudnnGetConvolutionForwardAlgorithm_v7(Handle* h, Tensor* x, Tensor* w, Conv* c,
                                                  Tensor* y, int requested, int* returned,
                                                  Perf* perf) {
  const char* why = Consistent(h, x, w, c, y);
  if (why) return Reject("cudnnGetConvolutionForwardAlgorithm_v7", why);
  if (requested < 1 || returned == NULL || perf == NULL) {
    return Reject("cudnnGetConvolutionForwardAlgorithm_v7", "no room for results");
  }
  /* cuDNN lists algorithms it cannot run too, with a failing status: offer one first. */
  memset(perf, 0, sizeof(Perf) * (size_t)requested);
  for (int i = 0; i < ALGOS; ++i) c->offered_math[i] = -1;
  int n = 0;
  perf[n].algo = 0;
  perf[n].status = NOT_SUPPORTED;
  perf[n++].mathType = c->math;
  if (!EnvInt("FAKE_CUDNN_NO_ALGO", 0)) {
    int fp32 = x->dtype == DATA_FLOAT;
    int tensor_cores = c->math == MATH_DEFAULT || c->math == MATH_TENSOR_OP;
    int offers[2][2], count = 0; /* (algo, mathType), best first */
    if (!fp32) {
      offers[count][0] = ALGO_GEMM, offers[count++][1] = MATH_TENSOR_OP;
    } else if (EnvInt("FAKE_CUDNN_TF32_ONLY", 0)) {
      offers[count][0] = ALGO_GEMM, offers[count++][1] = MATH_TENSOR_OP;
    } else if (tensor_cores || EnvInt("FAKE_CUDNN_TF32_FIRST", 0)) {
      offers[count][0] = ALGO_GEMM, offers[count++][1] = MATH_TENSOR_OP;
      offers[count][0] = ALGO_PRECOMP, offers[count++][1] = MATH_FMA;
    } else {
      offers[count][0] = ALGO_GEMM, offers[count++][1] = MATH_FMA;
    }
    for (int i = 0; i < count && n < requested; ++i, ++n) {
      perf[n].algo = offers[i][0];
      perf[n].mathType = offers[i][1];
      perf[n].status = OK;
      perf[n].memory = Workspace();
      c->offered_math[offers[i][0]] = offers[i][1];
    }
  }
  *returned = n < requested ? n : requested;
  Log("cudnnGetConvolutionForwardAlgorithm_v7 desc=%p math=%d returned=%d", (void*)c, c->math,
      *returned);
  return OK;
}

API Status cudnnGetConvolutionForwardWorkspaceSize(Handle* h, Tensor* x, Tensor* w, Conv* c,
                                                   Tensor* y, int algo, size_t* bytes) {
  const char* why = Consistent(h, x, w, c, y);
  if (why) return Reject("cudnnGetConvolutionForwardWorkspaceSize", why);
  if (algo != ALGO_PRECOMP && algo != ALGO_GEMM) {
    return Reject("cudnnGetConvolutionForwardWorkspaceSize", "an algorithm the fake never offered");
  }
  *bytes = Workspace();
  return OK;
}

/* ---- the computation ----------------------------------------------------------------------- */

static double HalfToDouble(uint16_t h) { return HalfToFloat(h); }
static uint16_t DoubleToHalf(double d) { return FloatToHalf((float)d); }

/* Offset of element (n, c, h, w) of a 4-D descriptor in its format. */
static int64_t Offset(const Tensor* t, int n, int c, int h, int w) {
  if (t->format == NCHW) return (((int64_t)n * t->c + c) * t->h + h) * t->w + w;
  return (((int64_t)n * t->h + h) * t->w + w) * t->c + c;
}

static double Load(const Tensor* t, const void* p, int64_t i) {
  return t->dtype == DATA_FLOAT ? ((const float*)p)[i] : HalfToDouble(((const uint16_t*)p)[i]);
}

static void Store(const Tensor* t, void* p, int64_t i, double v) {
  if (t->dtype == DATA_FLOAT) {
    ((float*)p)[i] = (float)v;
  } else {
    ((uint16_t*)p)[i] = DoubleToHalf(v);
  }
}

/* Whether a convolution runs on TF32 tensor cores: float32 data, a descriptor that allows
 * tensor cores, and NVIDIA_TF32_OVERRIDE not 0. */
static int UsesTf32(const Tensor* x, const Conv* c) {
  return x->dtype == DATA_FLOAT && (c->math == MATH_DEFAULT || c->math == MATH_TENSOR_OP) &&
         FakeTf32Enabled();
}

static void Convolve(const Tensor* x, const void* xd, const Tensor* w, const void* wd,
                     const Conv* c, const Tensor* y, void* yd, const void* bias, int relu) {
  int tf32 = UsesTf32(x, c);
  int kg = w->n / c->groups;
  for (int n = 0; n < y->n; ++n) {
    for (int k = 0; k < y->c; ++k) {
      int g = k / kg;
      for (int oh = 0; oh < y->h; ++oh) {
        for (int ow = 0; ow < y->w; ++ow) {
          double acc = 0;
          for (int ci = 0; ci < w->c; ++ci) {
            for (int r = 0; r < w->h; ++r) {
              for (int s = 0; s < w->w; ++s) {
                int ih = oh * c->u - c->pad_h + r * c->dil_h;
                int iw = ow * c->v - c->pad_w + s * c->dil_w;
                if (ih < 0 || iw < 0 || ih >= x->h || iw >= x->w) continue;
                double a = Load(x, xd, Offset(x, n, g * w->c + ci, ih, iw));
                double b = Load(w, wd, Offset(w, k, ci, r, s));
                acc += tf32 ? FakeTf32Round(a) * FakeTf32Round(b) : a * b;
              }
            }
          }
          if (bias) acc += Load(y, bias, k);
          if (relu && acc < 0) acc = 0;
          Store(y, yd, Offset(y, n, k, oh, ow), acc);
        }
      }
    }
  }
}

static const char* CheckRun(const Handle* h, const void* alpha, const void* x, const void* w,
                            int algo, void* workspace, size_t bytes, const void* beta,
                            const void* y) {
  if (!h->base.set) return "no stream was set on the handle (cudnnSetStream)";
  if (algo != ALGO_PRECOMP && algo != ALGO_GEMM) return "an algorithm the fake never offered";
  if (bytes < Workspace() || (bytes > 0 && workspace == NULL)) return "workspace too small";
  if (alpha == NULL || beta == NULL || x == NULL || w == NULL || y == NULL) return "NULL pointer";
  if (*(const float*)alpha != 1.0f || *(const float*)beta != 0.0f) return "alpha/beta not 1/0";
  if (bytes > 0) { /* device memory of the fake driver (host memory): touch both ends */
    ((volatile char*)workspace)[0] = 1;
    ((volatile char*)workspace)[bytes - 1] = 1;
  }
  return NULL;
}

API Status cudnnConvolutionForward(Handle* h, const void* alpha, Tensor* xd, const void* x,
                                   Tensor* wd, const void* w, Conv* c, int algo, void* workspace,
                                   size_t bytes, const void* beta, Tensor* yd, void* y) {
  const char* why = Consistent(h, xd, wd, c, yd);
  if (!why) why = CheckRun(h, alpha, x, w, algo, workspace, bytes, beta, y);
  if (why) return Reject("cudnnConvolutionForward", why);
  Convolve(xd, x, wd, w, c, yd, y, NULL, 0);
  Log("cudnnConvolutionForward handle=%p stream=%p format=%d dtype=%d x=%d,%d,%d,%d "
      "w=%d,%d,%d,%d groups=%d algo=%d workspace=%p workspace_size=%zu bias=(nil) act=none "
      "math=%d heuristic_math=%d tf32=%d",
      (void*)h, h->stream, xd->format, xd->dtype, xd->n, xd->c, xd->h, xd->w, wd->n, wd->c, wd->h,
      wd->w, c->groups, algo, workspace, bytes, c->math, c->offered_math[algo], UsesTf32(xd, c));
  return OK;
}

API Status cudnnConvolutionBiasActivationForward(Handle* h, const void* alpha1, Tensor* xd,
                                                 const void* x, Tensor* wd, const void* w, Conv* c,
                                                 int algo, void* workspace, size_t bytes,
                                                 const void* alpha2, Tensor* zd, const void* z,
                                                 Tensor* bd, const void* bias, Act* act, Tensor* yd,
                                                 void* y) {
  const char* why = Consistent(h, xd, wd, c, yd);
  if (!why) why = CheckRun(h, alpha1, x, w, algo, workspace, bytes, alpha2, y);
  if (!why && (!Get(zd, KIND_TENSOR, 1) || z == NULL)) why = "z must be described and given";
  if (!why && (!Get(bd, KIND_TENSOR, 1) || bias == NULL)) why = "the bias must be given";
  if (!why && (bd->n != 1 || bd->c != yd->c || bd->h != 1 || bd->w != 1)) {
    why = "the bias descriptor must be 1 x K x 1 x 1";
  }
  if (!why && !Get(act, KIND_ACT, 1)) why = "the activation descriptor is not set";
  if (!why && act->mode == ACT_IDENTITY && algo != ALGO_PRECOMP) {
    why = "an identity activation needs IMPLICIT_PRECOMP_GEMM";
  }
  if (why) return Reject("cudnnConvolutionBiasActivationForward", why);
  Convolve(xd, x, wd, w, c, yd, y, bias, act->mode == ACT_RELU);
  Log("cudnnConvolutionBiasActivationForward handle=%p stream=%p format=%d dtype=%d "
      "x=%d,%d,%d,%d w=%d,%d,%d,%d groups=%d algo=%d workspace=%p workspace_size=%zu bias=%p "
      "act=%s math=%d heuristic_math=%d tf32=%d",
      (void*)h, h->stream, xd->format, xd->dtype, xd->n, xd->c, xd->h, xd->w, wd->n, wd->c, wd->h,
      wd->w, c->groups, algo, workspace, bytes, bias, act->mode == ACT_RELU ? "relu" : "identity",
      c->math, c->offered_math[algo], UsesTf32(xd, c));
  return OK;
}
