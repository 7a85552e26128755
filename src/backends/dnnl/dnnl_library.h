/*
 * oneDNN 2.x (libdnnl.so.2), opened with dlopen on first use and never linked: the wheel
 * installs and imports on machines without it, and the first artifact that needs it says which
 * package to install.  Only the C API's types come from oneDNN's headers (build time); every
 * function is called through the table below, whose pointer types are taken from the
 * declarations so a signature can never drift.  oneDNN 3.x replaced the op-descriptor API used
 * here, so its libdnnl.so.3 is not a candidate.
 */
#ifndef TVM_RUNTIME_BACKENDS_DNNL_DNNL_LIBRARY_H_
#define TVM_RUNTIME_BACKENDS_DNNL_DNNL_LIBRARY_H_

#include <oneapi/dnnl/dnnl.h>

#include <string>

namespace tvm_runtime {
namespace dnnl_backend {

#define TVM_RUNTIME_DNNL_FUNCTIONS(X)           \
  X(dnnl_engine_create)                         \
  X(dnnl_engine_destroy)                        \
  X(dnnl_stream_create)                         \
  X(dnnl_stream_wait)                           \
  X(dnnl_stream_destroy)                        \
  X(dnnl_memory_desc_init_by_tag)               \
  X(dnnl_memory_create)                         \
  X(dnnl_memory_set_data_handle)                \
  X(dnnl_memory_destroy)                        \
  X(dnnl_dilated_convolution_forward_desc_init) \
  X(dnnl_inner_product_forward_desc_init)       \
  X(dnnl_eltwise_forward_desc_init)             \
  X(dnnl_binary_desc_init)                      \
  X(dnnl_primitive_attr_create)                 \
  X(dnnl_primitive_attr_destroy)                \
  X(dnnl_primitive_attr_set_post_ops)           \
  X(dnnl_post_ops_create)                       \
  X(dnnl_post_ops_destroy)                      \
  X(dnnl_post_ops_append_eltwise)               \
  X(dnnl_primitive_desc_create)                 \
  X(dnnl_primitive_desc_destroy)                \
  X(dnnl_primitive_create)                      \
  X(dnnl_primitive_destroy)                     \
  X(dnnl_primitive_execute)                     \
  X(dnnl_version)

struct DnnlApi {
#define TVM_RUNTIME_DNNL_MEMBER(name) decltype(&::name) name = nullptr;
  TVM_RUNTIME_DNNL_FUNCTIONS(TVM_RUNTIME_DNNL_MEMBER)
#undef TVM_RUNTIME_DNNL_MEMBER
  std::string path;  // the library actually opened
};

/* The loaded library; the first call opens it.  RuntimeError naming the package to install
 * when no usable libdnnl.so.2 is found ($TVM_DNNL_LIBRARY alone when set). */
const DnnlApi& Dnnl();

/* "" when oneDNN can be opened, else why not and how to fix it (never throws). */
std::string DnnlStatus();

/* Throws a RuntimeError for a failed oneDNN call: `what` says which call and for what. */
void CheckDnnl(dnnl_status_t status, const std::string& what);

}  // namespace dnnl_backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKENDS_DNNL_DNNL_LIBRARY_H_
