#pragma once

// Disjoint sets of the indexes [0, n) that many threads link at once, kept in a parent array the
// caller owns (a partition step's vertex values, engine/partition_view.h). A link hooks the larger
// of two roots under the smaller with a compare-and-swap (Shiloach and Vishkin's hooking, as
// Afforest links; Sutton et al., IPDPS 2018), so a parent is never larger than its child and a
// set's root is its least member, whatever the order of the links and the number of threads.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>

#include "tbb/blocked_range.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

class ConcurrentDisjointSets {
 public:
  // Every index alone: parent[v] = v.
  explicit ConcurrentDisjointSets(std::span<uint32_t> parent) : parent_(parent) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, parent_.size()),
                      [&](const tbb::blocked_range<size_t>& r) {
                        for (size_t v = r.begin(); v != r.end(); ++v) {
                          parent_[v] = static_cast<uint32_t>(v);
                        }
                      });
  }

  // Joins the sets of a and b. Safe beside other Links and Finds on any thread.
  void Link(uint32_t a, uint32_t b) {
    uint32_t pa = Load(a), pb = Load(b);
    while (pa != pb) {
      const uint32_t high = std::max(pa, pb), low = std::min(pa, pb);
      uint32_t above = Load(high);
      if (above == low) return;  // hooked already, by this link's other half or another's
      if (above == high && std::atomic_ref<uint32_t>(parent_[high])
                               .compare_exchange_strong(above, low, std::memory_order_relaxed)) {
        return;
      }
      pa = Load(Load(high));
      pb = Load(low);
    }
  }

  // Points every index at its root, in parallel; not beside Links.
  void Compress() {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, parent_.size()),
                      [&](const tbb::blocked_range<size_t>& r) {
                        for (size_t v = r.begin(); v != r.end(); ++v) {
                          uint32_t p = Load(static_cast<uint32_t>(v));
                          while (Load(p) != p) p = Load(p);
                          std::atomic_ref<uint32_t>(parent_[v]).store(p, std::memory_order_relaxed);
                        }
                      });
  }

  // v's root (after Compress: its parent). Safe beside Links.
  uint32_t Find(uint32_t v) const {
    while (Load(v) != v) v = Load(v);
    return v;
  }
  // v's parent. Safe beside Links.
  uint32_t Parent(uint32_t v) const { return Load(v); }
  // Every index's parent; not beside Links.
  std::span<const uint32_t> parents() const { return parent_; }

 private:
  uint32_t Load(uint32_t v) const {
    return std::atomic_ref<uint32_t>(parent_[v]).load(std::memory_order_relaxed);
  }

  std::span<uint32_t> parent_;
};

}  // namespace lockstep::bsp
