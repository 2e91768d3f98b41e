// A direction-optimising breadth-first search over a partition's own edges (Beamer, Asanović and
// Patterson, SC 2012), for the partition steps of BFS and of SSSP without weights. A level goes
// top-down, each frontier vertex claiming its unvisited out-neighbours with a compare-and-swap,
// while the frontier's edges are few against the edges left to check; otherwise bottom-up, each
// unvisited vertex looking for a parent among its in-neighbours in the frontier's bitmap, until the
// frontier is small again. Each depth is the least over paths, so neither the thread count nor the
// order of claims changes it.
#include "lockstep/apps/common/search.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <memory>
#include <vector>

#include "tbb/blocked_range.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_reduce.h"

namespace lockstep::apps::common {
namespace {

// Beamer's switching thresholds, as gapbs uses them: bottom-up once the frontier's out-edges
// exceed 1/kAlpha of the edges not yet checked, top-down again once it holds under 1/kBeta of the
// vertices and shrinks.
constexpr uint64_t kAlpha = 15;
constexpr uint64_t kBeta = 18;

using Bitmap = std::vector<uint64_t>;

bool Test(const Bitmap& bits, uint32_t v) { return (bits[v >> 6] >> (v & 63)) & 1; }

// A frontier: its vertices, any order, in an array of the partition's size.
struct Queue {
  explicit Queue(uint32_t n) : at(std::make_unique_for_overwrite<uint32_t[]>(n)) {}
  std::unique_ptr<uint32_t[]> at;
  size_t size = 0;
};

// Vertices a task found, appended to a shared queue a block at a time (one atomic add a block).
class Appender {
 public:
  Appender(Queue& q, std::atomic<size_t>& tail) : q_(q), tail_(tail) {}
  ~Appender() { Flush(); }
  void Add(uint32_t v) {
    if (n_ == kBlock) Flush();
    buf_[n_++] = v;
  }

 private:
  static constexpr size_t kBlock = 256;
  void Flush() {
    const size_t at = tail_.fetch_add(n_, std::memory_order_relaxed);
    std::copy_n(buf_.data(), n_, q_.at.get() + at);
    n_ = 0;
  }
  Queue& q_;
  std::atomic<size_t>& tail_;
  std::array<uint32_t, kBlock> buf_;
  size_t n_ = 0;
};

template <class T>
class Search {
 public:
  Search(const bsp::Topology& t, std::span<T> depth, T unreached)
      : t_(t),
        depth_(depth),
        unreached_(unreached),
        n_(t.num_local()),
        words_(static_cast<uint32_t>((uint64_t{n_} + 63) / 64)),
        queue_(n_),
        next_(n_) {}

  void From(uint32_t source) {
    depth_[source] = 0;
    queue_.at[0] = source;
    queue_.size = 1;
    uint64_t edges_left = t_.all_out_slots().size();
    uint64_t scout = t_.out_slots(source).size();
    uint32_t level = 0;
    while (queue_.size != 0) {
      if (scout > edges_left / kAlpha) {
        level = BottomUp(level);
        scout = 1;
      } else {
        edges_left -= std::min(edges_left, scout);
        scout = TopDown(level++);
      }
    }
  }

 private:
  // Claims the unvisited local out-neighbours of the frontier at level + 1; they become the
  // frontier. Returns their out-edges (Beamer's scout count).
  uint64_t TopDown(uint32_t level) {
    std::atomic<size_t> tail{0};
    const uint64_t scout = tbb::parallel_reduce(
        tbb::blocked_range<size_t>(0, queue_.size, 64), uint64_t{0},
        [&](const tbb::blocked_range<size_t>& r, uint64_t edges) {
          Appender found(next_, tail);
          for (size_t i = r.begin(); i != r.end(); ++i) {
            // The lists of frontier vertices a few ahead, and the levels of the targets a few
            // edges ahead, are fetched while this edge is claimed: the claims go to memory at
            // random, and waiting on each took a fifth of the search (bench/README.md).
            if (i + 4 < r.end()) __builtin_prefetch(t_.out_slots(queue_.at[i + 4]).data());
            const std::span<const uint32_t> slots = t_.out_slots(queue_.at[i]);
            for (size_t k = 0; k < slots.size(); ++k) {
              const uint32_t w = slots[k];
              if (k + 8 < slots.size() && slots[k + 8] < n_) {
                __builtin_prefetch(&depth_[slots[k + 8]]);
              }
              if (w >= n_) continue;
              std::atomic_ref<T> at(depth_[w]);
              if (at.load(std::memory_order_relaxed) != unreached_) continue;
              T expected = unreached_;
              if (at.compare_exchange_strong(expected, static_cast<T>(level + 1),
                                             std::memory_order_relaxed)) {
                found.Add(w);
                edges += t_.out_degree(w);
              }
            }
          }
          return edges;
        },
        std::plus<>());
    next_.size = tail.load();
    std::swap(queue_, next_);
    return scout;
  }

