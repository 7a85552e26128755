/*
 * Orders one row (a strided sequence of elements) by (key, index).
 *
 * Long rows use an LSD radix sort on (key, index) pairs: it is stable, so loading the pairs in
 * index order already breaks ties by index, and it is several times faster than a comparison
 * sort for the 10^5..10^7-element rows models sort.  Short rows and partial selections (top-k)
 * use std::sort / std::nth_element with the (key, index) comparison, a total order, so the result
 * is exactly the stable one; a small k keeps an ordered prefix instead (InsertionSelect).  One
 * RowSorter per thread: it owns its scratch buffers.
 */
#ifndef TVM_RUNTIME_EXTRA_ROW_SORTER_H_
#define TVM_RUNTIME_EXTRA_ROW_SORTER_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ordered_keys.h"

namespace tvm_runtime {
namespace extra {

template <typename K>
struct KeyIndex {
  K key;
  uint32_t index;
};

template <typename K>
inline bool KeyIndexLess(const KeyIndex<K>& a, const KeyIndex<K>& b) {
  return a.key < b.key || (a.key == b.key && a.index < b.index);
}

template <typename K>
class RowSorter {
 public:
  // Below this length a comparison sort beats the radix sort's fixed histogram cost.
  static constexpr int64_t kRadixThreshold = 256;

  /* Loads `n` elements base[start + k * stride] as ordered keys (complemented for descending). */
  void Load(const char* base, int64_t start, int64_t stride, int64_t n, KeyKind kind,
            bool descending) {
    entries_.resize(static_cast<size_t>(n));
    K flip = descending ? static_cast<K>(~K{0}) : K{0};
    KeyIndex<K>* out = entries_.data();
    if (stride == 1) {
      const char* row = base + start * static_cast<int64_t>(sizeof(K));
      for (int64_t k = 0; k < n; ++k) {
        out[k] = {static_cast<K>(OrderedKey(LoadBits<K>(row, k), kind) ^ flip),
                  static_cast<uint32_t>(k)};
      }
    } else {
      for (int64_t k = 0; k < n; ++k) {
        out[k] = {static_cast<K>(OrderedKey(LoadBits<K>(base, start + k * stride), kind) ^ flip),
                  static_cast<uint32_t>(k)};
      }
    }
    sorted_ = out;
  }

  /* Orders all loaded entries; returns them. */
  const KeyIndex<K>* SortAll() {
    size_t n = entries_.size();
    if (static_cast<int64_t>(n) < kRadixThreshold) {
      std::sort(entries_.begin(), entries_.end(), KeyIndexLess<K>);
      sorted_ = entries_.data();
    } else {
      sorted_ = RadixSort(n);
    }
    return sorted_;
  }

  /* Frees the scratch buffers if they hold more than `bytes` each (kept otherwise, for reuse). */
  void ReleaseIfLarger(size_t bytes) {
    if (entries_.capacity() * sizeof(KeyIndex<K>) > bytes)
      std::vector<KeyIndex<K>>().swap(entries_);
    if (scratch_.capacity() * sizeof(KeyIndex<K>) > bytes)
      std::vector<KeyIndex<K>>().swap(scratch_);
    sorted_ = nullptr;
  }

  /* Puts the `k` first entries in order (k <= loaded count); returns them. */
  const KeyIndex<K>* SelectFirst(int64_t k) {
    int64_t n = static_cast<int64_t>(entries_.size());
    if (k >= n || (n >= kRadixThreshold && k * 4 >= n)) return SortAll();
    if (k >= 1 && k <= kInsertionMaxK) return InsertionSelect(k);
    auto mid = entries_.begin() + k;
    std::nth_element(entries_.begin(), mid, entries_.end(), KeyIndexLess<K>);
    std::sort(entries_.begin(), mid, KeyIndexLess<K>);
    sorted_ = entries_.data();
    return sorted_;
  }

 private:
  // Up to this k, top-k keeps the k best entries in order at the front and lets each later entry
  // in only if it beats the current k-th (one comparison for most entries, the way classifier
  // heads and samplers use it: k of 1..32 out of 10^2..10^5).
  static constexpr int64_t kInsertionMaxK = 32;

  const KeyIndex<K>* InsertionSelect(int64_t k) {
    KeyIndex<K>* e = entries_.data();
    int64_t n = static_cast<int64_t>(entries_.size());
    for (int64_t i = 1; i < n; ++i) {
      KeyIndex<K> x = e[i];
      int64_t end = std::min(i, k);  // the ordered prefix e[0, end) holds the best so far
      if (end == k && !KeyIndexLess(x, e[k - 1])) continue;
      // Later entries have larger indices, so an equal key never overtakes: the order is stable.
      int64_t j = end == k ? k - 1 : end;
      while (j > 0 && KeyIndexLess(x, e[j - 1])) {
        e[j] = e[j - 1];
        --j;
      }
      e[j] = x;
    }
    sorted_ = e;
    return sorted_;
  }

  // 11-bit digits for wide keys (3 passes for 32 bits instead of 4), bytes for narrow ones.
  static constexpr int kDigitBits = sizeof(K) >= 4 ? 11 : 8;
  static constexpr int kPasses = (static_cast<int>(sizeof(K)) * 8 + kDigitBits - 1) / kDigitBits;
  static constexpr size_t kBuckets = size_t{1} << kDigitBits;

  static size_t Digit(K key, int pass) {
    return static_cast<size_t>(key >> (pass * kDigitBits)) & (kBuckets - 1);
  }

  KeyIndex<K>* RadixSort(size_t n) {
    std::vector<size_t>& counts = counts_;
    counts.assign(kBuckets * kPasses, 0);
    KeyIndex<K>* src = entries_.data();
    for (size_t i = 0; i < n; ++i) {
      K key = src[i].key;
      for (int p = 0; p < kPasses; ++p) ++counts[p * kBuckets + Digit(key, p)];
    }
    scratch_.resize(n);
    KeyIndex<K>* dst = scratch_.data();
    for (int p = 0; p < kPasses; ++p) {
      size_t* count = counts.data() + p * kBuckets;
      // A digit shared by every key orders nothing: skip the pass (common for the high bits).
      if (count[Digit(src[0].key, p)] == n) continue;
      size_t offset = 0;
      for (size_t b = 0; b < kBuckets; ++b) {
        size_t here = count[b];
        count[b] = offset;
        offset += here;
      }
      for (size_t i = 0; i < n; ++i) dst[count[Digit(src[i].key, p)]++] = src[i];
      std::swap(src, dst);
    }
    return src;
  }

  std::vector<KeyIndex<K>> entries_;
  std::vector<KeyIndex<K>> scratch_;
  std::vector<size_t> counts_;
  KeyIndex<K>* sorted_ = nullptr;
};

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_ROW_SORTER_H_
