// Disco's cpu collectives (src/extra/disco), compiled from the sources: every collective, every
// dtype the reductions take and every reduce kind, over shared memory (ShmCommunicator) and over
// TCP on loopback (PeerCommunicator on TcpTransport), with 2, 3 and 4 ranks as threads, checked
// exactly against a serial reference computed here; then a rank that aborts and a rank whose
// thread or process ends mid-collective: every other rank gets a PeerFailure naming it, within a
// deadline.
#include <dlpack/dlpack.h>
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "peer_communicator.h"
#include "peer_failure.h"
#include "shm_communicator.h"
#include "tcp_transport.h"

namespace {

using tvm_runtime::extra::disco::Communicator;
using tvm_runtime::extra::disco::PeerCommunicator;
using tvm_runtime::extra::disco::PeerFailure;
using tvm_runtime::extra::disco::ReduceKind;
using tvm_runtime::extra::disco::ShmCommunicator;
using tvm_runtime::extra::disco::TcpMesh;
using tvm_runtime::extra::disco::TcpTransport;

constexpr double kSetupTimeoutS = 20;
// A test whose ranks are not all done by then hangs: fail loudly instead of waiting for CI.
constexpr auto kDeadline = std::chrono::seconds(30);

enum class Kind { kShm, kTcp };

const char* KindName(Kind kind) { return kind == Kind::kShm ? "shm" : "tcp"; }

/* The communicator of rank `rank` of `n`, built on that rank's own thread (ShmCommunicator's
 * robust mutex belongs to the thread that attached). */
using Factory = std::function<std::unique_ptr<Communicator>(int rank)>;

Factory MakeFactory(Kind kind, int n, const std::string& test) {
  std::vector<int> workers(n);
  for (int r = 0; r < n; ++r) workers[r] = r;
  if (kind == Kind::kShm) {
    std::string name = "tvm-disco-cpptest-" + std::to_string(::getpid()) + "-" + test;
    return [=](int rank) -> std::unique_ptr<Communicator> {
      return std::make_unique<ShmCommunicator>(name, workers, rank, kSetupTimeoutS);
    };
  }
  // Every rank listens before any connects, as runtime.disco.cpu.prepare does.
  auto fds = std::make_shared<std::vector<int>>(n);
  std::vector<std::string> addresses(n);
  for (int r = 0; r < n; ++r) {
    int port = 0;
    (*fds)[r] = TcpMesh::Listen("127.0.0.1", &port);
    addresses[r] = "127.0.0.1:" + std::to_string(port);
  }
  return [=](int rank) -> std::unique_ptr<Communicator> {
    auto mesh = std::make_shared<TcpMesh>((*fds)[rank], addresses, rank, "token-" + test, workers,
                                          kSetupTimeoutS);
    return std::make_unique<PeerCommunicator>(std::make_unique<TcpTransport>(mesh, workers, rank));
  };
}

/* Runs body(rank, communicator) on n threads (but rank `elsewhere`, run by another process);
 * returns what each rank reported ("" = fine). */
std::vector<std::string> RunRanks(
    int n, const Factory& factory,
    const std::function<std::string(int, std::unique_ptr<Communicator>*)>& body,
    int elsewhere = -1) {
  // A rank keeps its communicator until every rank is done, as Disco workers do until the session
  // ends: a rank that leaves is a failure to the ranks still waiting in a collective.
  std::mutex mu;
  std::condition_variable all_done;
  int done = 0;
  auto finish = [&](std::unique_ptr<Communicator>* comm) {
    std::unique_lock<std::mutex> lock(mu);
    if (++done == n) all_done.notify_all();
    all_done.wait(lock, [&] { return done == n; });
    comm->reset();
  };
  std::vector<std::future<std::string>> ranks;
  for (int r = 0; r < n; ++r) {
    ranks.push_back(std::async(std::launch::async, [&, r]() -> std::string {
      std::unique_ptr<Communicator> comm;
      std::string out;
      try {
        if (r != elsewhere) {
          comm = factory(r);
          out = body(r, &comm);
        }
      } catch (const std::exception& err) {
        out = std::string("rank ") + std::to_string(r) + " threw: " + err.what();
      }
      finish(&comm);
      return out;
    }));
  }
  std::vector<std::string> out;
  for (auto& rank : ranks) {
    if (rank.wait_for(kDeadline) != std::future_status::ready) {
      std::fprintf(stderr, "FATAL: a rank of the Disco collectives test hung for 30 s\n");
      std::_Exit(3);
    }
    out.push_back(rank.get());
  }
  return out;
}

// ---- dtypes and their exact values ----------------------------------------------------------

struct DType {
  const char* name;
  DLDataType dl;
};

const DType kDTypes[] = {
    {"int8", {kDLInt, 8, 1}},       {"int16", {kDLInt, 16, 1}},
    {"int32", {kDLInt, 32, 1}},     {"int64", {kDLInt, 64, 1}},
    {"uint8", {kDLUInt, 8, 1}},     {"uint16", {kDLUInt, 16, 1}},
    {"uint32", {kDLUInt, 32, 1}},   {"uint64", {kDLUInt, 64, 1}},
    {"float16", {kDLFloat, 16, 1}}, {"bfloat16", {kDLBfloat, 16, 1}},
    {"float32", {kDLFloat, 32, 1}}, {"float64", {kDLFloat, 64, 1}},
};

const ReduceKind kKinds[] = {ReduceKind::kSum, ReduceKind::kProd, ReduceKind::kMin,
                             ReduceKind::kMax, ReduceKind::kAvg};

size_t ElemBytes(const DType& t) { return t.dl.bits / 8; }
bool IsFloat(const DType& t) { return t.dl.code == kDLFloat || t.dl.code == kDLBfloat; }

// Exact encoders of small integers (every value used here is exact in every dtype).
uint16_t HalfOf(double v) {
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  int exp = 0;
  double m = std::frexp(std::fabs(v), &exp);  // v = m * 2^exp, m in [0.5, 1)
  uint16_t mantissa = static_cast<uint16_t>(std::lround((m * 2 - 1) * 1024));
  return static_cast<uint16_t>(sign | ((exp - 1 + 15) << 10) | mantissa);
}

uint16_t BfloatOf(double v) {
  float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

void Store(const DType& t, void* buf, size_t i, double v) {
  char* p = static_cast<char*>(buf) + i * ElemBytes(t);
  auto put = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
  if (t.dl.code == kDLInt) {
    if (t.dl.bits == 8) put(static_cast<int8_t>(v));
    if (t.dl.bits == 16) put(static_cast<int16_t>(v));
    if (t.dl.bits == 32) put(static_cast<int32_t>(v));
    if (t.dl.bits == 64) put(static_cast<int64_t>(v));
  } else if (t.dl.code == kDLUInt) {
    if (t.dl.bits == 8) put(static_cast<uint8_t>(v));
    if (t.dl.bits == 16) put(static_cast<uint16_t>(v));
    if (t.dl.bits == 32) put(static_cast<uint32_t>(v));
    if (t.dl.bits == 64) put(static_cast<uint64_t>(v));
  } else if (t.dl.code == kDLBfloat) {
    put(BfloatOf(v));
  } else if (t.dl.bits == 16) {
    put(HalfOf(v));
  } else if (t.dl.bits == 32) {
    put(static_cast<float>(v));
  } else {
    put(v);
  }
}

/* Rank r's i-th input: small nonzero integers (no product overflows int8, no float product is
 * a signed zero).  For avg of floats the last rank evens the sum out to a multiple of the rank
 * count, so the exact mean is representable in every float dtype. */
double Input(const DType& t, ReduceKind kind, int rank, int n, int64_t i) {
  auto raw = [&](int r) -> int64_t {
    int64_t v = (i * 7 + r * 5 + t.dl.bits) % 7 - 3;  // -3..3
    if (t.dl.code == kDLUInt) v = (v + 3) % 4;        // 0..3
    if (v == 0 && t.dl.code != kDLUInt) v = 2;
    return v;
  };
  if (kind != ReduceKind::kAvg || !IsFloat(t) || rank != n - 1)
    return static_cast<double>(raw(rank));
  int64_t sum = 0;
  for (int r = 0; r < n; ++r) sum += raw(r);
  int64_t rem = ((sum % n) + n) % n;
  return static_cast<double>(raw(rank) - rem);
}

double Reference(const DType& t, ReduceKind kind, int n, int64_t i) {
  int64_t acc = static_cast<int64_t>(Input(t, kind, 0, n, i));
  for (int r = 1; r < n; ++r) {
    int64_t v = static_cast<int64_t>(Input(t, kind, r, n, i));
    switch (kind) {
      case ReduceKind::kProd:
        acc *= v;
        break;
      case ReduceKind::kMin:
        acc = std::min(acc, v);
        break;
      case ReduceKind::kMax:
        acc = std::max(acc, v);
        break;
      default:
        acc += v;
    }
  }
  if (kind == ReduceKind::kAvg) acc /= n;  // integers: toward zero, as NCCL's ncclAvg
  return static_cast<double>(acc);
}

/* Where `got` differs from the dtype's encoding of `want` (empty if nowhere). */
std::string Compare(const DType& t, const std::vector<char>& got,
                    const std::function<double(int64_t)>& want, int64_t count,
                    const std::string& what) {
  std::vector<char> expected(got.size());
  for (int64_t i = 0; i < count; ++i) Store(t, expected.data(), i, want(i));
  for (int64_t i = 0; i < count; ++i) {
    size_t e = ElemBytes(t);
    if (std::memcmp(got.data() + i * e, expected.data() + i * e, e) != 0) {
      return what + " " + t.name + ": element " + std::to_string(i) + " differs (expected " +
             std::to_string(want(i)) + ")\n";
    }
  }
  return "";
}

const int64_t kCounts[] = {1, 5, 3001};  // fewer elements than ranks; several 4 KiB rounds

// ---- every collective on every rank ------------------------------------------------------------

std::string AllCollectives(int rank, Communicator* comm) {
  int n = comm->size();
  std::string errors;
  for (const DType& t : kDTypes) {
    size_t e = ElemBytes(t);
    for (int64_t count : kCounts) {
      for (ReduceKind kind : kKinds) {
        std::vector<char> send(count * e), recv(count * e);
        for (int64_t i = 0; i < count; ++i) Store(t, send.data(), i, Input(t, kind, rank, n, i));
        comm->AllReduce(send.data(), recv.data(), count, t.dl, kind);
        std::string what = "allreduce " + std::to_string(static_cast<int>(kind));
        errors +=
            Compare(t, recv, [&](int64_t i) { return Reference(t, kind, n, i); }, count, what);
        // In place, as compiled code often calls it.
        comm->AllReduce(send.data(), send.data(), count, t.dl, kind);
        errors += Compare(
            t, send, [&](int64_t i) { return Reference(t, kind, n, i); }, count,
            what + " in place");
      }
      // Data movement: rank r's element i is the value r * 10 + i % 10 (exact everywhere).
      auto mine = [&](int r, int64_t i) { return static_cast<double>(r * 10 + i % 10); };
      std::vector<char> part(count * e), whole(count * e * n);
      for (int64_t i = 0; i < count; ++i) Store(t, part.data(), i, mine(rank, i));
      comm->AllGather(part.data(), whole.data(), count * e);
      errors += Compare(
          t, whole, [&](int64_t i) { return mine(i / count, i % count); }, count * n, "allgather");

      std::vector<char> bcast(count * e);
      if (rank == 0) bcast = part;
      comm->Broadcast(bcast.data(), bcast.data(), count * e);
      errors += Compare(t, bcast, [&](int64_t i) { return mine(0, i); }, count, "broadcast");

      std::vector<char> pieces(count * e * n), piece(count * e);
      if (rank == 0) {
        for (int64_t i = 0; i < count * n; ++i) {
          Store(t, pieces.data(), i, mine(i / count, i % count));
        }
      }
      comm->Scatter(rank == 0 ? pieces.data() : nullptr, piece.data(), count * e);
      errors += Compare(t, piece, [&](int64_t i) { return mine(rank, i); }, count, "scatter");

      std::vector<char> gathered(rank == 0 ? count * e * n : 0);
      comm->Gather(part.data(), rank == 0 ? gathered.data() : nullptr, count * e);
      if (rank == 0) {
        errors += Compare(
            t, gathered, [&](int64_t i) { return mine(i / count, i % count); }, count * n,
            "gather");
      }
    }
  }
  // Send/recv between every pair, in one order on every rank; 300 kB spans several mailboxes.
  const DType& t = kDTypes[10];  // float32
  for (int64_t count : {int64_t{0}, int64_t{3}, int64_t{75000}}) {
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (a == b || (rank != a && rank != b)) continue;
        std::vector<char> buf(count * 4 + 1);  // never empty: data() is a real pointer
        auto value = [&](int64_t i) { return static_cast<double>(a * 100 + b * 10 + i % 7); };
        if (rank == a) {
          for (int64_t i = 0; i < count; ++i) Store(t, buf.data(), i, value(i));
          comm->Send(buf.data(), count * 4, b);
        } else {
          comm->Recv(buf.data(), count * 4, a);
          errors += Compare(t, buf, value, count, "send/recv");
        }
      }
    }
  }
  return errors;
}

