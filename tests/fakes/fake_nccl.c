/*
 * A fake NCCL (libnccl.so.2 stand-in, and librccl.so.1's: RCCL keeps NCCL's API) for testing
 * Disco's nccl/rccl collectives without GPUs.
 *
 * The ranks are threads of one process (a ThreadedSession) whose "device memory" comes from the
 * fake CUDA or HIP driver, which is host memory: so the collectives really move and reduce the
 * data, and tests compare the results with numpy.  Every call is checked (a valid communicator,
 * ranks, counts, dtypes and reduction ops that agree between the ranks, a free mailbox) and
 * recorded in the log with the GPU current on the calling thread (read from the fake driver named
 * by FAKE_NCCL_DEVICE_LIBRARY through its FAKE_NCCL_DEVICE_SYMBOL(), e.g. fake_cuda_current_device),
 * so tests also see that every worker issued its calls on its own GPU.  A rank that waits more
 * than 20 s (FAKE_NCCL_WAIT_S) for its peers fails with ncclSystemError instead of hanging.
 *
 * Like NCCL, the work is asynchronous when the fake driver can queue it: if the device library
 * also exports <prefix>_stream_enqueue and <prefix>_stream_flush (prefix: the device symbol's up
 * to "_current_device", e.g. fake_hip), each rank first lets its stream's earlier work land
 * (what the GPU runs before the collective), the inputs are read, and the results are written
 * by the stream's queue, so they appear only when that stream is synchronized.  Without those
 * exports (an older fake driver) the results are written before the call returns.
 *
 * NCCL's group state is per thread: a collective issued while the calling thread's group is
 * still open (a group that was never ended) is refused with ncclInvalidUsage and logged, since
 * real NCCL would hold it back until an ncclGroupEnd that never comes.
 *
 * Environment:
 *   FAKE_NCCL_DEVICE_LIBRARY / FAKE_NCCL_DEVICE_SYMBOL   see above (optional)
 *   FAKE_NCCL_FAIL_INIT=<n>   ncclCommInitRank returns n
 *   FAKE_NCCL_FAIL_SENDS=<n>  the first n ncclSend calls of the process fail (ncclInternalError)
 *   FAKE_NCCL_WAIT_S=<s>      how long a rank waits for its peers (default 20)
 */
#define FAKE_DRIVER_PREFIX fake_nccl
#include "fake_log.h"
#include "fake_half.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

#define MAX_RANKS 16

typedef struct {
  char internal[128];
} ncclUniqueId;

enum { kSuccess = 0, kInternalError = 3, kInvalidArgument = 4, kInvalidUsage = 5, kSystemError = 2 };
enum { kAllReduce = 1, kAllGather, kBroadcast, kSplit };

typedef struct {
  int kind;
  const void* send;
  void* recv;
  size_t count;
  int dtype, op, root;
  void* result;  // a pointer handed from one rank to the others (the split's new clique)
} Deposit;

typedef struct {
  const void* data;
  size_t count;
  int dtype;
  int posted, taken;
} Mail;

typedef struct Clique {
  char id[128];
  int nranks, joined;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int arrived;
  unsigned long generation;
  Deposit ops[MAX_RANKS];
  Mail mail[MAX_RANKS][MAX_RANKS];  // [from][to]
  struct Clique* next;
} Clique;

typedef struct {
  int magic;
  Clique* clique;
  int rank;
} Comm;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static Clique* g_cliques = NULL;
static int g_next_id = 1;
static long g_live_comms = 0;
static const int kMagic = 0x4E43434C;

API long fake_nccl_live_comms(void) { return g_live_comms; }

static void Record(const char* fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&g_mu);
  Log("%s", line);
  pthread_mutex_unlock(&g_mu);
}

/* The device query is looked up once for all ranks: worker threads call this concurrently, and
 * an unsynchronized lazy lookup let a second thread see "looked up" before the pointer was set. */
static int (*g_device_query)(void) = NULL;
static void (*g_stream_enqueue)(void* stream, void (*run)(void*), void* arg) = NULL;
static void (*g_stream_flush)(void* stream) = NULL;
static int g_wait_s = 20;
static int g_fail_sends = 0;
static pthread_once_t g_device_query_once = PTHREAD_ONCE_INIT;

