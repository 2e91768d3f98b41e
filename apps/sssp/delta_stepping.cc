// SSSP's partition step (docs/design.md §3.9): delta-stepping over the partition's own edges from
// the source (Meyer and Sanders, J. Algorithms 2003), in the shape of gapbs's: each thread keeps
// buckets of the vertices whose distance it lowered, by distance / delta; a round relaxes the
// out-edges of the least non-empty bucket, and a thread goes on with its own next bucket of that
// distance while it is small, before the threads meet again. A distance is the least over paths of
// the sums along them, so neither the thread count nor the order of relaxations changes it.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "lockstep/apps/common/search.h"
#include "lockstep/apps/sssp/sssp.h"
#include "tbb/blocked_range.h"
#include "tbb/enumerable_thread_specific.h"
#include "tbb/parallel_for.h"

namespace lockstep::apps::sssp {
namespace {

// Buckets ahead of the current one that a thread keeps apart; a vertex further ahead goes into
// the last of them and is relaxed early (which only costs work), so a thread's buckets are a ring
// of this many plus one, however far the distances reach.
constexpr uint64_t kAhead = 1023;
constexpr uint64_t kRing = kAhead + 1;
// A thread relaxes its own next bucket at the current distance at once while it holds fewer than
// this many vertices (gapbs's kBinSizeThreshold).
constexpr size_t kAlone = 1000;

class DeltaStepping {
 public:
  DeltaStepping(const bsp::Topology& t, const bsp::Graph<double>& g, std::span<double> dist,
                double delta)
      : t_(t), g_(g), dist_(dist), delta_(delta), n_(t.num_local()) {}

  void From(uint32_t source) {
    dist_[source] = 0;
    std::vector<uint32_t> frontier{source};
    uint64_t bucket = 0;
    while (!frontier.empty()) {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, frontier.size(), 64),
                        [&](const tbb::blocked_range<size_t>& r) {
                          Ring& ring = rings_.local();
                          if (ring.buckets.empty()) ring.buckets.resize(kRing);
                          for (size_t i = r.begin(); i != r.end(); ++i) {
                            const uint32_t u = frontier[i];
                            if (Current(u, bucket)) Relax(u, bucket, ring);
                          }
                          RelaxSmall(bucket, ring);
                        });
      frontier.clear();
      bucket = NextBucket(bucket);
      for (Ring& ring : rings_) {
        if (ring.buckets.empty()) continue;
        std::vector<uint32_t>& b = ring.buckets[bucket % kRing];
        frontier.insert(frontier.end(), b.begin(), b.end());
        b.clear();
      }
    }
  }

 private:
  // A thread's buckets, and the bucket it relaxes at once (RelaxSmall) while the same bucket fills
  // again: the two trade places, each keeping its memory.
  struct Ring {
    std::vector<std::vector<uint32_t>> buckets;
    std::vector<uint32_t> now;
  };

  double Load(uint32_t v) const {
    return std::atomic_ref<double>(dist_[v]).load(std::memory_order_relaxed);
  }

  // A distance's bucket is distance / delta rounded down, computed the same way for where a vertex
  // goes and for whether it is still there, so that the two agree (delta * bucket rounds
  // otherwise: 0.63 * 3 > 1.89 though 1.89 / 0.63 == 3).
  //
  // Whether u's distance is still in `bucket` or beyond: if not, a shorter one took it to an
  // earlier bucket, already relaxed. Every offer of a round is at least the round's bucket, so a
  // distance never drops below the bucket it is relaxed in.
  bool Current(uint32_t u, uint64_t bucket) const {
    return Load(u) / delta_ >= static_cast<double>(bucket);
  }
  // The bucket an offer of the current round goes to, at most kAhead beyond (compared as doubles:
  // a distance may be too far for an integer bucket).
  uint64_t BucketOf(double offer, uint64_t bucket) const {
    const double at = offer / delta_;
    if (!(at < static_cast<double>(bucket + kAhead))) return bucket + kAhead;
    return std::max(static_cast<uint64_t>(at), bucket);
  }

