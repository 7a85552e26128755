#include "shm_communicator.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <tvm_runtime/backend/error.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "collective_errors.h"
#include "peer_failure.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

namespace {

constexpr int64_t kDefaultSlotBytes = 1 << 20;
constexpr int64_t kMailBytes = 256 << 10;
constexpr size_t kReasonBytes = 1024;

int64_t SlotBytesFromEnv() {
  const char* env = std::getenv("TVM_DISCO_SHM_SLOT_BYTES");
  int64_t v = env != nullptr ? std::atoll(env) : 0;
  return v >= 4096 ? (v / 64) * 64 : kDefaultSlotBytes;
}

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

struct alignas(64) PaddedWord {
  std::atomic<uint32_t> value;
};

struct ShmHeader {
  PaddedWord attached;    // ranks that finished attaching
  PaddedWord arrived;     // barrier arrivals in the current generation
  PaddedWord generation;  // barrier generation (futex word)
  PaddedWord sleepers;    // threads asleep on a futex of this segment
  PaddedWord aborted;     // 1 once a rank aborted; reason below
  char reason[kReasonBytes];
};

enum RankState : uint32_t { kAbsent = 0, kAttached = 1, kDied = 2, kLeft = 3 };

struct alignas(64) ShmRank {
  pthread_mutex_t alive;         // robust: held by the rank while it is attached
  std::atomic<uint32_t> state;   // RankState
  std::atomic<uint32_t> posted;  // point-to-point messages this rank posted (futex word)
  std::atomic<uint32_t> taken;   // of them, taken by their receiver (futex word)
  std::atomic<int32_t> dst;      // receiver of the message in the mailbox
  std::atomic<int64_t> nbytes;   // its size
};

ShmCommunicator::ShmCommunicator(const std::string& name, std::vector<int> workers, int rank,
                                 double attach_timeout_s)
    : Communicator(std::move(workers), rank),
      path_("/dev/shm/" + name),
      slot_bytes_(SlotBytesFromEnv()),
      mail_bytes_(kMailBytes),
      policy_(WaitPolicy::For(size())) {
  size_t header = RoundUp(sizeof(ShmHeader) + sizeof(ShmRank) * size(), 4096);
  total_bytes_ = header + static_cast<size_t>(2 * size()) * slot_bytes_ +
                 static_cast<size_t>(size()) * mail_bytes_;
  int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    Fail("Disco cpu collectives: cannot create the shared memory segment " + path_ + ": " +
         std::strerror(errno) + " (is /dev/shm mounted and writable?)");
  }
  // Reserve the pages now: a full /dev/shm is an error here instead of a SIGBUS mid-collective.
  int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(total_bytes_));
  if (rc == EOPNOTSUPP || rc == EINVAL) rc = ::ftruncate(fd, total_bytes_) == 0 ? 0 : errno;
  if (rc != 0) {
    ::close(fd);
    ::unlink(path_.c_str());
    Fail("Disco cpu collectives: cannot reserve " + std::to_string(total_bytes_ >> 20) +
         " MiB of shared memory in /dev/shm for " + std::to_string(size()) +
         " workers: " + std::strerror(rc) +
         " (in a container, raise its shared memory size, e.g. docker run --shm-size=1g; or set "
         "TVM_DISCO_SHM_SLOT_BYTES to a smaller staging size)");
  }
  void* p = ::mmap(nullptr, total_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    Fail("Disco cpu collectives: cannot map " + path_ + ": " + std::strerror(errno));
  }
  base_ = static_cast<char*>(p);
  header_ = reinterpret_cast<ShmHeader*>(base_);
  ranks_ = reinterpret_cast<ShmRank*>(base_ + sizeof(ShmHeader));

  // Our own robust mutex, initialised and locked by us alone, then announced.
  ShmRank& me = ranks_[rank_];
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&me.alive, &attr);
  pthread_mutexattr_destroy(&attr);
  pthread_mutex_lock(&me.alive);
  me.state.store(kAttached, std::memory_order_release);
  attached_ = true;
  header_->attached.value.fetch_add(1, std::memory_order_acq_rel);
  FutexWakeAll(&header_->attached.value);

  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(attach_timeout_s);
  uint32_t all = static_cast<uint32_t>(size());
  while (header_->attached.value.load(std::memory_order_acquire) < all) {
    CheckHealth("joining the cpu collectives");
    if (std::chrono::steady_clock::now() > deadline) {
      uint32_t n = header_->attached.value.load();
      Fail("Disco cpu collectives: only " + std::to_string(n) + " of " + std::to_string(all) +
           " workers attached to " + path_ + " within " + std::to_string(attach_timeout_s) +
           " s (set TVM_DISCO_CCL_TIMEOUT_S to wait longer)");
    }
    FutexWait(&header_->attached.value, header_->attached.value.load(), policy_.sleep_ns);
  }
  // Everyone has it mapped: the name is no longer needed.
  if (rank_ == 0) ::unlink(path_.c_str());
}

