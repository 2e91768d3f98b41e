#pragma once

// The message strategy of a broadcast program without a combiner (IsGather: label propagation;
// docs/design.md §3.4): Compute receives the values its in-neighbours published the superstep
// before, in in-edge order (with kBothDirections its out-neighbours' after them), read from where
// they were published, with no message buffers. Two arrays of published values by slot are
// swapped at each delivery: compute reads the last superstep's while it publishes into the other,
// and each vertex's values are gathered into its block's buffer just before its Compute.

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "lockstep/bsp/engine/broadcast_base.h"
#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/graph.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

template <class P>
class Gather : public BroadcastBase<P, Gather<P>> {
  using Base = BroadcastBase<P, Gather<P>>;

 public:
  using typename Base::Block;
  using typename Base::EdgeValue;
  using typename Base::Message;
  // Published and gathered values and their flags, and the gather's buffers.
  static constexpr PeakBytes kPeakBytes{.per_vertex = 4 * (sizeof(Message) + 1) + 1, .per_edge = 0};

  Gather(P program, Graph<EdgeValue> graph) : Base(std::move(program), std::move(graph)) {
    gathered_.resize(this->published_.size());
    has_gathered_.assign(this->has_published_.size(), 0);
    gathers_.resize(this->num_blocks_);
  }

  // Compute publishes v's value (Context::SendToAllNeighbors).
  void SendToAll(Block& buf, size_t block, uint32_t v, const Message& m) {
    const uint64_t edges = this->PublishedEdges(v);
    const uint8_t had = this->has_published_[v];
    this->published_[v] = m;
    gathers_[block].published += had == 0 ? 1 : 0;
    this->has_published_[v] = 1;
    buf.sent += edges;
  }
  // After compute: the blocks' publishers.
  void EndCompute(StepStats& /*stats*/) {
    for (BlockGather& g : gathers_) published_count_ += std::exchange(g.published, 0);
  }

  // The values published last superstep along v's edges, gathered into its block's buffer (none:
  // no messages).
  std::span<const Message> MessagesOf(size_t block, uint32_t v) {
    std::vector<Message>& values = gathers_[block].values;
    values.clear();
    auto gather = [&](std::span<const uint32_t> slots) {
      for (uint32_t slot : slots) {
        if (has_gathered_[slot]) values.push_back(gathered_[slot]);
      }
    };
    gather(this->PullSlots(v));
    if (this->both_) gather(this->topology().out_slots(v));
    return values;
  }
  // Nothing to drop: the values are gathered where they were published.
  void Consume(uint32_t /*v*/) {}

  // Last superstep's values become the ones compute gathers; this superstep publishes anew. Every
  // vertex with an edge to gather along wakes: the gather just before its Compute reads the flags
  // once and finds whether it has messages.
  void Deliver() {
    this->published_.swap(gathered_);
    this->has_published_.swap(has_gathered_);
    std::fill(this->has_published_.begin(), this->has_published_.end(), 0);
    if (published_count_ + this->remote_published_count_ > 0) {
      const uint32_t n = this->topology().num_local();
      tbb::parallel_for(size_t{0}, this->num_blocks_, [&](size_t b) {
        const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((b + 1) * this->kBlock));
        for (uint32_t v = static_cast<uint32_t>(b * this->kBlock); v < end; ++v) {
          if (!this->PullSlots(v).empty() || (this->both_ && this->topology().out_degree(v) > 0)) {
            this->Wake(v);
          }
        }
      });
    }
    published_count_ = this->remote_published_count_ = 0;
  }

  void AfterRestore() {
    published_count_ = 0;
    for (uint32_t v = 0; v < this->topology().num_local(); ++v) {
      published_count_ += this->has_published_[v] != 0 ? 1 : 0;
    }
  }

 private:
  // A block's gather buffer and its publishers in the superstep under way (cache lines of its
  // own).
  struct alignas(64) BlockGather {
    std::vector<Message> values;
    uint64_t published = 0;
  };

  // Last superstep's published values, which compute reads (swapped with published_).
  std::vector<Message> gathered_;
  std::vector<uint8_t> has_gathered_;
  std::vector<BlockGather> gathers_;
  uint64_t published_count_ = 0;
};

}  // namespace lockstep::bsp