  // Levels bottom-up from the frontier's (at `level`) while the frontier is large or growing; the
  // last becomes the frontier. Returns its level.
  uint32_t BottomUp(uint32_t level) {
    Bitmap front(words_, 0), next(words_, 0);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, queue_.size, 1024),
                      [&](const tbb::blocked_range<size_t>& r) {
                        for (size_t i = r.begin(); i != r.end(); ++i) {
                          const uint32_t v = queue_.at[i];
                          std::atomic_ref<uint64_t>(front[v >> 6])
                              .fetch_or(uint64_t{1} << (v & 63), std::memory_order_relaxed);
                        }
                      });
    uint64_t awake = queue_.size, old;
    do {
      old = awake;
      awake = Level(front, next, ++level);
      std::swap(front, next);
    } while (awake >= old || awake > n_ / kBeta);
    std::atomic<size_t> tail{0};
    tbb::parallel_for(tbb::blocked_range<uint32_t>(0, words_, 256),
                      [&](const tbb::blocked_range<uint32_t>& r) {
                        Appender found(queue_, tail);
                        for (uint32_t w = r.begin(); w != r.end(); ++w) {
                          for (uint64_t bits = front[w]; bits != 0; bits &= bits - 1) {
                            found.Add((w << 6) + static_cast<uint32_t>(std::countr_zero(bits)));
                          }
                        }
                      });
    queue_.size = tail.load();
    return level;
  }

  // One bottom-up level: every unvisited vertex with an in-neighbour in `front` gets `level` and
  // goes into `next`. Returns how many did.
  uint64_t Level(const Bitmap& front, Bitmap& next, uint32_t level) {
    // A symmetric graph may have no in-edges of its own (the engine reads its out-edges both ways).
    const bool symmetric = t_.symmetric();
    return tbb::parallel_reduce(
        tbb::blocked_range<uint32_t>(0, words_, 16), uint64_t{0},
        [&](const tbb::blocked_range<uint32_t>& r, uint64_t found) {
          for (uint32_t w = r.begin(); w != r.end(); ++w) {
            uint64_t word = 0;
            const uint32_t end =
                static_cast<uint32_t>(std::min<uint64_t>(n_, (uint64_t{w} + 1) << 6));
            for (uint32_t v = w << 6; v < end; ++v) {
              if (depth_[v] != unreached_) continue;
              for (uint32_t u : symmetric ? t_.out_slots(v) : t_.in_slots(v)) {
                if (u < n_ && Test(front, u)) {
                  depth_[v] = static_cast<T>(level);
                  word |= uint64_t{1} << (v & 63);
                  break;
                }
              }
            }
            next[w] = word;
            found += static_cast<uint64_t>(std::popcount(word));
          }
          return found;
        },
        std::plus<>());
  }

  const bsp::Topology& t_;
  std::span<T> depth_;
  const T unreached_;
  const uint32_t n_;
  const uint32_t words_;
  Queue queue_, next_;
};

}  // namespace

template <class T>
void SearchLevels(const bsp::Topology& t, uint32_t source, std::span<T> depth, T unreached) {
  Search<T>(t, depth, unreached).From(source);
}
template void SearchLevels(const bsp::Topology&, uint32_t, std::span<int64_t>, int64_t);
template void SearchLevels(const bsp::Topology&, uint32_t, std::span<double>, double);

}  // namespace lockstep::apps::common
