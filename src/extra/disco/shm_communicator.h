/*
 * The cpu collectives between ranks on one machine (threads of one process, or processes):
 * a shared memory segment in /dev/shm holds a barrier, two sets of one staging slot per rank
 * (alternated between rounds, so one barrier per round separates writers from readers) and one
 * point-to-point mailbox per rank.  Large buffers go through in slot-sized rounds.
 *
 * Every rank opens the segment by name (created by whichever comes first), initialises its own
 * robust mutex and holds it while attached: a peer whose thread or process ends releases it, so
 * waiting ranks see at once who is gone.  The name is unlinked as soon as every rank attached,
 * and the segment disappears with the last mapping.
 */
#ifndef TVM_RUNTIME_EXTRA_DISCO_SHM_COMMUNICATOR_H_
#define TVM_RUNTIME_EXTRA_DISCO_SHM_COMMUNICATOR_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "communicator.h"
#include "wait_policy.h"

namespace tvm_runtime {
namespace extra {
namespace disco {

struct ShmHeader;
struct ShmRank;

class ShmCommunicator final : public Communicator {
 public:
  /* Attaches to segment `name` (a file name in /dev/shm) shared by `workers.size()` ranks; waits
   * up to `attach_timeout_s` for every rank to attach. */
  ShmCommunicator(const std::string& name, std::vector<int> workers, int rank,
                  double attach_timeout_s);
  ~ShmCommunicator() override;

  TVM_RUNTIME_DISCO_COMMUNICATOR_OVERRIDES;
  void Abort(const std::string& reason) noexcept override;

  /* Aborts the segment `name` if it still exists (from the controller, when a worker died before
   * every rank attached); returns whether it did. */
  static bool AbortByName(const std::string& name, const std::string& reason);

 private:
  void Barrier(const char* what);
  template <typename Done>
  void Wait(std::atomic<uint32_t>* word, Done done, const char* what);
  void CheckHealth(const char* what);
  char* Slot(int set, int rank) const;
  char* Mailbox(int rank) const;
  /* The next slot set to use: alternates every round. */
  int NextSet() { return static_cast<int>(round_++ & 1); }
  /* [lo, hi) of part p when n elements are split between the ranks. */
  void Part(int64_t n, int p, int64_t* lo, int64_t* hi) const;

  std::string path_;
  char* base_ = nullptr;
  size_t total_bytes_ = 0;
  ShmHeader* header_ = nullptr;
  ShmRank* ranks_ = nullptr;
  int64_t slot_bytes_ = 0;
  int64_t mail_bytes_ = 0;
  uint64_t round_ = 0;
  WaitPolicy policy_;
  bool attached_ = false;
};

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_DISCO_SHM_COMMUNICATOR_H_
