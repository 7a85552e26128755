#include "peer_communicator.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace tvm_runtime {
namespace extra {
namespace disco {

namespace {

std::vector<int> WorkersOf(const Transport& transport) {
  std::vector<int> workers;
  for (int r = 0; r < transport.size(); ++r) workers.push_back(transport.worker_of(r));
  return workers;
}

}  // namespace

PeerCommunicator::PeerCommunicator(std::unique_ptr<Transport> transport)
    : Communicator(WorkersOf(*transport), transport->rank()), transport_(std::move(transport)) {}

void PeerCommunicator::Part(int64_t n, int p, int64_t* lo, int64_t* hi) const {
  int64_t per = (n + size() - 1) / size();
  *lo = std::min<int64_t>(n, per * p);
  *hi = std::min<int64_t>(n, *lo + per);
}

void PeerCommunicator::AllReduce(const void* send, void* recv, int64_t count, DLDataType dtype,
                                 ReduceKind kind) {
  if (IsHalfFloat(dtype)) {
    // Partial sums travel as float32: one rounding at the end, as on the shared-memory path.
    std::vector<float> acc(static_cast<size_t>(count));
    WidenToFloat(send, acc.data(), count, dtype);
    RingAllReduce(reinterpret_cast<char*>(acc.data()), count, DLDataType{kDLFloat, 32, 1}, kind);
    NarrowFromFloat(acc.data(), recv, count, dtype);
    return;
  }
  if (send != recv) std::memcpy(recv, send, count * ElemBytes(dtype));
  RingAllReduce(static_cast<char*>(recv), count, dtype, kind);
}

void PeerCommunicator::RingAllReduce(char* acc, int64_t count, DLDataType dtype, ReduceKind kind) {
  int64_t elem = ElemBytes(dtype);
  int n = size();
  if (n == 1 || count == 0) return;
  int next = (rank_ + 1) % n, prev = (rank_ + n - 1) % n;
  int64_t lo, hi;
  Part(count, 0, &lo, &hi);
  std::vector<char> tmp(static_cast<size_t>((hi - lo) * elem));
  // Reduce-scatter: after n-1 steps we hold the full reduction of part (rank + 1) % n.
  for (int step = 0; step < n - 1; ++step) {
    int send_part = (rank_ - step + n) % n, recv_part = (rank_ - step - 1 + n) % n;
    int64_t slo, shi, rlo, rhi;
    Part(count, send_part, &slo, &shi);
    Part(count, recv_part, &rlo, &rhi);
    std::vector<Transfer> ts = {{next, true, acc + slo * elem, (shi - slo) * elem, Op::kAllReduce},
                                {prev, false, tmp.data(), (rhi - rlo) * elem, Op::kAllReduce}};
    Exchange(&ts, "allreduce");
    ReduceInto(acc + rlo * elem, tmp.data(), rhi - rlo, dtype, kind);
  }
  int owned = (rank_ + 1) % n;
  if (kind == ReduceKind::kAvg) {
    Part(count, owned, &lo, &hi);
    FinishAverage(acc + lo * elem, hi - lo, dtype, n);
  }
  // Allgather of the reduced parts around the same ring.
  for (int step = 0; step < n - 1; ++step) {
    int send_part = (owned - step + n) % n, recv_part = (owned - step - 1 + n) % n;
    int64_t slo, shi, rlo, rhi;
    Part(count, send_part, &slo, &shi);
    Part(count, recv_part, &rlo, &rhi);
    std::vector<Transfer> ts = {
        {next, true, acc + slo * elem, (shi - slo) * elem, Op::kAllReduce},
        {prev, false, acc + rlo * elem, (rhi - rlo) * elem, Op::kAllReduce}};
    Exchange(&ts, "allreduce");
  }
}

void PeerCommunicator::AllGather(const void* send, void* recv, int64_t bytes) {
  char* out = static_cast<char*>(recv);
  if (out + rank_ * bytes != send) std::memcpy(out + rank_ * bytes, send, bytes);
  int n = size();
  int next = (rank_ + 1) % n, prev = (rank_ + n - 1) % n;
  for (int step = 0; step < n - 1; ++step) {
    int send_block = (rank_ - step + n) % n, recv_block = (rank_ - step - 1 + n) % n;
    std::vector<Transfer> ts = {{next, true, out + send_block * bytes, bytes, Op::kAllGather},
                                {prev, false, out + recv_block * bytes, bytes, Op::kAllGather}};
    Exchange(&ts, "allgather");
  }
}

void PeerCommunicator::Broadcast(const void* send, void* recv, int64_t bytes) {
  char* out = static_cast<char*>(recv);
  int n = size();
  int mask = 1;
  // Binomial tree rooted at rank 0: receive from the parent (our lowest set bit cleared)...
  if (rank_ == 0) {
    if (send != recv) std::memcpy(out, send, bytes);
    while (mask < n) mask <<= 1;
  } else {
    mask = rank_ & -rank_;
    std::vector<Transfer> ts = {{rank_ - mask, false, out, bytes, Op::kBroadcast}};
    Exchange(&ts, "broadcast_from_worker0");
  }
  // ...then forward to our children, all at once.
  std::vector<Transfer> ts;
  for (mask >>= 1; mask >= 1; mask >>= 1) {
    if (rank_ + mask < n) ts.push_back({rank_ + mask, true, out, bytes, Op::kBroadcast});
  }
  Exchange(&ts, "broadcast_from_worker0");
}

void PeerCommunicator::Scatter(const void* send, void* recv, int64_t bytes) {
  std::vector<Transfer> ts;
  if (rank_ == 0) {
    const char* in = static_cast<const char*>(send);
    for (int p = 1; p < size(); ++p) {
      ts.push_back({p, true, const_cast<char*>(in) + p * bytes, bytes, Op::kScatter});
    }
    if (recv != send) std::memcpy(recv, in, bytes);
  } else {
    ts.push_back({0, false, static_cast<char*>(recv), bytes, Op::kScatter});
  }
  Exchange(&ts, "scatter_from_worker0");
}

void PeerCommunicator::Gather(const void* send, void* recv, int64_t bytes) {
  std::vector<Transfer> ts;
  if (rank_ == 0) {
    char* out = static_cast<char*>(recv);
    for (int p = 1; p < size(); ++p) ts.push_back({p, false, out + p * bytes, bytes, Op::kGather});
    if (out != send) std::memcpy(out, send, bytes);
  } else {
    ts.push_back({0, true, const_cast<char*>(static_cast<const char*>(send)), bytes, Op::kGather});
  }
  Exchange(&ts, "gather_to_worker0");
}

void PeerCommunicator::Send(const void* buf, int64_t bytes, int peer) {
  std::vector<Transfer> ts = {
      {peer, true, const_cast<char*>(static_cast<const char*>(buf)), bytes, Op::kPointToPoint}};
  Exchange(&ts, "send");
}

void PeerCommunicator::Recv(void* buf, int64_t bytes, int peer) {
  std::vector<Transfer> ts = {{peer, false, static_cast<char*>(buf), bytes, Op::kPointToPoint}};
  Exchange(&ts, "recv");
}

}  // namespace disco
}  // namespace extra
}  // namespace tvm_runtime
