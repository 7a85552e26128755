/*
 * Fuzz target: one RPC packet body as the native server session answers it
 * (`tvm_runtime.rpc.session_answer`, src/core/rpc: remote calls, copies, FREE_HANDLE).  Each
 * input gets a fresh session holding a function (runtime.GetDeviceAttr, handle 0x1000) and a
 * 64-byte CPU buffer (data handle 0x1010), so calls and copies reach real code.  An input is
 * answered with a well-formed reply packet, left to the Python session, or refused as a protocol
 * error; anything else (a crash, an unclear error) is a finding.  Seeds: the Python decoder's
 * (fuzz_rpc_packet.py --write-seeds).
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/string.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fuzz_runtime.h"

namespace {

namespace ffi = ::tvm::ffi;

ffi::Function session_new, session_answer, session_put, session_put_tensor, get_device_attr,
    alloc_tensor;

// Statuses of tvm_runtime.rpc.session_answer (src/core/rpc/rpc_globals.cc).
constexpr int64_t kAnswered = 0, kNotNative = 1, kProtocolError = 3;
// Reply codes: RETURN, EXCEPTION, COPY_ACK.
constexpr int32_t kReplyCodes[] = {4, 5, 8};

[[noreturn]] void Finding(const char* what) {
  std::fprintf(stderr, "rpc_session: %s\n", what);
  std::abort();
}

void CheckReply(const ffi::Bytes& reply) {
  if (reply.size() < 12) Finding("reply shorter than a length and a code");
  uint64_t nbytes;
  int32_t code;
  std::memcpy(&nbytes, reply.data(), sizeof(nbytes));
  std::memcpy(&code, reply.data() + 8, sizeof(code));
  if (nbytes != reply.size() - 8) Finding("reply length prefix does not match its size");
  for (int32_t ok : kReplyCodes) {
    if (code == ok) return;
  }
  Finding("reply with an unexpected code");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tvmrt_fuzz::LoadRuntime({});
  session_new = tvmrt_fuzz::Global("tvm_runtime.rpc.session_new");
  session_answer = tvmrt_fuzz::Global("tvm_runtime.rpc.session_answer");
  session_put = tvmrt_fuzz::Global("tvm_runtime.rpc.session_put");
  session_put_tensor = tvmrt_fuzz::Global("tvm_runtime.rpc.session_put_tensor");
  get_device_attr = tvmrt_fuzz::Global("runtime.GetDeviceAttr");
  alloc_tensor = tvmrt_fuzz::Global("runtime.TVMTensorAllocWithScope");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ffi::Any state = session_new();
  session_put(state, get_device_attr);
  session_put_tensor(state, alloc_tensor(ffi::Shape({64}), DLDataType{kDLUInt, 8, 1},
                                         DLDevice{kDLCPU, 0}, ffi::Any()));
  ffi::Bytes body(reinterpret_cast<const char*>(data), size);
  tvmrt_fuzz::ExpectHandled([&] {
    auto result = session_answer(state, body, int64_t{1} << 20).cast<ffi::Array<ffi::Any>>();
    int64_t status = result[0].cast<int64_t>();
    if (status == kAnswered) {
      CheckReply(result[1].cast<ffi::Bytes>());
    } else if (status != kNotNative && status != kProtocolError) {
      Finding("unknown answer status");
    }
  });
  return 0;
}
