#pragma once

// The single-node engine for one vertex program over one partition of a graph (docs/design.md §3):
// the superstep driver. A superstep delivers last superstep's messages (relayed ones first
// decoded), runs Compute on the awake vertices block by block, counts, merges the aggregators and
// hands the non-local messages to the relayer. How messages travel is the message strategy's,
// chosen once from the program's traits (strategy.h); the driver is the same for every program.
// Its pieces: the context Compute sees (context.h), the relay out and in (relay_out.h,
// relay_in.h), the peers' positions (peers.h), neighbour lists (neighbours.h), checkpoints
// (checkpoint.h) and tracing (tracer.h).

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/aggregator.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/engine/checkpoint.h"
#include "lockstep/bsp/engine/context.h"
#include "lockstep/bsp/engine/neighbours.h"
#include "lockstep/bsp/engine/partition_view.h"
#include "lockstep/bsp/engine/peers.h"
#include "lockstep/bsp/engine/relay_in.h"
#include "lockstep/bsp/engine/strategy.h"
#include "lockstep/bsp/engine/tracer.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/program.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

// Roughly the bytes an Engine<P> over `vertices` local vertices with `edges` out-edges needs at
// its peak: the CSR (and in-edges if P needs them), the vertex state, and a superstep in which
// every edge carries a message. An estimate for out-of-memory errors, not an accounting.
template <class P>
uint64_t EstimateEngineBytes(uint64_t vertices, uint64_t edges, bool symmetric = false) {
  using EdgeValue = typename P::EdgeValue;
  constexpr uint64_t kEdgeValue = std::is_same_v<EdgeValue, NoValue> ? 0 : sizeof(EdgeValue);
  // UUID, global index, external ID (a short string), CSR offset, value, halted flag, awake bit.
  uint64_t per_vertex = 16 + 4 + 32 + 8 + sizeof(typename P::VertexValue) + 1 + 1;
  uint64_t per_edge = 4 + kEdgeValue;
  if (NeedsInEdges<P>(symmetric) && !symmetric) {  // a symmetric graph's are its out-edges
    per_vertex += 8;
    per_edge += 4 + kEdgeValue;
  }
  for (const PeakBytes& piece : {StrategyFor<P>::kPeakBytes, Neighbours<P>::kPeakBytes}) {
    per_vertex += piece.per_vertex;
    per_edge += piece.per_edge;
  }
  return vertices * per_vertex + edges * per_edge;
}

template <class P>
class Engine final : public StepEngine, protected StrategyFor<P> {
  using Strategy = StrategyFor<P>;
  static_assert(MessageStrategy<Strategy>);
  static_assert(!IsBroadcast<P>() || (!UsesNeighbourhood<P>() && !UsesNeighbourDegrees<P>()),
                "neighbour lists and degrees are for programs that send along edges: a "
                "broadcast's relay agrees on other vertices (ConnectPeers)");

 public:
  using VertexValue = typename P::VertexValue;
  using EdgeValue = typename P::EdgeValue;
  using Message = typename P::Message;
  using Direction = DeliveryDirection;

  Engine(P vertex_program, Graph<EdgeValue> part)
      : Strategy(std::move(vertex_program), std::move(part)) {
    if constexpr (requires(P & p, AggregatorRegistry & r) { p.Register(r); }) {
      this->program_.Register(aggregators_);
    }
    aggregators_.PrepareSlots(this->num_blocks_);
    InitValues();
  }

  using Strategy::graph;
  using Strategy::program;
  using Strategy::topology;
  using Strategy::values;
  AggregatorRegistry& aggregators() override { return aggregators_; }
  void SetRelayer(Relayer* relayer) override { this->relay_out_.SetRelayer(relayer); }
  void SetMaxBatchBytes(uint64_t bytes) override { this->relay_out_.SetMaxBatchBytes(bytes); }
  // How many UUIDs ConnectPeers sends each peer per step (at least 1; tests take small steps).
  void SetListStep(size_t step) { this->peers_.SetListStep(step); }
  uint64_t num_local_vertices() const override { return topology().num_local(); }

