#pragma once

// The message strategy of a broadcast program with a combiner other than the minimum (IsSumPull:
// PageRank's sum; docs/design.md §3.4). It runs as a pull: a vertex publishes its value, and each
// vertex combines what its in-neighbours published, in in-edge order, into a combined inbox; the
// result equals the push's. When every vertex with out-edges and every remote in-neighbour
// published (PageRank), the pull reads no published flags and writes no message flags: every
// vertex with in-edges has a message and wakes from a bitmap built once, so the pull is the loop
// of a sparse matrix-vector product alone. Values are indexed by slot, local and remote alike: a
// branch on the slot's kind was taken at random for about half the edges of a partition of two,
// and its mispredictions made a worker's superstep 2-3x slower (bench/README.md).

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "lockstep/bsp/engine/broadcast_base.h"
#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/graph.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

template <class P>
class SumPull : public BroadcastBase<P, SumPull<P>> {
  using Base = BroadcastBase<P, SumPull<P>>;

 public:
  using typename Base::Block;
  using typename Base::EdgeValue;
  using typename Base::Message;
  // How many edges ahead the pull prefetches the value it will add. The values are read at
  // random, and without it a worker's pull waited on the shared L3 cache (bench/README.md,
  // "Prefetching the pull"). It does not change the order of the sums.
  static constexpr uint64_t kPullPrefetch = 64;
  // The published values and their flags (the inbox shares their size).
  static constexpr PeakBytes kPeakBytes{.per_vertex = 2 * (sizeof(Message) + 1), .per_edge = 0};

  SumPull(P program, Graph<EdgeValue> graph) : Base(std::move(program), std::move(graph)) {
    const Topology& topo = this->topology();
    const uint32_t n = topo.num_local();
    // The pull reads in_slots whatever the graph.
    if (!topo.has_in_edges() && n > 0) {
      throw std::invalid_argument("a broadcast program with a combiner needs in-edges");
    }
    inbox_.resize(n);
    has_message_.assign(n, 0);
    pulling_bits_.assign(this->awake_.size(), 0);
    for (uint32_t v = 0; v < n; ++v) {
      local_sources_ += topo.out_degree(v) > 0 ? 1 : 0;
      if (topo.in_degree(v) > 0) pulling_bits_[v >> 6] |= uint64_t{1} << (v & 63);
    }
    sources_.resize(this->num_blocks_);
  }

  // Compute publishes v's value (Context::SendToAllNeighbors).
  void SendToAll(Block& buf, size_t block, uint32_t v, const Message& m) {
    const uint64_t edges = this->PublishedEdges(v);
    const uint8_t had = this->has_published_[v];
    this->published_[v] = m;
    sources_[block].count += had == 0 && edges > 0 ? 1 : 0;
    this->has_published_[v] = 1;
    buf.sent += edges;
  }
  // After compute: the blocks' publishers with out-edges.
  void EndCompute(StepStats& /*stats*/) {
    for (BlockSources& s : sources_) published_sources_ += std::exchange(s.count, 0);
  }

  // Vertex v's combined message of this superstep, if it has one.
  std::span<const Message> MessagesOf(size_t /*block*/, uint32_t v) const {
    if (pulled_all_) {
      return this->topology().in_degree(v) > 0 ? std::span<const Message>(&inbox_[v], 1)
                                               : std::span<const Message>();
    }
    return has_message_[v] ? std::span<const Message>(&inbox_[v], 1) : std::span<const Message>();
  }
  // Nothing to drop: every delivery sets every vertex's message.
  void Consume(uint32_t /*v*/) {}

  // The pull of last superstep's values. "Every vertex published" means every vertex with
  // out-edges (a superset of the local in-neighbours: PageRank's dangling vertices publish
  // nothing) and every remote in-neighbour.
  void Deliver() {
    const bool all = published_sources_ == local_sources_ &&
                     this->remote_published_count_ == this->remote_sources_;
    if (all) PullAll();
    pulled_all_ = all;
    if (!all) PullSome();
    std::fill(this->has_published_.begin(), this->has_published_.end(), 0);
    published_sources_ = this->remote_published_count_ = 0;
  }

  void AfterRestore() {
    published_sources_ = 0;
    for (uint32_t v = 0; v < this->topology().num_local(); ++v) {
      published_sources_ += this->has_published_[v] != 0 && this->PublishedEdges(v) > 0 ? 1 : 0;
    }
  }

 private:
  // The sparse matrix-vector product: no flags read, every vertex with in-edges gets a message.
  void PullAll() {
    const Topology& topo = this->topology();
    const uint32_t n = topo.num_local();
    const std::span<const uint32_t> sources = topo.all_in_slots();
    const Message* published = this->published_.data();
    Message* inbox = inbox_.data();
    tbb::parallel_for(size_t{0}, this->num_blocks_, [&](size_t b) {
      const uint32_t begin = static_cast<uint32_t>(b * this->kBlock);
      const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((b + 1) * this->kBlock));
      const uint32_t* src = sources.data();
      // The value kPullPrefetch edges ahead is fetched while this one is added (clamped to the
      // last edge, so nothing past the array is read).
      const uint64_t last = sources.empty() ? 0 : sources.size() - 1;
      auto ahead = [&](uint64_t i) {
        __builtin_prefetch(published + src[std::min(i + kPullPrefetch, last)]);
      };
      for (uint32_t v = begin; v < end; ++v) {
        const uint64_t lo = topo.in_begin(v), hi = topo.in_begin(v + 1);
        if (lo == hi) continue;
        ahead(lo);
        Message combined = published[src[lo]];
        for (uint64_t i = lo + 1; i < hi; ++i) {
          ahead(i);
          P::Combine(combined, published[src[i]]);
        }
        inbox[v] = combined;
      }
    });
    // Every vertex with in-edges has a message (MessagesOf) and wakes.
    for (size_t w = 0; w < pulling_bits_.size(); ++w) this->awake_[w] |= pulling_bits_[w];
  }

  // The pull over what was published: each vertex's flag says whether it found a value.
  void PullSome() {
    const uint32_t n = this->topology().num_local();
    const Message* published = this->published_.data();
    const uint8_t* has_published = this->has_published_.data();
    tbb::parallel_for(size_t{0}, this->num_blocks_, [&](size_t b) {
      const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((b + 1) * this->kBlock));
      for (uint32_t v = static_cast<uint32_t>(b * this->kBlock); v < end; ++v) {
        bool has = false;
        Message combined{};
        for (uint32_t slot : this->topology().in_slots(v)) {
          if (!has_published[slot]) continue;
          const Message& m = published[slot];
          if (has) {
            P::Combine(combined, m);
          } else {
            combined = m;
            has = true;
          }
        }
        inbox_[v] = combined;
        has_message_[v] = has ? 1 : 0;
        if (has) this->Wake(v);
      }
    });
  }

  // A block's publishers with out-edges in the superstep under way (a cache line of its own).
  struct alignas(64) BlockSources {
    uint64_t count = 0;
  };

  std::vector<Message> inbox_;
  std::vector<uint8_t> has_message_;
  // Whether every in-neighbour published last superstep, so that every vertex with in-edges has a
  // message (Deliver), and those vertices as awake_'s words.
  bool pulled_all_ = false;
  std::vector<uint64_t> pulling_bits_;
  // Publishers with out-edges (per block during compute, then summed), and the local vertices
  // with out-edges.
  std::vector<BlockSources> sources_;
  uint64_t published_sources_ = 0;
  uint64_t local_sources_ = 0;
};

}  // namespace lockstep::bsp