ShmCommunicator::~ShmCommunicator() {
  if (base_ == nullptr) return;
  if (attached_) {
    // Unlock before unmapping: the mutex must leave this thread's robust list while mapped.
    pthread_mutex_unlock(&ranks_[rank_].alive);
  }
  ::munmap(base_, total_bytes_);
}

char* ShmCommunicator::Slot(int set, int rank) const {
  size_t header = RoundUp(sizeof(ShmHeader) + sizeof(ShmRank) * size(), 4096);
  return base_ + header + (static_cast<size_t>(set) * size() + rank) * slot_bytes_;
}

char* ShmCommunicator::Mailbox(int rank) const {
  return Slot(2, 0) + static_cast<size_t>(rank) * mail_bytes_;
}

void ShmCommunicator::Part(int64_t n, int p, int64_t* lo, int64_t* hi) const {
  int64_t per = (n + size() - 1) / size();
  per = (per + 15) / 16 * 16;  // whole cache lines for every element size
  *lo = std::min<int64_t>(n, per * p);
  *hi = std::min<int64_t>(n, *lo + per);
}

void ShmCommunicator::CheckHealth(const char* what) {
  if (header_->aborted.value.load(std::memory_order_acquire) == 1) {
    throw PeerFailure(-1, std::string(what) + " was aborted: " +
                              std::string(header_->reason, strnlen(header_->reason, kReasonBytes)));
  }
  for (int r = 0; r < size(); ++r) {
    if (r == rank_) continue;
    ShmRank& peer = ranks_[r];
    uint32_t state = peer.state.load(std::memory_order_acquire);
    if (state == kAbsent) continue;  // not attached yet: nothing to check
    if (state == kAttached) {
      int rc = pthread_mutex_trylock(&peer.alive);
      if (rc == EBUSY) continue;
      // We now hold a gone rank's mutex: record how it went, so the others need not guess.
      if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&peer.alive);
        peer.state.store(kDied, std::memory_order_release);
      } else {
        peer.state.store(rc == 0 ? kLeft : kDied, std::memory_order_release);
      }
      if (rc == 0 || rc == EOWNERDEAD) pthread_mutex_unlock(&peer.alive);
      state = peer.state.load(std::memory_order_acquire);
    }
    std::string why =
        Worker(worker_of(r)) +
        (state == kLeft ? " left the session" : " exited (its process or thread ended)") +
        " while " + Worker(worker_of(rank_)) + " was in " + what;
    Abort(why);
    throw PeerFailure(worker_of(r), std::string(what) + " failed: " + why);
  }
}

