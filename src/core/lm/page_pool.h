/*
 * Page bookkeeping of the paged KV cache: a free list of page ids and a reference count per
 * page.  A page is shared (count > 1) after a fork; whoever writes into a shared page first gets
 * a private copy (copy-on-write, done by the cache), so forks cost no copy up front.
 */
#ifndef TVM_RUNTIME_CORE_LM_PAGE_POOL_H_
#define TVM_RUNTIME_CORE_LM_PAGE_POOL_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tvm_runtime {
namespace core {
namespace lm {

class PagePool {
 public:
  explicit PagePool(int32_t num_pages) : refs_(num_pages, 0) { Reset(); }

  /* Every page free again. */
  void Reset() {
    free_.clear();
    // Handed out in increasing order: page 0 first, like a fresh cache in apache-tvm.
    for (int32_t p = static_cast<int32_t>(refs_.size()) - 1; p >= 0; --p) free_.push_back(p);
    std::fill(refs_.begin(), refs_.end(), 0);
  }

  int32_t num_free() const { return static_cast<int32_t>(free_.size()); }
  int32_t num_pages() const { return static_cast<int32_t>(refs_.size()); }
  bool shared(int32_t page) const { return refs_[page] > 1; }
  int64_t refs(int32_t page) const { return refs_[page]; }

  /* Callers check num_free() first, so a forward either gets all its pages or none. */
  int32_t Allocate() {
    int32_t page = free_.back();
    free_.pop_back();
    refs_[page] = 1;
    return page;
  }
  void Retain(int32_t page) { ++refs_[page]; }
  void Release(int32_t page) {
    if (--refs_[page] == 0) free_.push_back(page);
  }

 private:
  std::vector<int32_t> free_;
  std::vector<int32_t> refs_;
};

}  // namespace lm
}  // namespace core
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_CORE_LM_PAGE_POOL_H_