static void LookUpDeviceQuery(void) {
  g_wait_s = EnvInt("FAKE_NCCL_WAIT_S", 20);
  g_fail_sends = EnvInt("FAKE_NCCL_FAIL_SENDS", 0);
  const char* lib = getenv("FAKE_NCCL_DEVICE_LIBRARY");
  const char* sym = getenv("FAKE_NCCL_DEVICE_SYMBOL");
  if (lib && sym) {
    void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (!h) return;
    g_device_query = (int (*)(void))dlsym(h, sym);
    const char* tail = strstr(sym, "_current_device");
    char name[256];
    if (tail && tail - sym < 200) {
      snprintf(name, sizeof(name), "%.*s_stream_enqueue", (int)(tail - sym), sym);
      *(void**)&g_stream_enqueue = dlsym(h, name);
      snprintf(name, sizeof(name), "%.*s_stream_flush", (int)(tail - sym), sym);
      *(void**)&g_stream_flush = dlsym(h, name);
      if (!g_stream_flush) g_stream_enqueue = NULL;
    }
  }
}

static void Setup(void) { pthread_once(&g_device_query_once, LookUpDeviceQuery); }

static int CurrentDevice(void) {
  Setup();
  return g_device_query ? g_device_query() : -1;
}

/* The stream's earlier work lands before a collective reads its inputs. */
static void Progress(void* stream) {
  Setup();
  if (g_stream_flush) g_stream_flush(stream);
}

typedef struct {
  void* dst;
  char* bytes;
  size_t n;
} Delivery;

static void RunDelivery(void* arg) {
  Delivery* d = (Delivery*)arg;
  memcpy(d->dst, d->bytes, d->n);
  free(d->bytes);
  free(d);
}

/* Writes `n` bytes of `bytes` (malloc'ed; taken over) to `dst` in `stream`'s order. */
static void Deliver(void* stream, void* dst, char* bytes, size_t n) {
  Setup();
  Delivery* d = (Delivery*)malloc(sizeof(Delivery));
  d->dst = dst;
  d->bytes = bytes;
  d->n = n;
  if (g_stream_enqueue) {
    g_stream_enqueue(stream, RunDelivery, d);
  } else {
    RunDelivery(d);
  }
}

static size_t DtypeBytes(int dtype) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return dtype >= 0 && dtype <= 9 ? sizes[dtype] : 0;
}

static Comm* Valid(void* comm) {
  Comm* c = (Comm*)comm;
  return c && c->magic == kMagic ? c : NULL;
}

/* Waits until every rank of the clique arrived; -1 after WAIT_S seconds. */
static int Barrier(Clique* q) {
  pthread_mutex_lock(&q->mu);
  unsigned long gen = q->generation;
  if (++q->arrived == q->nranks) {
    q->arrived = 0;
    q->generation++;
    pthread_cond_broadcast(&q->cv);
  } else {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += g_wait_s;
    while (gen == q->generation) {
      if (pthread_cond_timedwait(&q->cv, &q->mu, &until) == ETIMEDOUT) {
        pthread_mutex_unlock(&q->mu);
        return -1;
      }
    }
  }
  pthread_mutex_unlock(&q->mu);
  return 0;
}

static double Load(const void* p, size_t i, int dtype) {
  switch (dtype) {
    case 0: return ((const int8_t*)p)[i];
    case 1: return ((const uint8_t*)p)[i];
    case 2: return ((const int32_t*)p)[i];
    case 3: return ((const uint32_t*)p)[i];
    case 4: return (double)((const int64_t*)p)[i];
    case 5: return (double)((const uint64_t*)p)[i];
    case 6: return HalfToFloat(((const uint16_t*)p)[i]);
    case 7: return ((const float*)p)[i];
    case 8: return ((const double*)p)[i];
    default: {
      uint32_t bits = (uint32_t)((const uint16_t*)p)[i] << 16;
      float f;
      memcpy(&f, &bits, 4);
      return f;
    }
  }
}