void CheckAllCollectives(Kind kind, int n) {
  std::string test = std::string(KindName(kind)) + std::to_string(n);
  std::vector<std::string> errors =
      RunRanks(n, MakeFactory(kind, n, test), [](int rank, std::unique_ptr<Communicator>* comm) {
        return AllCollectives(rank, comm->get());
      });
  for (int r = 0; r < n; ++r) CHECK_MESSAGE(errors[r].empty(), test, " rank ", r, ": ", errors[r]);
}

// ---- failures -------------------------------------------------------------------------------

constexpr int64_t kFailureCount = 1 << 16;

/* One allreduce of kFailureCount floats (what every rank runs in the failure tests). */
void OneAllReduce(Communicator* comm) {
  std::vector<float> data(kFailureCount, 1.0f);
  comm->AllReduce(data.data(), data.data(), kFailureCount, DLDataType{kDLFloat, 32, 1},
                  ReduceKind::kSum);
}

/* Runs allreduces until one fails; returns what the failure said. */
std::string AllReduceUntilFailure(Communicator* comm) {
  try {
    for (int i = 0; i < 1000000; ++i) OneAllReduce(comm);
  } catch (const PeerFailure& failure) {
    return std::string("PeerFailure(") + std::to_string(failure.worker()) + "): " + failure.what();
  }
  return "no failure";
}

