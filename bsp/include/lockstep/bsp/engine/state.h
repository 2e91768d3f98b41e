#pragma once

// The state the engine's driver (driver.h) and its message strategy (strategy.h) share: the
// program and its part of the graph, the vertex values, who halted and who runs next, the blocks
// of vertices with their outgoing buffers (block.h), and the links to other partitions: where
// non-local messages go (relay_out.h) and the positions agreed with each peer (peers.h). A
// strategy derives from it and adds its inbox; the driver derives from the strategy.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "lockstep/bsp/engine/block.h"
#include "lockstep/bsp/engine/peers.h"
#include "lockstep/bsp/engine/relay_out.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/topology.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

template <class S>
class EngineCheckpoint;
template <class Q>
class PartitionView;

// What a part of the engine needs at its peak per local vertex and per stored out-edge, beside
// the graph and the vertex values (EstimateEngineBytes, driver.h).
struct PeakBytes {
  uint64_t per_vertex = 0;
  uint64_t per_edge = 0;
};

template <class P>
class EngineState {
 public:
  using Program = P;
  using VertexValue = typename P::VertexValue;
  using EdgeValue = typename P::EdgeValue;
  using Message = typename P::Message;
  using Block = BlockBuffers<Message>;
  // Vertices run in fixed blocks of this many indexes. A block is 64-aligned, so it owns its
  // words of the awake bitmap.
  static constexpr uint32_t kBlock = 1024;

  // Every vertex is awake: it runs superstep 0.
  EngineState(P program, Graph<EdgeValue> graph)
      : program_(std::move(program)), graph_(std::move(graph)) {
    const uint32_t n = topology().num_local();
    num_blocks_ = (n + kBlock - 1) / kBlock;
    // About 64 destination bins of power-of-two width.
    bin_shift_ = 0;
    while ((uint64_t{n} >> bin_shift_) > 64) ++bin_shift_;
    num_bins_ = n == 0 ? 1 : ((n - 1) >> bin_shift_) + 1;
    blocks_.resize(num_blocks_ + 1);  // the last one holds relayed messages
    for (auto& b : blocks_) b.bins.resize(num_bins_);
    values_.resize(n);
    halted_.assign(n, 0);
    awake_.assign((uint64_t{n} + 63) / 64, ~uint64_t{0});
    if (n % 64 != 0) awake_.back() = (uint64_t{1} << (n % 64)) - 1;
  }

  const Topology& topology() const { return graph_.topology(); }
  const Graph<EdgeValue>& graph() const { return graph_; }
  P& program() { return program_; }
  const P& program() const { return program_; }
  std::span<const VertexValue> values() const { return values_; }

  size_t num_blocks() const { return num_blocks_; }
  // Block b's buffers (b < num_blocks()), or (b == num_blocks()) what other partitions relayed.
  Block& block(size_t b) { return blocks_[b]; }
  // Whether vertex v runs in the next compute: it has not halted, or it has messages.
  bool awake(uint32_t v) const { return (awake_[v >> 6] >> (v & 63)) & 1; }
  // As the compute loop leaves a vertex that voted to halt: asleep until a message wakes it.
  void Halt(uint32_t v) {
    halted_[v] = 1;
    awake_[v >> 6] &= ~(uint64_t{1} << (v & 63));
  }

  RelayOut& relay_out() { return relay_out_; }
  Peers& peers() { return peers_; }
  const Peers& peers() const { return peers_; }

 protected:
  template <class S>
  friend class EngineCheckpoint;
  friend class PartitionView<P>;

  // Block b's vertices are [BlockBegin(b), BlockEnd(b)).
  static uint32_t BlockBegin(size_t b) { return static_cast<uint32_t>(b * kBlock); }
  uint32_t BlockEnd(size_t b) const {
    return std::min<uint32_t>(topology().num_local(), static_cast<uint32_t>((b + 1) * kBlock));
  }

  // Wake is for a task that owns v's word of awake_ (one per block), WakeShared for any.
  void Wake(uint32_t v) { awake_[v >> 6] |= uint64_t{1} << (v & 63); }
  void WakeShared(uint32_t v) {
    std::atomic_ref<uint64_t>(awake_[v >> 6])
        .fetch_or(uint64_t{1} << (v & 63), std::memory_order_relaxed);
  }

  // Delivers the envelopes in the blocks' bins into a combined inbox (a message and a flag per
  // vertex), one task per bin and blocks in order, waking each target; empties the bins.
  void CombineBins(std::vector<Message>& inbox, std::vector<uint8_t>& has_message) {
    tbb::parallel_for(uint32_t{0}, num_bins_, [&](uint32_t bin) {
      for (Block& buf : blocks_) {
        for (const LocalEnvelope<Message>& e : buf.bins[bin]) {
          if (has_message[e.target]) {
            P::Combine(inbox[e.target], e.message);
          } else {
            inbox[e.target] = e.message;
            has_message[e.target] = 1;
            WakeShared(e.target);  // a bin narrower than 64 vertices shares words
          }
        }
        buf.bins[bin].clear();
      }
    });
  }

  P program_;
  Graph<EdgeValue> graph_;
  std::vector<VertexValue> values_;
  std::vector<uint8_t> halted_;
  // Bit v: vertex v runs in the next compute (it has not halted, or it has messages).
  std::vector<uint64_t> awake_;
  size_t num_blocks_ = 0;
  uint32_t num_bins_ = 1;
  uint32_t bin_shift_ = 0;
  std::vector<Block> blocks_;
  RelayOut relay_out_;
  Peers peers_;
};

}  // namespace lockstep::bsp