static void Store(void* p, size_t i, int dtype, double v) {
  switch (dtype) {
    case 0: ((int8_t*)p)[i] = (int8_t)v; break;
    case 1: ((uint8_t*)p)[i] = (uint8_t)v; break;
    case 2: ((int32_t*)p)[i] = (int32_t)v; break;
    case 3: ((uint32_t*)p)[i] = (uint32_t)v; break;
    case 4: ((int64_t*)p)[i] = (int64_t)v; break;
    case 5: ((uint64_t*)p)[i] = (uint64_t)v; break;
    case 6: ((uint16_t*)p)[i] = FloatToHalf((float)v); break;
    case 7: ((float*)p)[i] = (float)v; break;
    case 8: ((double*)p)[i] = v; break;
    default: {
      float f = (float)v;
      uint32_t bits;
      memcpy(&bits, &f, 4);
      ((uint16_t*)p)[i] = (uint16_t)(bits >> 16);
    }
  }
}

/* ncclRedOp_t: sum 0, prod 1, max 2, min 3, avg 4. */
static double Combine(double a, double b, int op) {
  switch (op) {
    case 1: return a * b;
    case 2: return a > b ? a : b;
    case 3: return a < b ? a : b;
    default: return a + b;
  }
}

/* ------------------------------------------------------------------------------ API */

API int ncclGetVersion(int* version) {
  if (!version) return kInvalidArgument;
  *version = 23203;
  return kSuccess;
}

API const char* ncclGetErrorString(int result) {
  switch (result) {
    case kSuccess: return "no error";
    case kSystemError: return "unhandled system error (fake: a peer did not arrive in time)";
    case kInternalError: return "internal error";
    case kInvalidArgument: return "invalid argument (fake: see the log)";
    case kInvalidUsage: return "invalid usage (fake: see the log)";
  }
  return "unknown result";
}

API int ncclGetUniqueId(ncclUniqueId* id) {
  if (!id) return kInvalidArgument;
  memset(id, 0, sizeof(*id));
  pthread_mutex_lock(&g_mu);
  snprintf(id->internal, sizeof(id->internal), "fake-nccl-id-%d", g_next_id++);
  Log("get_unique_id id=%s", id->internal);
  pthread_mutex_unlock(&g_mu);
  return kSuccess;
}

static Clique* NewClique(const char* id, int nranks) {
  Clique* q = (Clique*)calloc(1, sizeof(Clique));
  snprintf(q->id, sizeof(q->id), "%s", id);
  q->nranks = nranks;
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->cv, NULL);
  q->next = g_cliques;
  g_cliques = q;
  return q;
}

static Comm* NewComm(Clique* q, int rank) {
  Comm* c = (Comm*)calloc(1, sizeof(Comm));
  c->magic = kMagic;
  c->clique = q;
  c->rank = rank;
  __atomic_add_fetch(&g_live_comms, 1, __ATOMIC_SEQ_CST);
  return c;
}

API int ncclCommInitRank(void** comm, int nranks, ncclUniqueId id, int rank) {
  int fail = EnvInt("FAKE_NCCL_FAIL_INIT", 0);
  if (fail) return fail;
  if (!comm || nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks) {
    Record("error init nranks=%d rank=%d", nranks, rank);
    return kInvalidArgument;
  }
  pthread_mutex_lock(&g_mu);
  Clique* q = g_cliques;
  while (q && strncmp(q->id, id.internal, sizeof(q->id)) != 0) q = q->next;
  if (!q) q = NewClique(id.internal, nranks);
  pthread_mutex_unlock(&g_mu);
  if (q->nranks != nranks) {
    Record("error init mismatched_nranks=%d expected=%d", nranks, q->nranks);
    return kInvalidUsage;
  }
  Record("init id=%s nranks=%d rank=%d device=%d", id.internal, nranks, rank, CurrentDevice());
  *comm = NewComm(q, rank);
  return Barrier(q) == 0 ? kSuccess : kSystemError;  // NCCL blocks until every rank joined
}