template <typename Done>
void ShmCommunicator::Wait(std::atomic<uint32_t>* word, Done done, const char* what) {
  for (int i = 0; i < policy_.spins; ++i) {
    if (done()) return;
    CpuRelax();
  }
  for (int i = 0; i < policy_.yields; ++i) {
    if (done()) return;
    sched_yield();
  }
  std::atomic<uint32_t>& sleepers = header_->sleepers.value;
  while (!done()) {
    CheckHealth(what);
    uint32_t seen = word->load(std::memory_order_seq_cst);
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (!done()) FutexWait(word, seen, policy_.sleep_ns);
    sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

static void WakeIfSleeping(ShmHeader* header, std::atomic<uint32_t>* word) {
  if (header->sleepers.value.load(std::memory_order_seq_cst) > 0) FutexWakeAll(word);
}

void ShmCommunicator::Barrier(const char* what) {
  std::atomic<uint32_t>& gen = header_->generation.value;
  uint32_t mine = gen.load(std::memory_order_acquire);
  if (header_->arrived.value.fetch_add(1, std::memory_order_acq_rel) ==
      static_cast<uint32_t>(size() - 1)) {
    header_->arrived.value.store(0, std::memory_order_relaxed);
    gen.store(mine + 1, std::memory_order_seq_cst);
    WakeIfSleeping(header_, &gen);
    return;
  }
  Wait(&gen, [&] { return gen.load(std::memory_order_acquire) != mine; }, what);
}

void ShmCommunicator::AllReduce(const void* send, void* recv, int64_t count, DLDataType dtype,
                                ReduceKind kind) {
  int64_t elem = (dtype.bits * dtype.lanes + 7) / 8;
  int64_t chunk = slot_bytes_ / elem;
  std::vector<const void*> ins(size());
  for (int64_t start = 0; start < count; start += chunk) {
    int64_t n = std::min(chunk, count - start);
    int set = NextSet();
    const char* mine = static_cast<const char*>(send) + start * elem;
    int64_t lo, hi;
    Part(n, rank_, &lo, &hi);
    // Stage what the others reduce; the part we reduce ourselves is read from `send` directly.
    std::memcpy(Slot(set, rank_), mine, lo * elem);
    std::memcpy(Slot(set, rank_) + hi * elem, mine + hi * elem, (n - hi) * elem);
    Barrier("allreduce");
    if (hi > lo) {
      // Our contribution first, then the others' in rank order; the result goes where our
      // contribution would have been staged, for the others to copy.
      ins[0] = mine + lo * elem;
      for (int r = 0, k = 1; r < size(); ++r) {
        if (r != rank_) ins[k++] = Slot(set, r) + lo * elem;
      }
      ReduceMany(Slot(set, rank_) + lo * elem, ins.data(), size(), hi - lo, dtype, kind);
    }
    Barrier("allreduce");
    for (int p = 0; p < size(); ++p) {
      Part(n, p, &lo, &hi);
      std::memcpy(static_cast<char*>(recv) + (start + lo) * elem, Slot(set, p) + lo * elem,
                  (hi - lo) * elem);
    }
  }
}

void ShmCommunicator::AllGather(const void* send, void* recv, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += slot_bytes_) {
    int64_t n = std::min(slot_bytes_, bytes - off);
    int set = NextSet();
    std::memcpy(Slot(set, rank_), static_cast<const char*>(send) + off, n);
    Barrier("allgather");
    for (int p = 0; p < size(); ++p) {
      std::memcpy(static_cast<char*>(recv) + p * bytes + off, Slot(set, p), n);
    }
  }
}

void ShmCommunicator::Broadcast(const void* send, void* recv, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += slot_bytes_) {
    int64_t n = std::min(slot_bytes_, bytes - off);
    int set = NextSet();
    if (rank_ == 0) {
      std::memcpy(Slot(set, 0), static_cast<const char*>(send) + off, n);
      if (recv != send) std::memcpy(static_cast<char*>(recv) + off, Slot(set, 0), n);
    }
    Barrier("broadcast_from_worker0");
    if (rank_ != 0) std::memcpy(static_cast<char*>(recv) + off, Slot(set, 0), n);
  }
}

void ShmCommunicator::Scatter(const void* send, void* recv, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += slot_bytes_) {
    int64_t n = std::min(slot_bytes_, bytes - off);
    int set = NextSet();
    if (rank_ == 0) {
      for (int p = 0; p < size(); ++p) {
        std::memcpy(Slot(set, p), static_cast<const char*>(send) + p * bytes + off, n);
      }
    }
    Barrier("scatter_from_worker0");
    std::memcpy(static_cast<char*>(recv) + off, Slot(set, rank_), n);
  }
}