  // Lowers u's local out-neighbours' distances through u; each one lowered goes into the ring.
  void Relax(uint32_t u, uint64_t bucket, Ring& ring) {
    const double d = Load(u);
    const auto slots = t_.out_slots(u);
    const auto weights = g_.out_values(u);
    for (size_t i = 0; i < slots.size(); ++i) {
      const uint32_t v = slots[i];
      if (v >= n_) continue;
      const double offer = Program::Along(d, weights[i]);
      std::atomic_ref<double> at(dist_[v]);
      double old = at.load(std::memory_order_relaxed);
      while (offer < old) {
        if (at.compare_exchange_weak(old, offer, std::memory_order_relaxed)) {
          ring.buckets[BucketOf(offer, bucket) % kRing].push_back(v);
          break;
        }
      }
    }
  }

  // The thread's own bucket at `bucket`, relaxed at once while it is small.
  void RelaxSmall(uint64_t bucket, Ring& ring) {
    std::vector<uint32_t>& mine = ring.buckets[bucket % kRing];
    while (!mine.empty() && mine.size() < kAlone) {
      ring.now.clear();
      ring.now.swap(mine);
      for (uint32_t u : ring.now) {
        if (Current(u, bucket)) Relax(u, bucket, ring);
      }
    }
  }

  // The least bucket from `bucket` on that any thread holds a vertex in (bucket + kRing if none).
  uint64_t NextBucket(uint64_t bucket) const {
    for (uint64_t b = bucket; b < bucket + kRing; ++b) {
      for (const Ring& ring : rings_) {
        if (!ring.buckets.empty() && !ring.buckets[b % kRing].empty()) return b;
      }
    }
    return bucket + kRing;
  }

  const bsp::Topology& t_;
  const bsp::Graph<double>& g_;
  std::span<double> dist_;
  const double delta_;
  const uint32_t n_;
  tbb::enumerable_thread_specific<Ring> rings_;
};

// The buckets' width when the job gives none: a quarter of the heaviest weight of a sample of the
// partition's vertices over their mean out-degree (Meyer and Sanders's max weight / degree, scaled
// to where gapbs's kernel is fastest on its own graphs: bench/README.md), but no less than the
// sample's lightest positive weight. Only how much work is done depends on it, never the
// distances.
double ChooseDelta(const bsp::Topology& t, const bsp::Graph<double>& g) {
  constexpr uint32_t kSamples = 1024;
  const uint32_t n = t.num_local();
  const uint32_t stride = std::max<uint32_t>(1, n / kSamples);
  double heaviest = 0, lightest = kUnreachable;
  uint64_t edges = 0, vertices = 0;
  for (uint32_t v = 0; v < n; v += stride, ++vertices) {
    for (const double w : g.out_values(v)) {
      heaviest = std::max(heaviest, w);
      if (w > 0) lightest = std::min(lightest, w);
    }
    edges += t.out_degree(v);
  }
  if (!(heaviest > 0) || !std::isfinite(heaviest)) return 1;
  const double degree = static_cast<double>(edges) / static_cast<double>(vertices);
  return std::max(heaviest / (4 * std::max(degree, 1.0)), lightest);
}

}  // namespace

void Program::PartitionStep(bsp::PartitionView<Program>& part) const {
  const bsp::Topology& t = part.topology();
  if (!delta_stepping || !common::SearchesAlone(t)) return;
  const uint32_t s = t.Find(source);
  if (s != bsp::kNoVertex) {
    if (part.graph().unit_values()) {
      // Every weight is 1: the distances are the hop counts, which a search finds with fewer
      // relaxations (bottom-up levels).
      common::SearchLevels(t, s, part.values(), kUnreachable);
    } else {
      const double width = delta > 0 ? delta : ChooseDelta(t, part.graph());
      DeltaStepping(t, part.graph(), part.values(), width).From(s);
    }
  }
  part.HaltAll();  // every distance is final
}

}  // namespace lockstep::apps::sssp
