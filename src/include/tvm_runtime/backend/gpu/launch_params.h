/*
 * Launch-tag parsing for GPU kernels.  A packed kernel call from TVM host code is
 *   [kernel params (arg_types.size())] [one int per thread tag] [dyn smem bytes if last tag is
 *   tirx.use_dyn_shared_memory]
 * and this file turns the tag list into a plan that extracts grid/block/dynamic shared memory.
 */
#ifndef TVM_RUNTIME_BACKEND_GPU_LAUNCH_PARAMS_H_
#define TVM_RUNTIME_BACKEND_GPU_LAUNCH_PARAMS_H_

#include <tvm/ffi/c_api.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/backend/message_text.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace tvm_runtime {
namespace backend {

struct LaunchDims {
  // index 0-2 grid (blockIdx), 3-5 block (threadIdx), 6-8 cluster, 9-11 preferred cluster
  std::array<size_t, 12> work{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  size_t dyn_shmem_bytes = 0;
  size_t grid(int i) const { return work[i]; }
  size_t block(int i) const { return work[3 + i]; }
  size_t cluster(int i) const { return work[6 + i]; }
  size_t preferred_cluster(int i) const { return work[9 + i]; }

  /* "grid (x, y, z), block (x, y, z), N bytes of dynamic shared memory", for launch errors. */
  std::string Describe() const {
    auto dims = [this](int first) {
      return "(" + std::to_string(work[first]) + ", " + std::to_string(work[first + 1]) + ", " +
             std::to_string(work[first + 2]) + ")";
    };
    return "grid " + dims(0) + ", block " + dims(3) + ", " + std::to_string(dyn_shmem_bytes) +
           " bytes of dynamic shared memory";
  }
};

class LaunchPlan {
 public:
  LaunchPlan() = default;
  /* `num_kernel_args` = arg_types.size(); throws ValueError on an unknown tag. */
  LaunchPlan(size_t num_kernel_args, const std::vector<std::string>& tags,
             const std::string& kernel_name)
      : base_(num_kernel_args) {
    for (size_t i = 0; i < tags.size(); ++i) {
      const std::string& tag = tags[i];
      if (tag == "tirx.use_dyn_shared_memory") {
        if (i + 1 != tags.size()) {
          ThrowError("ValueError", "kernel '" + Printable(kernel_name) +
                                       "': tirx.use_dyn_shared_memory must be the last launch tag");
        }
        use_dyn_shmem_ = true;
      } else if (tag == "tirx.use_programtic_dependent_launch") {
        programmatic_dependent_launch_ = true;
      } else if (tag == "tirx.use_cooperative_launch") {
        cooperative_launch_ = true;
      } else if (tag == "tirx.use_required_block_dimension") {
        required_block_dimension_ = true;
      } else {
        int index = AxisIndex(tag);
        if (index < 0) ThrowError("ValueError", UnknownTagMessage(kernel_name, tags, i));
        axis_index_.push_back(index);
        if (index < 6) work_dim_ = std::max(work_dim_, static_cast<size_t>(index % 3 + 1));
        if (index >= 6) uses_cluster_ = true;
      }
    }
  }

  /* Number of packed arguments a call must carry. */
  size_t num_packed_args() const { return base_ + axis_index_.size() + (use_dyn_shmem_ ? 1 : 0); }
  size_t num_kernel_args() const { return base_; }
  /* Highest grid/block dimension used + 1 (OpenCL's work_dim). */
  size_t work_dim() const { return work_dim_; }
  bool uses_dyn_shmem() const { return use_dyn_shmem_; }
  bool uses_cluster() const { return uses_cluster_; }
  bool programmatic_dependent_launch() const { return programmatic_dependent_launch_; }
  bool cooperative_launch() const { return cooperative_launch_; }
  bool required_block_dimension() const { return required_block_dimension_; }

  /* Launch values are raw int64 slots; values <= 0 leave the dimension at 1. */
  LaunchDims Extract(const TVMFFIAny* args) const {
    LaunchDims d;
    for (size_t i = 0; i < axis_index_.size(); ++i) {
      int64_t v = args[base_ + i].v_int64;
      if (v > 0) d.work[axis_index_[i]] = static_cast<size_t>(v);
    }
    if (use_dyn_shmem_) {
      int64_t v = args[base_ + axis_index_.size()].v_int64;
      d.dyn_shmem_bytes = v > 0 ? static_cast<size_t>(v) : 0;
    }
    return d;
  }

 private:
  /* A tag made of name characters may be one a newer TVM writes; anything else is damage. */
  static std::string UnknownTagMessage(const std::string& kernel_name,
                                       const std::vector<std::string>& tags, size_t i) {
    const std::string& tag = tags[i];
    std::string head = "kernel '" + Printable(kernel_name) + "' has an unknown launch tag '" +
                       Printable(tag) + "' (tag " + std::to_string(i + 1) + " of " +
                       std::to_string(tags.size()) + "; apache-tvm 0.27 writes blockIdx.x-z, " +
                       "threadIdx.x-z, clusterCtaIdx.x-z, preferredClusterCtaIdx.x-z and tirx.* " +
                       "flags)";
    auto name_char = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == ':' || c == '-';
    };
    for (size_t k = 0; k < tag.size(); ++k) {
      if (!name_char(tag[k])) {
        return head + ": it is malformed (byte " + std::to_string(k) +
               " cannot be part of a tag name), so the artifact is corrupted; re-export it";
      }
    }
    if (tag.empty()) return head + ": it is empty, so the artifact is corrupted; re-export it";
    return head +
           ": the artifact is corrupted, or was written by a TVM newer than 0.27 and needs "
           "a tvm-runtime that knows this tag";
  }

  static int AxisIndex(const std::string& tag) {
    static const char* kPrefixes[] = {"blockIdx.", "threadIdx.", "clusterCtaIdx.",
                                      "preferredClusterCtaIdx."};
    for (int p = 0; p < 4; ++p) {
      std::string prefix = kPrefixes[p];
      if (tag.size() == prefix.size() + 1 && tag.compare(0, prefix.size(), prefix) == 0) {
        char axis = tag.back();
        if (axis >= 'x' && axis <= 'z') return p * 3 + (axis - 'x');
      }
    }
    return -1;
  }

  size_t base_ = 0;
  std::vector<int> axis_index_;
  size_t work_dim_ = 1;
  bool use_dyn_shmem_ = false;
  bool uses_cluster_ = false;
  bool programmatic_dependent_launch_ = false;
  bool cooperative_launch_ = false;
  bool required_block_dimension_ = false;
};

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_GPU_LAUNCH_PARAMS_H_
