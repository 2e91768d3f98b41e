#pragma once
// A stable, parallel counting sort that Topology's build and its UUID sort share (private to bsp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "tbb/parallel_for.h"
#include "tbb/task_arena.h"

namespace lockstep::bsp {

// The key of an edge a StableBucket drops: Topology's kNoVertex (topology_build.cc checks that).
inline constexpr uint32_t kDropKey = std::numeric_limits<uint32_t>::max();

// Frees a container's memory (`v = {}` would pick the initializer-list assignment, which keeps
// the capacity).
template <class T>
inline void Release(T& v) {
  T().swap(v);
}

// A stable, parallel counting sort of edge indexes by key: offsets[k]..offsets[k+1] are the edges
// with key k, in input order (so the layout never depends on the thread count). Edges whose key
// is kDropKey are dropped. `key(edge)` is evaluated in both passes rather than stored, which
// keeps the peak memory of a build lower. Count() sizes the buckets, so that the caller can
// allocate the arrays; Scatter(place) then calls place(edge, position) once per kept edge.
// `Counter` holds the chunks' counters and positions: 32 bits while the edges fit, which halves
// the counters' share of a build's peak memory.
template <class Key, class Counter>
class StableBucket {
 public:
  StableBucket(size_t m, uint32_t num_keys, Key key) : m_(m), num_keys_(num_keys), key_(key) {
    const size_t threads = static_cast<size_t>(tbb::this_task_arena::max_concurrency());
    const size_t keys = static_cast<size_t>(num_keys);
    // Enough chunks to keep every thread busy; few enough that chunks x keys counters stay small.
    chunks_ = std::clamp<size_t>(m / (1 << 16), 1, 2 * threads);
    while (chunks_ > 1 && chunks_ * keys > (size_t{1} << 27)) chunks_ /= 2;
    const size_t per = (m + chunks_ - 1) / chunks_;
    for (size_t c = 0; c < chunks_; ++c) begin_.push_back(std::min(m, c * per));
    begin_.push_back(m);
  }

  // Fills offsets (size num_keys + 1) and returns the number of kept edges.
  uint64_t Count(std::vector<uint64_t>& offsets) {
    counts_.assign(chunks_, {});
    tbb::parallel_for(size_t{0}, chunks_, [&](size_t c) {
      counts_[c].assign(num_keys_, Counter{0});
      for (size_t e = begin_[c], end = begin_[c + 1]; e < end; ++e) {
        const uint32_t k = key_(e);
        if (k != kDropKey) ++counts_[c][k];
      }
    });
    offsets.assign(static_cast<size_t>(num_keys_) + 1, 0);
    tbb::parallel_for(uint32_t{0}, num_keys_, [&](uint32_t k) {
      uint64_t total = 0;
      for (size_t c = 0; c < chunks_; ++c) total += counts_[c][k];
      offsets[k + 1] = total;
    });
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    // Each chunk's first position per key, key-major.
    tbb::parallel_for(uint32_t{0}, num_keys_, [&](uint32_t k) {
      uint64_t pos = offsets[k];
      for (size_t c = 0; c < chunks_; ++c) {
        const uint64_t n = counts_[c][k];
        counts_[c][k] = static_cast<Counter>(pos);
        pos += n;
      }
    });
    return offsets.back();
  }

  template <class Place>
  void Scatter(Place&& place) {
    tbb::parallel_for(size_t{0}, chunks_, [&](size_t c) {
      for (size_t e = begin_[c], end = begin_[c + 1]; e < end; ++e) {
        const uint32_t k = key_(e);
        if (k != kDropKey) place(e, counts_[c][k]++);
      }
    });
    Release(counts_);
  }

 private:
  size_t m_;
  uint32_t num_keys_;
  Key key_;
  size_t chunks_ = 1;
  std::vector<size_t> begin_;  // chunk c is edges begin_[c]..begin_[c + 1]
  std::vector<std::vector<Counter>> counts_;
};
}  // namespace lockstep::bsp
