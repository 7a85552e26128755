/*
 * tvm_runtime.rpc.*: the native RPC server session as tvm/rpc/_session.py (same wheel) drives it.
 * Private to the core wheel: the DSO and its Python package change together.
 */
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <optional>
#include <string>

#include "../core_init.h"
#include "remote_call.h"
#include "serve_loop.h"
#include "session_state.h"
#include "wire_format.h"

namespace tvm_runtime {
namespace core {
namespace {

namespace ffi = ::tvm::ffi;
using rpc::SessionState;

/* (status, message) as tvm/rpc/_session.py reads a ServeOutcome. */
ffi::Array<ffi::Any> OutcomeToArray(const rpc::ServeOutcome& outcome) {
  return ffi::Array<ffi::Any>{static_cast<int64_t>(outcome.status), ffi::String(outcome.message)};
}

/* Serves the connected socket `fd` until the session ends; `fallback(body: bytes) -> bool`
 * handles the packets the native session leaves to Python. */
ffi::Array<ffi::Any> Serve(SessionState state, int64_t fd, int64_t max_packet_bytes,
                           double idle_timeout_s, ffi::Function fallback) {
  rpc::ServeOptions options;
  options.fd = static_cast<int>(fd);
  options.max_packet_bytes = static_cast<uint64_t>(max_packet_bytes);
  options.idle_timeout_s = idle_timeout_s;
  auto to_python = [&fallback](const char* body, size_t size) {
    return fallback(ffi::Bytes(body, size)).cast<bool>();
  };
  return OutcomeToArray(rpc::ServeConnection(state.get(), options, to_python));
}

/* The reply to one packet body read by the Python loop (TLS sessions): (0, reply bytes), (1,
 * None) for a packet Python answers, or (3, why) when the packet breaks the protocol. */
ffi::Array<ffi::Any> Answer(SessionState state, ffi::Bytes body, int64_t max_copy_bytes) {
  try {
    std::optional<std::string> reply = rpc::AnswerPacket(state.get(), body.data(), body.size(),
                                                         static_cast<uint64_t>(max_copy_bytes));
    if (!reply.has_value()) return ffi::Array<ffi::Any>{int64_t{1}, ffi::Any()};
    return ffi::Array<ffi::Any>{int64_t{0}, ffi::Bytes(std::move(*reply))};
  } catch (const rpc::WireError& err) {
    return OutcomeToArray({rpc::ServeStatus::kProtocolError, err.what()});
  }
}

}  // namespace

void RegisterRPCServer() {
  namespace refl = ::tvm::ffi::reflection;
  refl::GlobalDef()
      .def("tvm_runtime.rpc.session_new",
           [] { return SessionState(ffi::make_object<rpc::SessionStateObj>()); })
      .def("tvm_runtime.rpc.session_serve", Serve)
      .def("tvm_runtime.rpc.session_answer", Answer)
      .def("tvm_runtime.rpc.session_put",
           [](SessionState s, ffi::Any value) { return static_cast<int64_t>(s->Put(value)); })
      .def("tvm_runtime.rpc.session_get",
           [](SessionState s, int64_t handle) {
             return s->Get(static_cast<uint64_t>(handle), "object");
           })
      .def("tvm_runtime.rpc.session_put_tensor",
           [](SessionState s, ffi::Tensor tensor) {
             return static_cast<int64_t>(s->PutTensor(tensor));
           })
      .def("tvm_runtime.rpc.session_tensor",
           [](SessionState s, int64_t data) { return s->TensorOf(static_cast<uint64_t>(data)); })
      .def("tvm_runtime.rpc.session_free",
           [](SessionState s, int64_t handle) { s->Free(static_cast<uint64_t>(handle)); })
      .def("tvm_runtime.rpc.session_free_data",
           [](SessionState s, int64_t data) { s->FreeData(static_cast<uint64_t>(data)); })
      .def("tvm_runtime.rpc.session_clear", [](SessionState s) { s->Clear(); })
      .def("tvm_runtime.rpc.session_busy", [](SessionState s) { return s->busy.load(); });
}

}  // namespace core
}  // namespace tvm_runtime