void ShmCommunicator::Gather(const void* send, void* recv, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += slot_bytes_) {
    int64_t n = std::min(slot_bytes_, bytes - off);
    int set = NextSet();
    std::memcpy(Slot(set, rank_), static_cast<const char*>(send) + off, n);
    Barrier("gather_to_worker0");
    if (rank_ == 0) {
      for (int p = 0; p < size(); ++p) {
        std::memcpy(static_cast<char*>(recv) + p * bytes + off, Slot(set, p), n);
      }
    }
  }
}

void ShmCommunicator::Send(const void* buf, int64_t bytes, int peer) {
  ShmRank& me = ranks_[rank_];
  char* box = Mailbox(rank_);
  int64_t off = 0;
  do {  // an empty message is one empty chunk, so the receiver's count matches
    int64_t n = std::min(mail_bytes_, bytes - off);
    Wait(
        &me.taken, [&] { return me.taken.load(std::memory_order_acquire) == me.posted.load(); },
        "send");
    std::memcpy(box, static_cast<const char*>(buf) + off, n);
    me.dst.store(peer, std::memory_order_relaxed);
    me.nbytes.store(n, std::memory_order_relaxed);
    me.posted.fetch_add(1, std::memory_order_seq_cst);
    WakeIfSleeping(header_, &me.posted);
    off += n;
  } while (off < bytes);
}

void ShmCommunicator::Recv(void* buf, int64_t bytes, int peer) {
  ShmRank& from = ranks_[peer];
  const char* box = Mailbox(peer);
  int64_t off = 0;
  do {
    int64_t n = std::min(mail_bytes_, bytes - off);
    Wait(
        &from.posted,
        [&] {
          return from.posted.load(std::memory_order_acquire) != from.taken.load() &&
                 from.dst.load(std::memory_order_relaxed) == rank_;
        },
        "recv");
    int64_t got = from.nbytes.load(std::memory_order_relaxed);
    if (got != n) {
      std::string why = Worker(worker_of(peer)) + " sent a message of " + std::to_string(got) +
                        " bytes where " + Worker(worker_of(rank_)) + " expected " +
                        std::to_string(n) + " (send and recv buffers must have the same size)";
      Abort(why);
      Fail(why);
    }
    std::memcpy(static_cast<char*>(buf) + off, box, n);
    from.taken.fetch_add(1, std::memory_order_seq_cst);
    WakeIfSleeping(header_, &from.taken);
    off += n;
  } while (off < bytes);
}

void ShmCommunicator::Abort(const std::string& reason) noexcept {
  uint32_t expected = 0;
  if (header_->aborted.value.compare_exchange_strong(expected, 2)) {
    std::snprintf(header_->reason, kReasonBytes, "%s", reason.c_str());
    header_->aborted.value.store(1, std::memory_order_release);
  }
  // Wake every sleeper on every word, whatever it waits for: they all re-check and fail.
  FutexWakeAll(&header_->generation.value);
  FutexWakeAll(&header_->attached.value);
  for (int r = 0; r < size(); ++r) {
    FutexWakeAll(&ranks_[r].posted);
    FutexWakeAll(&ranks_[r].taken);
  }
}

bool ShmCommunicator::AbortByName(const std::string& name, const std::string& reason) {
  std::string path = "/dev/shm/" + name;
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < sizeof(ShmHeader)) {
    ::close(fd);
    return false;
  }
  void* p = ::mmap(nullptr, sizeof(ShmHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return false;
  auto* header = static_cast<ShmHeader*>(p);
  uint32_t expected = 0;
  if (header->aborted.value.compare_exchange_strong(expected, 2)) {
    std::snprintf(header->reason, kReasonBytes, "%s", reason.c_str());
    header->aborted.value.store(1, std::memory_order_release);
  }
  FutexWakeAll(&header->attached.value);
  FutexWakeAll(&header->generation.value);
  ::munmap(p, sizeof(ShmHeader));
  ::unlink(path.c_str());
  return true;
}

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime
