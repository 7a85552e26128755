/*
 * The part of the NCCL C API that Disco's GPU collectives use, declared here so no NCCL header
 * or library is needed at build time: libnccl.so.2 (NVIDIA) or librccl.so.1 (AMD's RCCL, which
 * keeps NCCL's names, values and calling conventions) is opened with dlopen at first use.
 * Values are NCCL's own (nccl.h): note ncclMax = 2 and ncclMin = 3, the other way round from
 * apache-tvm's ReduceKind.
 */
#ifndef TVM_RUNTIME_BACKEND_DISCO_NCCL_API_H_
#define TVM_RUNTIME_BACKEND_DISCO_NCCL_API_H_

#include <tvm_runtime/backend/vendor/vendor_library.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace backend {
namespace nccl {

constexpr int kUniqueIdBytes = 128;

struct UniqueId {
  char internal[kUniqueIdBytes];
};

using Comm = struct ncclComm*;
using Result = int;  // ncclResult_t: 0 = ncclSuccess

enum DataType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
};

enum RedOp : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };

struct NcclApi {
  Result (*GetVersion)(int* version);
  const char* (*GetErrorString)(Result result);
  Result (*GetUniqueId)(UniqueId* id);
  Result (*CommInitRank)(Comm* comm, int nranks, UniqueId id, int rank);
  Result (*CommDestroy)(Comm comm);
  Result (*CommSplit)(Comm comm, int color, int key, Comm* newcomm, void* config);  // 2.18+
  Result (*AllReduce)(const void* send, void* recv, size_t count, DataType dtype, RedOp op,
                      Comm comm, void* stream);
  Result (*AllGather)(const void* send, void* recv, size_t count, DataType dtype, Comm comm,
                      void* stream);
  Result (*Broadcast)(const void* send, void* recv, size_t count, DataType dtype, int root,
                      Comm comm, void* stream);
  Result (*Send)(const void* buf, size_t count, DataType dtype, int peer, Comm comm, void* stream);
  Result (*Recv)(void* buf, size_t count, DataType dtype, int peer, Comm comm, void* stream);
  Result (*GroupStart)();
  Result (*GroupEnd)();
};

inline void ResolveNcclApi(SymbolResolver& r, NcclApi* api) {
  r.Required({"ncclGetVersion"}, &api->GetVersion);
  r.Required({"ncclGetErrorString"}, &api->GetErrorString);
  r.Required({"ncclGetUniqueId"}, &api->GetUniqueId);
  r.Required({"ncclCommInitRank"}, &api->CommInitRank);
  r.Required({"ncclCommDestroy"}, &api->CommDestroy);
  r.Optional({"ncclCommSplit"}, &api->CommSplit);
  r.Required({"ncclAllReduce"}, &api->AllReduce);
  r.Required({"ncclAllGather"}, &api->AllGather);
  r.Required({"ncclBroadcast"}, &api->Broadcast);
  r.Required({"ncclSend"}, &api->Send);
  r.Required({"ncclRecv"}, &api->Recv);
  r.Required({"ncclGroupStart"}, &api->GroupStart);
  r.Required({"ncclGroupEnd"}, &api->GroupEnd);
}

using NcclLibrary = VendorApi<NcclApi>;

/* How an NCCL-API library is named in messages. */
struct NcclLibraryInfo {
  const char* name;         // "NCCL", "RCCL"
  const char* soname;       // "libnccl.so.2"
  const char* requirement;  // what version a usable one is
  std::string how_to_fix;   // ends the failure message
};

/* What OpenVendorApi says about an NCCL-API library. */
inline VendorApiMessages NcclMessages(const NcclLibraryInfo& info) {
  return VendorApiMessages{std::string(info.name) + " library",
                           std::string("Disco's collectives need ") + info.requirement,
                           std::string(info.name) + " (" + info.soname + ") could not be opened",
                           info.how_to_fix};
}

/* Opens the first usable library of `candidates`; `table` must outlive the process. */
inline NcclLibrary OpenNcclLibrary(const std::vector<std::string>& candidates, NcclApi* table,
                                   const NcclLibraryInfo& info) {
  return OpenVendorApi(candidates, table, ResolveNcclApi, NcclMessages(info));
}

/* OpenNcclLibrary on the first call (OpenVendorApiOnce): what a backend's library getter returns.
 * `candidates()` and `info()` are only evaluated then. */
template <typename Candidates, typename Info>
const NcclLibrary& OpenNcclLibraryOnce(Candidates&& candidates, Info&& info) {
  return OpenVendorApiOnce<NcclApi>(candidates, ResolveNcclApi,
                                    [&info] { return NcclMessages(info()); });
}

}  // namespace nccl
}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_DISCO_NCCL_API_H_