/* Rank 1 runs `culprit`; every other rank runs allreduces until one fails.  Returns what each
 * rank's failure said.  (Every rank keeps its communicator until all are done: RunRanks.) */
std::vector<std::string> RunWithCulprit(Kind kind, const std::string& test,
                                        const std::function<void(Communicator*)>& culprit) {
  return RunRanks(3, MakeFactory(kind, 3, test),
                  [&](int rank, std::unique_ptr<Communicator>* comm) -> std::string {
                    if (rank != 1) return AllReduceUntilFailure(comm->get());
                    culprit(comm->get());
                    return "";
                  });
}

/* Rank 1 joins, runs one allreduce with the others and ends without a word, as a killed worker
 * would: its own thread ends (holding its shared-memory mutex; its sockets closed, as a process
 * exit closes them), or its own process exits.  Ranks 0 and 2 run allreduces until one fails. */
std::vector<std::string> RunWithDyingRank(Kind kind, const std::string& test, bool process) {
  Factory factory = MakeFactory(kind, 3, test);
  auto live_and_die = [&] {
    std::unique_ptr<Communicator> comm = factory(1);
    OneAllReduce(comm.get());
    // Shared memory: the thread ends still holding its robust mutex (the communicator leaks).
    if (kind == Kind::kShm) (void)comm.release();
  };
  pid_t child = -1;
  std::thread thread;
  if (process) {
    child = ::fork();
    if (child == 0) {
      try {
        live_and_die();
      } catch (...) {
        std::_Exit(1);
      }
      std::_Exit(0);
    }
  } else {
    thread = std::thread(live_and_die);
  }
  std::vector<std::string> got = RunRanks(
      3, factory,
      [](int, std::unique_ptr<Communicator>* comm) { return AllReduceUntilFailure(comm->get()); },
      /*elsewhere=*/1);
  if (process) {
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), "rank 1's process failed");
  } else {
    thread.join();
  }
  return got;
}