API int ncclCommDestroy(void* comm) {
  Comm* c = Valid(comm);
  if (!c) {
    Record("error destroy invalid_comm");
    return kInvalidArgument;
  }
  Record("destroy rank=%d nranks=%d", c->rank, c->clique->nranks);
  c->magic = 0;
  free(c);
  __atomic_sub_fetch(&g_live_comms, 1, __ATOMIC_SEQ_CST);
  return kSuccess;
}

API int ncclCommSplit(void* comm, int color, int key, void** newcomm, void* config) {
  Comm* c = Valid(comm);
  if (!c || !newcomm) return kInvalidArgument;
  Clique* q = c->clique;
  Deposit* mine = &q->ops[c->rank];
  memset(mine, 0, sizeof(*mine));
  mine->kind = kSplit;
  mine->op = color;
  mine->root = key;
  if (Barrier(q)) return kSystemError;
  // Members of our color, ordered by (key, rank); the first of them creates the new clique.
  int members = 0, new_rank = 0, leader = -1;
  for (int r = 0; r < q->nranks; ++r) {
    Deposit* d = &q->ops[r];
    if (d->kind != kSplit) return kInvalidUsage;
    if (d->op != color) continue;
    if (leader < 0) leader = r;
    ++members;
    if (d->root < key || (d->root == key && r < c->rank)) ++new_rank;
  }
  if (c->rank == leader) {
    char id[128];
    snprintf(id, sizeof(id), "%s/split-color-%d", q->id, color);
    pthread_mutex_lock(&g_mu);
    mine->result = NewClique(id, members);
    pthread_mutex_unlock(&g_mu);
  }
  if (Barrier(q)) return kSystemError;
  Clique* nq = (Clique*)q->ops[leader].result;
  Record("split rank=%d color=%d key=%d new_rank=%d new_nranks=%d device=%d", c->rank, color, key,
         new_rank, members, CurrentDevice());
  *newcomm = NewComm(nq, new_rank);
  return Barrier(q) ? kSystemError : kSuccess;
}

/* Deposits this rank's arguments and checks they agree with every other rank's; 0 on success. */
static int Meet(Comm* c, Deposit d, const char* name) {
  Clique* q = c->clique;
  q->ops[c->rank] = d;
  if (Barrier(q)) return kSystemError;
  for (int r = 0; r < q->nranks; ++r) {
    Deposit* o = &q->ops[r];
    if (o->kind != d.kind || o->count != d.count || o->dtype != d.dtype || o->op != d.op ||
        o->root != d.root) {
      Record("error %s rank=%d disagrees_with_rank=%d", name, c->rank, r);
      Barrier(q);
      return kInvalidUsage;
    }
  }
  return kSuccess;
}

/* This thread's ncclGroupStart nesting, and how many threads are inside a group right now. */
static __thread int t_group_depth = 0;
static long g_open_groups = 0;

API long fake_nccl_open_groups(void) { return __atomic_load_n(&g_open_groups, __ATOMIC_SEQ_CST); }

/* A collective (not send/recv) while this thread's group is open: see the header. */
static int OutsideGroup(Comm* c, const char* name) {
  if (t_group_depth == 0) return kSuccess;
  Record("error %s rank=%d inside_open_group depth=%d", name, c->rank, t_group_depth);
  return kInvalidUsage;
}

static int Check(Comm* c, size_t count, int dtype, const char* name) {
  if (!c) {
    Record("error %s invalid_comm", name);
    return kInvalidArgument;
  }
  if (DtypeBytes(dtype) == 0) {
    Record("error %s bad_dtype=%d", name, dtype);
    return kInvalidArgument;
  }
  (void)count;
  return kSuccess;
}