  // Min-combined broadcasts (min_broadcast.h): how a superstep's values are delivered, and the
  // supersteps whose values were pushed, pulled and (kAnyOrder) partly held back, so far.
  void SetDirection(Direction d) requires(IsMinBroadcast<P>()) { Strategy::SetDirection(d); }
  uint64_t pushed_supersteps() const requires(IsMinBroadcast<P>()) {
    return Strategy::pushed_supersteps();
  }
  uint64_t pulled_supersteps() const requires(IsMinBroadcast<P>()) {
    return Strategy::pulled_supersteps();
  }
  uint64_t held_back_supersteps() const requires(IsMinBroadcast<P>()) {
    return Strategy::held_back_supersteps();
  }

  // Traces the vertices named by external ID (--trace-vertex, docs/design.md §12) that this
  // partition's range holds: after every superstep, TakeTrace gives a line per vertex (bsp/trace.h)
  // with `format` writing its value. A named vertex that the range should hold but the graph lacks
  // gets one line saying so, after the first superstep. Before the first superstep.
  void SetTrace(const std::vector<std::string>& ids,
                std::function<void(const VertexValue&, std::string&)> format) {
    tracer_.Set(ids, std::move(format), topology(), this->num_blocks_, this->kBlock);
  }
  std::vector<std::string> TakeTrace() override { return tracer_.Take(); }

  uint64_t EstimatedPeakBytes() const override {
    return EstimateEngineBytes<P>(topology().num_local(), topology().num_out_edges(),
                                  topology().symmetric());
  }

  // The program's own callbacks, for the executor factory.
  Callbacks ProgramCallbacks() {
    Callbacks cb;
    if constexpr (requires(P & p) { p.PreStep(uint64_t{0}); }) {
      cb.pre_step = [this](uint64_t s) -> absl::Status { return this->program_.PreStep(s); };
    }
    if constexpr (requires(P & p, const StepStats& s) { p.PostStep(s); }) {
      cb.post_step = [this](const StepStats& s) -> absl::Status {
        return this->program_.PostStep(s);
      };
    }
    if constexpr (requires(P & p, const StepStats& s) { p.KeepRunning(s); }) {
      cb.keep_running = [this](const StepStats& s) -> absl::StatusOr<bool> {
        return this->program_.KeepRunning(s);
      };
    }
    return cb;
  }

  // The relay's positions (peers.h), then the neighbours' set-up, which is collective too: taken
  // even after a peer's list was wrong (with what was mapped, which the peers will find short),
  // then the first failure is returned.
  absl::Status ConnectPeers(Exchange& exchange) override {
    if (auto st = Peers::CheckExchange(exchange, topology()); !st.ok()) return st;
    absl::StatusOr<absl::Status> agreed = this->AgreePositions(exchange);
    if (!agreed.ok()) return agreed.status();
    absl::Status neighbours = neighbours_.Connect(topology(), exchange, this->peers_.mirror());
    return agreed->ok() ? neighbours : *agreed;
  }
  // Whether ConnectPeers succeeded: batches then address by position.
  bool connected() const { return this->peers_.connected(); }

  absl::Status AcceptRelayed(RelayBatch batch) override {
    relay_in_.Add(std::move(batch));
    return absl::OkStatus();
  }