/* Both survivors (ranks 0 and 2) got a PeerFailure in allreduce, and the first to notice named
 * worker 1 (the other may see that rank's own abort instead, which names worker 1 or the first). */
void CheckSurvivors(const std::vector<std::string>& got, const std::string& direct) {
  for (int r : {0, 2}) {
    CAPTURE(r);
    CHECK(got[r].rfind("PeerFailure(", 0) == 0);
    CHECK(got[r].find("allreduce") != std::string::npos);
  }
  CHECK_MESSAGE((got[0].rfind(direct, 0) == 0 || got[2].rfind(direct, 0) == 0), got[0], " | ",
                got[2]);
}

}  // namespace

TEST_CASE("disco collectives: every collective x dtype x reduce kind, shared memory and TCP") {
  // Small staging slots: the 3001-element buffers go through the shared memory in several rounds.
  ::setenv("TVM_DISCO_SHM_SLOT_BYTES", "4096", 1);
  for (Kind kind : {Kind::kShm, Kind::kTcp}) {
    for (int n : {2, 3, 4}) CheckAllCollectives(kind, n);
  }
}

TEST_CASE("disco collectives: a rank that aborts fails every other rank") {
  for (Kind kind : {Kind::kShm, Kind::kTcp}) {
    std::string test = std::string("abort-") + KindName(kind);
    std::vector<std::string> got = RunWithCulprit(kind, test, [](Communicator* comm) {
      OneAllReduce(comm);
      comm->Abort("Disco worker 1 failed: boom");
    });
    CAPTURE(test);
    if (kind == Kind::kShm) {
      // Shared memory carries the reason itself, to every rank.
      for (int r : {0, 2}) {
        CHECK(got[r] == "PeerFailure(-1): allreduce was aborted: Disco worker 1 failed: boom");
      }
    } else {
      CheckSurvivors(got, "PeerFailure(1): allreduce failed: the connection between Disco worker ");
    }
  }
}

TEST_CASE("disco collectives: a rank whose thread or process ends mid-collective is named") {
  for (bool process : {false, true}) {
    for (Kind kind : {Kind::kShm, Kind::kTcp}) {
      std::string test = std::string(process ? "exit-" : "death-") + KindName(kind);
      std::vector<std::string> got = RunWithDyingRank(kind, test, process);
      CAPTURE(test);
      CheckSurvivors(got, kind == Kind::kShm
                              ? "PeerFailure(1): allreduce failed: Disco worker 1 exited (its "
                                "process or thread ended) while Disco worker "
                              : "PeerFailure(1): allreduce failed: the connection between Disco "
                                "worker ");
    }
  }
}