API int ncclAllReduce(const void* send, void* recv, size_t count, int dtype, int op, void* comm,
                      void* stream) {
  Comm* c = Valid(comm);
  int rc = Check(c, count, dtype, "allreduce");
  if (rc) return rc;
  if (op < 0 || op > 4) return kInvalidArgument;
  if ((rc = OutsideGroup(c, "allreduce"))) return rc;
  Progress(stream);
  Record("allreduce rank=%d count=%zu dtype=%d op=%d stream=%p device=%d", c->rank, count, dtype, op,
         stream, CurrentDevice());
  Deposit d = {kAllReduce, send, recv, count, dtype, op, 0, NULL};
  if ((rc = Meet(c, d, "allreduce"))) return rc;
  Clique* q = c->clique;
  void* tmp = malloc(count * DtypeBytes(dtype) + 1);
  for (size_t i = 0; i < count; ++i) {
    double acc = Load(q->ops[0].send, i, dtype);
    for (int r = 1; r < q->nranks; ++r) acc = Combine(acc, Load(q->ops[r].send, i, dtype), op);
    if (op == 4) acc /= q->nranks;
    Store(tmp, i, dtype, acc);
  }
  if (Barrier(q)) return kSystemError;  // everyone read every send buffer
  Deliver(stream, recv, tmp, count * DtypeBytes(dtype));
  return Barrier(q) ? kSystemError : kSuccess;
}

API int ncclAllGather(const void* send, void* recv, size_t count, int dtype, void* comm, void* stream) {
  Comm* c = Valid(comm);
  int rc = Check(c, count, dtype, "allgather");
  if (rc) return rc;
  if ((rc = OutsideGroup(c, "allgather"))) return rc;
  Progress(stream);
  Record("allgather rank=%d count=%zu dtype=%d stream=%p device=%d", c->rank, count, dtype, stream,
         CurrentDevice());
  Deposit d = {kAllGather, send, recv, count, dtype, 0, 0, NULL};
  if ((rc = Meet(c, d, "allgather"))) return rc;
  Clique* q = c->clique;
  size_t bytes = count * DtypeBytes(dtype);
  char* tmp = (char*)malloc(bytes * q->nranks + 1);
  for (int r = 0; r < q->nranks; ++r) memcpy(tmp + r * bytes, q->ops[r].send, bytes);
  if (Barrier(q)) return kSystemError;
  Deliver(stream, recv, tmp, bytes * q->nranks);
  return Barrier(q) ? kSystemError : kSuccess;
}

API int ncclBroadcast(const void* send, void* recv, size_t count, int dtype, int root, void* comm,
                      void* stream) {
  Comm* c = Valid(comm);
  int rc = Check(c, count, dtype, "broadcast");
  if (rc) return rc;
  if (root < 0 || root >= c->clique->nranks) return kInvalidArgument;
  if (c->rank == root && !send) return kInvalidArgument;
  if ((rc = OutsideGroup(c, "broadcast"))) return rc;
  Progress(stream);
  Record("broadcast rank=%d count=%zu dtype=%d root=%d stream=%p device=%d", c->rank, count, dtype,
         root, stream, CurrentDevice());
  Deposit d = {kBroadcast, send, recv, count, dtype, 0, root, NULL};
  if ((rc = Meet(c, d, "broadcast"))) return rc;
  Clique* q = c->clique;
  size_t bytes = count * DtypeBytes(dtype);
  char* tmp = (char*)malloc(bytes + 1);
  memcpy(tmp, q->ops[root].send, bytes);
  if (Barrier(q)) return kSystemError;
  Deliver(stream, recv, tmp, bytes);
  return Barrier(q) ? kSystemError : kSuccess;
}

/* ------------------------------------------------------------------ point to point, groups */

typedef struct {
  int send;
  Comm* comm;
  int peer;
  void* buf;
  size_t count;
  int dtype;
  void* stream;
} P2P;

static __thread P2P t_pending[4 * MAX_RANKS];
static __thread int t_num_pending = 0;

static int WaitMail(Clique* q, Mail* m, int want_posted) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += g_wait_s;
  pthread_mutex_lock(&q->mu);
  while (want_posted ? !(m->posted && !m->taken) : (m->posted && !m->taken)) {
    if (pthread_cond_timedwait(&q->cv, &q->mu, &until) == ETIMEDOUT) {
      pthread_mutex_unlock(&q->mu);
      return -1;
    }
  }
  pthread_mutex_unlock(&q->mu);
  return 0;
}

