/*
 * Compile-time check of src/include/tvm_runtime/backend/disco/nccl_api.h against the real nccl.h:
 * the unique id's size, every data type and reduction value, the communicator handle and how every
 * entry point is called.  Our declarations use int enums and void* streams (no CUDA headers at
 * build time), so signatures are compared by ABI (abi_check.h).  Built by
 * test_vendor_api_decls.py with the nvidia-nccl wheel's headers (ci/vendor_headers.py).
 */
#include <nccl.h>
#include <tvm_runtime/backend/disco/nccl_api.h>

#include <type_traits>

#include "abi_check.h"

namespace ours = tvm_runtime::backend::nccl;

static_assert(ours::kUniqueIdBytes == NCCL_UNIQUE_ID_BYTES, "NCCL_UNIQUE_ID_BYTES");
static_assert(sizeof(ours::UniqueId) == sizeof(ncclUniqueId), "ncclUniqueId size");
static_assert(alignof(ours::UniqueId) == alignof(ncclUniqueId), "ncclUniqueId alignment");
static_assert(std::is_same<ours::Comm, ncclComm_t>::value, "ncclComm_t");
static_assert(sizeof(ours::Result) == sizeof(ncclResult_t) && ncclSuccess == 0, "ncclResult_t");
static_assert(sizeof(ours::DataType) == sizeof(ncclDataType_t), "ncclDataType_t size");
static_assert(sizeof(ours::RedOp) == sizeof(ncclRedOp_t), "ncclRedOp_t size");

#define SAME_VALUE(mine, theirs) \
  static_assert(static_cast<long long>(mine) == static_cast<long long>(theirs), #theirs)
SAME_VALUE(ours::kInt8, ncclInt8);
SAME_VALUE(ours::kUint8, ncclUint8);
SAME_VALUE(ours::kInt32, ncclInt32);
SAME_VALUE(ours::kUint32, ncclUint32);
SAME_VALUE(ours::kInt64, ncclInt64);
SAME_VALUE(ours::kUint64, ncclUint64);
SAME_VALUE(ours::kFloat16, ncclFloat16);
SAME_VALUE(ours::kFloat32, ncclFloat32);
SAME_VALUE(ours::kFloat64, ncclFloat64);
SAME_VALUE(ours::kBfloat16, ncclBfloat16);
SAME_VALUE(ours::kSum, ncclSum);
SAME_VALUE(ours::kProd, ncclProd);
SAME_VALUE(ours::kMax, ncclMax);
SAME_VALUE(ours::kMin, ncclMin);
SAME_VALUE(ours::kAvg, ncclAvg);

#define SAME_FN(field, symbol) TVM_RUNTIME_SAME_ABI(decltype(ours::NcclApi::field), symbol)
SAME_FN(GetVersion, ncclGetVersion);
SAME_FN(GetErrorString, ncclGetErrorString);
SAME_FN(GetUniqueId, ncclGetUniqueId);
SAME_FN(CommInitRank, ncclCommInitRank);
SAME_FN(CommDestroy, ncclCommDestroy);
SAME_FN(CommSplit, ncclCommSplit);
SAME_FN(AllReduce, ncclAllReduce);
SAME_FN(AllGather, ncclAllGather);
SAME_FN(Broadcast, ncclBroadcast);
SAME_FN(Send, ncclSend);
SAME_FN(Recv, ncclRecv);
SAME_FN(GroupStart, ncclGroupStart);
SAME_FN(GroupEnd, ncclGroupEnd);

int main() { return 0; }