  absl::StatusOr<StepStats> RunSuperstep(uint64_t superstep,
                                         const std::atomic<bool>& cancel) override {
    const auto start = std::chrono::steady_clock::now();
    // Local mode builds the neighbours' lists here, in the job's compute; a distributed job has
    // them from ConnectPeers.
    if (auto st = neighbours_.Prepare(topology(), this->peers_.mirror()); !st.ok()) return st;
    if (delivered_ahead_ == superstep) {
      delivered_ahead_ = kNotAhead;  // by WriteCheckpoint
    } else if (auto st = Receive(superstep); !st.ok()) {
      return st;
    }
    StepStats stats;
    stats.superstep = superstep;
    tracer_.StartStep();
    if constexpr (HasPartitionStep<P>()) {
      if (superstep == 0) {  // a checkpoint before superstep 0 holds Init's values
        PartitionView<P> part(*this);
        this->program_.PartitionStep(part);
      }
    }
    RunBlocks(superstep, cancel);
    if (cancel.load()) return absl::CancelledError("job was cancelled");
    for (size_t b = 0; b < this->num_blocks_; ++b) {
      if (!this->blocks_[b].error.ok()) return this->blocks_[b].error;
    }
    for (size_t b = 0; b < this->num_blocks_; ++b) {
      auto& buf = this->blocks_[b];
      stats.active += buf.active;
      stats.unhalted += buf.unhalted;
      stats.messages += buf.sent;
      buf.active = buf.unhalted = buf.sent = 0;
    }
    this->EndCompute(stats);
    if (tracer_.active()) tracer_.WriteLines(superstep, this->values_, this->halted_);
    aggregators_.MergeStep();
    const auto flush_start = std::chrono::steady_clock::now();
    if (auto st = this->FlushRemote(superstep); !st.ok()) return st;
    stats.relay_encode_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - flush_start).count();
    stats.relay_decode_seconds = relay_decode_seconds_;
    stats.relayed_messages = this->relay_out_.TakeMessages();
    stats.relayed_bytes = this->relay_out_.TakeBytes();
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return stats;
  }

  std::string CheckpointIndex(const CheckpointHeader& header) const override {
    return CheckpointIndexOf(header, topology());
  }
  // A checkpoint (docs/design.md §7.6, engine/checkpoint.h) at the boundary before superstep
  // `next`. A program that sends messages has superstep next - 1's delivered here, ahead of
  // `next`, which then delivers nothing more.
  absl::Status WriteCheckpoint(uint64_t next, CheckpointWriter& out) override {
    WriteCheckpointAggregators(aggregators_, out);
    if constexpr (!Strategy::kPublishes) {
      if (delivered_ahead_ != next) {
        if (auto st = Receive(next); !st.ok()) return st;
        delivered_ahead_ = next;
      }
    }
    EngineCheckpoint<Strategy>::Write(*this, out);
    return absl::OkStatus();
  }
  // The other half (StepEngine::RestoreCheckpoint). A value pending at its owner or held back
  // anywhere is pending for all of its out-neighbours here: re-offering a value that some of them
  // took already changes nothing under a min combiner with Improves.
  absl::Status RestoreCheckpoint(const CheckpointSource& source) override {
    if (auto st = RestoreCheckpointAggregators(aggregators_, source); !st.ok()) return st;
    return EngineCheckpoint<Strategy>::Restore(*this, source);
  }

  // Sets every vertex's initial value (Init, or value-initialised).
  void InitValues() {
    const uint32_t n = topology().num_local();
    tbb::parallel_for(uint32_t{0}, n, [&](uint32_t v) {
      if constexpr (requires(const P& p, const Context<P>& c) { p.Init(c); }) {
        Context<P> ctx;
        ctx.engine_ = this;
        ctx.vertex_ = v;
        this->values_[v] = this->program_.Init(ctx);
      } else {
        this->values_[v] = VertexValue{};
      }
    });
  }

 private:
  friend class Context<P>;
  using Block = typename Strategy::Block;
  static constexpr uint64_t kNotAhead = ~uint64_t{0};

  // Decodes what other partitions relayed before `superstep`, then delivers every message of
  // superstep - 1 (local blocks in order, then relayed batches in sender order).
  absl::Status Receive(uint64_t superstep) {
    const auto decode_start = std::chrono::steady_clock::now();
    const std::vector<RelayBatch> batches = relay_in_.Take(superstep);
    if (!batches.empty()) {
      Strategy& sink = *this;
      const uint32_t self = static_cast<uint32_t>(topology().part());
      if (auto st = DecodeRelayed(sink, batches, this->peers_, self); !st.ok()) return st;
    }
    relay_decode_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - decode_start).count();
    Strategy::Deliver();
    return absl::OkStatus();
  }

  // Runs Compute on the awake vertices, a block per task (sparse supersteps: a pass over n / 64
  // words, then the vertices that run; the block owns its words of awake_, as it is 64-aligned).
  void RunBlocks(uint64_t superstep, const std::atomic<bool>& cancel) {
    tbb::parallel_for(size_t{0}, this->num_blocks_, [&](size_t b) {
      if (cancel.load(std::memory_order_relaxed)) return;
      Block& buf = this->blocks_[b];
      Context<P> ctx;
      ctx.engine_ = this;
      ctx.buffers_ = &buf;
      ctx.superstep_ = superstep;
      ctx.block_ = b;
      const uint32_t begin = this->BlockBegin(b);
      const uint32_t end = this->BlockEnd(b);
      if (tracer_.traces_block(b)) [[unlikely]] {
        RunTracedBlock(ctx, buf, begin, end);
        return;
      }
      for (uint32_t w = begin >> 6; w < (end + 63) >> 6; ++w) {
        for (uint64_t bits = this->awake_[w]; bits != 0; bits &= bits - 1) {
          if (!RunVertex(ctx, buf, w, (w << 6) + static_cast<uint32_t>(std::countr_zero(bits)))) {
            return;
          }
        }
      }
    });
  }

  // Runs vertex v of a block (its bit in awake_ word w); false once the block failed. Inlined
  // into RunBlocks' loop, which is then the loop it was before tracing, and into RunTraced.
  [[gnu::always_inline]] inline bool RunVertex(Context<P>& ctx, Block& buf, uint32_t w,
                                               uint32_t v) {
    const std::span<const Message> msgs = this->MessagesOf(ctx.block_, v);
    bool halt = true;
    if (!this->halted_[v] || !msgs.empty()) {
      ++buf.active;
      ctx.vertex_ = v;
      ctx.halt_ = false;
      if constexpr (std::is_same_v<decltype(this->program_.Compute(ctx, msgs)), absl::Status>) {
        absl::Status st = this->program_.Compute(ctx, msgs);
        if (!st.ok()) {
          buf.Fail(absl::Status(st.code(), absl::StrCat("compute failed for vertex '",
                                                        std::string(topology().external_id(v)),
                                                        "': ", st.message())));
          return false;
        }
      } else {
        this->program_.Compute(ctx, msgs);
      }
      halt = ctx.halt_;
      this->halted_[v] = halt ? 1 : 0;
      buf.unhalted += halt ? 0 : 1;
      if (!buf.error.ok()) return false;
      this->Consume(v);
    }
    if (halt) this->awake_[w] &= ~(uint64_t{1} << (v & 63));
    return true;
  }
  // RunBlocks' loop for a block [begin, end) that holds a traced vertex: out of line, so that the
  // loop every other block runs is the only copy of RunVertex in RunBlocks.
  [[gnu::noinline]] void RunTracedBlock(Context<P>& ctx, Block& buf, uint32_t begin, uint32_t end) {
    for (uint32_t w = begin >> 6; w < (end + 63) >> 6; ++w) {
      for (uint64_t bits = this->awake_[w]; bits != 0; bits &= bits - 1) {
        const uint32_t v = (w << 6) + static_cast<uint32_t>(std::countr_zero(bits));
        if (!RunTraced(ctx, buf, w, v)) return;
      }
    }
  }
  // A traced block's vertex v, run and recorded if it is traced: its messages as compute sees
  // them, and what it sent.
  bool RunTraced(Context<P>& ctx, Block& buf, uint32_t w, uint32_t v) {
    TracedVertex* t = tracer_.Find(v);
    if (t == nullptr) return RunVertex(ctx, buf, w, v);
    Tracer<P>::Received(*t, this->MessagesOf(ctx.block_, v));
    const uint64_t sent_before = buf.sent, active_before = buf.active;
    const uint8_t before = this->BeforeTraced(v);
    const bool ok = RunVertex(ctx, buf, w, v);
    t->ran = buf.active != active_before;
    t->sent = buf.sent - sent_before + this->SendsNotCounted(v, before);
    return ok;
  }

  AggregatorRegistry aggregators_;
  RelayInbox relay_in_;
  Neighbours<P> neighbours_;
  Tracer<P> tracer_;
  // The superstep whose messages WriteCheckpoint delivered ahead of it.
  uint64_t delivered_ahead_ = kNotAhead;
  double relay_decode_seconds_ = 0;  // of the superstep under way (StepStats)
};

}  // namespace lockstep::bsp
