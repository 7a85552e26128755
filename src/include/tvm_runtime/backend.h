/*
 * tvm_runtime/backend.h -- the entry header of the backend SDK: what every backend needs.
 *
 * A backend DSO includes this one header for its entry points, its device table, its globals and
 * its errors, then the tier headers its kind of backend needs:
 *
 *   tvm_runtime/backend.h           (this header) error.h, backend_entry.h, device_api_table.h,
 *                                   global_function.h, status_codes.h, message_text.h,
 *                                   blob_reader.h, device_copy.h
 *   tvm_runtime/backend/vm_extension.h   per-VM state of builtins that live in a backend wheel
 *   tvm_runtime/backend/gpu/        GPU device modules: payloads, kernel arguments and launch
 *                                   tags, per-device caches, lazily discovered devices, the
 *                                   VendorRuntime base of a backend's process-wide state, events
 *   tvm_runtime/backend/vendor/     opening a vendor library at first use and resolving its
 *                                   entry points (vendor_library.h, the one way to do it)
 *   tvm_runtime/backend/cache/      the persistent kernel cache every GPU backend shares
 *   tvm_runtime/backend/byoc/       the JSON runtime base of BYOC modules (dnnl_json, cublas_json)
 *   tvm_runtime/backend/disco/      Disco's collectives over an NCCL-compatible library
 *   tvm_runtime/backend/detail/     used by the headers above; promised to no one, may change in
 *                                   any release: never include it from a backend
 *
 * Everything is header-only and compiles into the backend DSO with hidden visibility.  The
 * headers that stood flat in tvm_runtime/backend/ before 0.2.0 still forward to their new place
 * until 0.3.0 (docs/plugins.md, "SDK headers").
 */
#ifndef TVM_RUNTIME_BACKEND_H_
#define TVM_RUNTIME_BACKEND_H_

#include <tvm_runtime/backend/backend_entry.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/device_api_table.h>
#include <tvm_runtime/backend/device_copy.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/global_function.h>
#include <tvm_runtime/backend/message_text.h>
#include <tvm_runtime/backend/status_codes.h>
#include <tvm_runtime/c_api.h>

#endif  // TVM_RUNTIME_BACKEND_H_