static int RunP2P(P2P* ops, int n) {
  for (int i = 0; i < n; ++i) Progress(ops[i].stream);  // what the streams ran before
  for (int i = 0; i < n; ++i) {  // post every send first, so pairs never deadlock
    if (!ops[i].send) continue;
    Clique* q = ops[i].comm->clique;
    Mail* m = &q->mail[ops[i].comm->rank][ops[i].peer];
    if (WaitMail(q, m, 0)) return kSystemError;
    pthread_mutex_lock(&q->mu);
    m->data = ops[i].buf;
    m->count = ops[i].count;
    m->dtype = ops[i].dtype;
    m->posted = 1;
    m->taken = 0;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
  }
  for (int i = 0; i < n; ++i) {
    if (ops[i].send) continue;
    Clique* q = ops[i].comm->clique;
    Mail* m = &q->mail[ops[i].peer][ops[i].comm->rank];
    if (WaitMail(q, m, 1)) return kSystemError;
    pthread_mutex_lock(&q->mu);
    int ok = m->count == ops[i].count && m->dtype == ops[i].dtype;
    if (ok) {
      size_t bytes = ops[i].count * DtypeBytes(ops[i].dtype);
      char* copy = (char*)malloc(bytes + 1);
      memcpy(copy, m->data, bytes);
      Deliver(ops[i].stream, ops[i].buf, copy, bytes);
    }
    m->taken = 1;
    m->posted = 0;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    if (!ok) {
      Record("error recv rank=%d from=%d count=%zu sent_count=%zu", ops[i].comm->rank, ops[i].peer,
             ops[i].count, m->count);
      return kInvalidUsage;
    }
  }
  for (int i = 0; i < n; ++i) {  // the buffers stay valid until the receivers copied them
    if (!ops[i].send) continue;
    Clique* q = ops[i].comm->clique;
    if (WaitMail(q, &q->mail[ops[i].comm->rank][ops[i].peer], 0)) return kSystemError;
  }
  return kSuccess;
}

static int PointToPoint(int send, const void* buf, size_t count, int dtype, int peer, void* comm,
                        void* stream) {
  Comm* c = Valid(comm);
  const char* name = send ? "send" : "recv";
  int rc = Check(c, count, dtype, name);
  if (rc) return rc;
  if (peer < 0 || peer >= c->clique->nranks) {
    Record("error %s rank=%d bad_peer=%d", name, c->rank, peer);
    return kInvalidArgument;
  }
  Setup();
  if (send && __atomic_load_n(&g_fail_sends, __ATOMIC_SEQ_CST) > 0 &&
      __atomic_sub_fetch(&g_fail_sends, 1, __ATOMIC_SEQ_CST) >= 0) {
    Record("error send rank=%d peer=%d injected_failure device=%d", c->rank, peer, CurrentDevice());
    return kInternalError;
  }
  Record("%s rank=%d peer=%d count=%zu dtype=%d stream=%p device=%d grouped=%d", name, c->rank, peer,
         count, dtype, stream, CurrentDevice(), t_group_depth > 0);
  P2P op = {send, c, peer, (void*)buf, count, dtype, stream};
  if (t_group_depth == 0) return RunP2P(&op, 1);
  if (t_num_pending == (int)(sizeof(t_pending) / sizeof(t_pending[0]))) return kInternalError;
  t_pending[t_num_pending++] = op;
  return kSuccess;
}

API int ncclSend(const void* buf, size_t count, int dtype, int peer, void* comm, void* stream) {
  return PointToPoint(1, buf, count, dtype, peer, comm, stream);
}

API int ncclRecv(void* buf, size_t count, int dtype, int peer, void* comm, void* stream) {
  return PointToPoint(0, buf, count, dtype, peer, comm, stream);
}

API int ncclGroupStart(void) {
  if (t_group_depth++ == 0) __atomic_add_fetch(&g_open_groups, 1, __ATOMIC_SEQ_CST);
  return kSuccess;
}

API int ncclGroupEnd(void) {
  if (t_group_depth == 0) {
    Record("error group_end without group_start");
    return kInvalidUsage;
  }
  if (--t_group_depth > 0) return kSuccess;
  __atomic_sub_fetch(&g_open_groups, 1, __ATOMIC_SEQ_CST);
  int n = t_num_pending;
  t_num_pending = 0;
  return RunP2P(t_pending, n);
}
