#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/engine/block.h"
#include "lockstep/bsp/engine/checkpoint.h"
#include "lockstep/bsp/engine/context.h"
#include "lockstep/bsp/engine/peers.h"
#include "lockstep/bsp/engine/relay_in.h"
#include "lockstep/bsp/engine/relay_out.h"
#include "lockstep/bsp/engine/tracer.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/neighbourhood.h"
#include "lockstep/bsp/program.h"
#include "lockstep/bsp/relay_positions.h"
#include "lockstep/bsp/vertex_id.h"
#include "tbb/parallel_for.h"
#include "tbb/task_arena.h"

namespace lockstep::bsp {

// Roughly the bytes an Engine<P> over `vertices` local vertices with `edges` out-edges needs at
// its peak: the CSR (and in-edges if P needs them), the vertex state, and a superstep in which
// every edge carries a message. An estimate for out-of-memory errors, not an accounting.
template <class P>
uint64_t EstimateEngineBytes(uint64_t vertices, uint64_t edges, bool symmetric = false) {
  using Message = typename P::Message;
  using EdgeValue = typename P::EdgeValue;
  constexpr uint64_t kEdgeValue = std::is_same_v<EdgeValue, NoValue> ? 0 : sizeof(EdgeValue);
  // UUID, global index, external ID (a short string), CSR offset, value, halted flag, awake bit.
  uint64_t per_vertex = 16 + 4 + 32 + 8 + sizeof(typename P::VertexValue) + 1 + 1;
  uint64_t per_edge = 4 + kEdgeValue;
  if (NeedsInEdges<P>(symmetric)) {
    per_vertex += 8;
    per_edge += 4 + kEdgeValue;
  }
  if constexpr (IsMinBroadcast<P>()) {
    // The combined inbox of pushes, the frontier, and up to one remote publisher's out-edge
    // (target and edge value) per edge.
    per_vertex += sizeof(Message) + 1 + 4;
    per_edge += 4 + kEdgeValue;
  }
  if constexpr (UsesNeighbourhood<P>()) {
    per_vertex += 4 + 8;  // k and the list's offset
    // Up to one listed neighbour per stored edge (a directed graph's; half of them on a
    // symmetric one), at 8 bytes with up to 5 more for bits and slot, and the cut lists
    // received and sent once at set-up.
    per_edge += 13;
  }
  if constexpr (UsesNeighbourDegrees<P>()) per_vertex += 8;  // k of local and remote slots
  if constexpr (IsGather<P>()) {
    per_vertex += 4 * (sizeof(Message) + 1) + 1;  // published and gathered values, flags
  } else if constexpr (IsBroadcast<P>()) {
    per_vertex += 2 * (sizeof(Message) + 1);  // published values and their flags
  } else if constexpr (HasCombiner<P>) {
    per_vertex += sizeof(Message) + 1;  // the combined inbox
    per_edge += sizeof(Message) + 4;    // outgoing buffers (message and slot)
  } else {
    per_vertex += 24;                     // inbox positions, counts and cursors
    per_edge += 2 * sizeof(Message) + 4;  // outgoing buffers and the inbox
  }
  return vertices * per_vertex + edges * per_edge;
}

// The single-node engine for one vertex program over one partition of a graph (docs/design.md §3).
//
// Vertices are processed in fixed blocks of kBlock indexes. Each block has its own outgoing
// buffers, bucketed by destination range ("bin"), and its own aggregator partials, so delivery
// and merging visit blocks in index order: results are bit-identical at any thread count, with no
// lock or atomic per message. Delivery runs one task per bin (propagation blocking: each task
// writes one cache-friendly range of the inbox).
template <class P>
class Engine final : public StepEngine {
 public:
  using VertexValue = typename P::VertexValue;
  using EdgeValue = typename P::EdgeValue;
  using Message = typename P::Message;
  static constexpr uint32_t kBlock = 1024;
  // How many edges ahead the pull of a broadcast program prefetches the value it will add. The
  // values are read at random, and without it a worker's pull waited on the shared L3 cache: two
  // 1-thread workers hold 1.8x local mode's values between them (each its own, with its remote
  // in-neighbours'), and their pull took 1.4x local mode's at 2 threads on the same cores; with
  // it, 1.0x (bench/README.md, "Prefetching the pull").
  static constexpr uint64_t kPullPrefetch = 64;

  Engine(P program, Graph<EdgeValue> graph)
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
    static_assert(!IsBroadcast<P>() || (!UsesNeighbourhood<P>() && !UsesNeighbourDegrees<P>()),
                  "neighbour lists and degrees are for programs that send along edges: a "
                  "broadcast's relay agrees on other vertices (ConnectPeers)");
    awake_.assign((uint64_t{n} + 63) / 64, ~uint64_t{0});  // every vertex runs superstep 0
    if (n % 64 != 0) awake_.back() = (uint64_t{1} << (n % 64)) - 1;
    if constexpr (HasCombiner<P>) {
      inbox_.resize(n);
      if constexpr (PushesInPlace<P>()) std::fill(inbox_.begin(), inbox_.end(), NoMessage());
      has_message_.assign(n, 0);
    } else if constexpr (!IsGather<P>()) {
      inbox_begin_.assign(n, 0);
      inbox_count_.assign(n, 0);
      inbox_cursor_.assign(n, 0);
    }
    if constexpr (IsBroadcast<P>()) {
      // Indexed by slot: local vertices first, then the remote ones relayed values are decoded
      // into, so the gather reads one array with no branch on the slot's kind (see Deliver).
      published_.resize(uint64_t{n} + topology().num_remote());
      has_published_.assign(uint64_t{n} + topology().num_remote(), 0);
      if constexpr (IsGather<P>()) {
        gathered_.resize(published_.size());
        has_gathered_.assign(has_published_.size(), 0);
      }
      // The remote vertices that publish to this partition: its remote in-neighbours. A remote
      // vertex that is only an out-neighbour never sends a value here. One pass over the in-slots
      // with no branch per edge: a local slot marks the spare last entry.
      static_assert(!IsBothDirections<P>() || IsMinBroadcast<P>() || IsGather<P>(),
                    "kBothDirections needs a min-combined broadcast (Improves, program.h) or a "
                    "gather");
      // Without in-edges the gather takes the out-edges, which is right only on a symmetric graph.
      if (!topology().has_in_edges() && !topology().symmetric() && n > 0) {
        throw std::invalid_argument(
            "a broadcast program needs in-edges on a graph that is not symmetric");
      }
      if constexpr (IsSumPull<P>()) {
        // The pull reads in_slots (Deliver, MessagesOf) whatever the graph.
        if (!topology().has_in_edges() && n > 0) {
          throw std::invalid_argument("a broadcast program with a combiner needs in-edges");
        }
        pulling_bits_.assign(awake_.size(), 0);
        for (uint32_t v = 0; v < n; ++v) {
          local_sources_ += topology().out_degree(v) > 0 ? 1 : 0;
          if (topology().in_degree(v) > 0) pulling_bits_[v >> 6] |= uint64_t{1} << (v & 63);
        }
      }
      // A value that goes both ways on a symmetric graph goes along the out-edges alone: they are
      // the in-edges, and a minimum does not depend on their order.
      both_ = IsBothDirections<P>() && !topology().symmetric();
      const uint32_t num_remote = topology().num_remote();
      const uint32_t parts = static_cast<uint32_t>(topology().split().size());
      // On a symmetric graph every remote vertex is a source: the remote table holds only the
      // far ends of the part's edges (Topology::Build), and each such edge is an out-edge of its
      // local end, so an in-edge of it too. No pass over the slots marks them.
      const bool every_remote_a_source = topology().symmetric();
      if (num_remote > 0) {
        remote_source_.assign(uint64_t{num_remote} + 1, every_remote_a_source ? 1 : 0);
        if (!every_remote_a_source) {
          for (uint32_t slot : AllPullSlots()) {
            remote_source_[std::min<uint32_t>(slot - n, num_remote)] = 1;
          }
          if (both_) {
            for (uint32_t slot : topology().all_out_slots()) {
              remote_source_[std::min<uint32_t>(slot - n, num_remote)] = 1;
            }
          }
        }
      }
      // For each other partition, the local vertices with an out-neighbour there: they send
      // their published value to it.
      if (parts > 1) FindBoundary(parts);
      if (num_remote > 0) remote_source_.pop_back();
      remote_sources_ = static_cast<uint64_t>(
          std::count(remote_source_.begin(), remote_source_.end(), uint8_t{1}));
      if constexpr (IsMinBroadcast<P>()) {
        static_assert(!IsBothDirections<P>() || !HasAlong<P>(),
                      "a value that changes along an edge goes one way (kBothDirections, Along)");
        FindRemoteOut();
      }
    }
    if constexpr (requires(P & p, AggregatorRegistry & r) { p.Register(r); }) {
      program_.Register(aggregators_);
    }
    aggregators_.PrepareSlots(num_blocks_);
    InitValues();
  }

  const Topology& topology() const { return graph_.topology(); }
  const Graph<EdgeValue>& graph() const { return graph_; }
  P& program() { return program_; }
  const P& program() const { return program_; }
  std::span<const VertexValue> values() const { return values_; }
  AggregatorRegistry& aggregators() override { return aggregators_; }
  void SetRelayer(Relayer* relayer) override { relay_out_.SetRelayer(relayer); }
  void SetMaxBatchBytes(uint64_t bytes) override { relay_out_.SetMaxBatchBytes(bytes); }
  // How many UUIDs ConnectPeers sends each peer per step (at least 1; tests take small steps).
  void SetListStep(size_t step) { peers_.SetListStep(step); }
  // Min-combined broadcasts (IsMinBroadcast): how a superstep's values are delivered. kChoose
  // follows the direction-optimising rule; tests force one direction.
  enum class Direction { kChoose, kPush, kPull };
  void SetDirection(Direction d) { direction_ = d; }
  // Min-combined broadcasts: the supersteps whose values were pushed, and pulled, so far.
  uint64_t pushed_supersteps() const { return pushed_supersteps_; }
  uint64_t pulled_supersteps() const { return pulled_supersteps_; }
  // Programs taking messages in any order: the supersteps that held values back, so far.
  uint64_t held_back_supersteps() const { return held_back_supersteps_; }
  uint64_t num_local_vertices() const override { return topology().num_local(); }

  // Traces the vertices named by external ID (--trace-vertex, docs/design.md §12) that this
  // partition's range holds: after every superstep, TakeTrace gives a line per vertex (bsp/trace.h)
  // with `format` writing its value. A named vertex that the range should hold but the graph lacks
  // gets one line saying so, after the first superstep. Before the first superstep.
  void SetTrace(const std::vector<std::string>& ids,
                std::function<void(const VertexValue&, std::string&)> format) {
    tracer_.Set(ids, std::move(format), topology(), num_blocks_, kBlock);
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
      cb.pre_step = [this](uint64_t s) -> absl::Status { return program_.PreStep(s); };
    }
    if constexpr (requires(P & p, const StepStats& s) { p.PostStep(s); }) {
      cb.post_step = [this](const StepStats& s) -> absl::Status { return program_.PostStep(s); };
    }
    if constexpr (requires(P & p, const StepStats& s) { p.KeepRunning(s); }) {
      cb.keep_running = [this](const StepStats& s) -> absl::StatusOr<bool> {
        return program_.KeepRunning(s);
      };
    }
    return cb;
  }

  // The relay's positions (engine/peers.h), then the neighbours' set-up, which is collective too:
  // taken even after a peer's list was wrong (with what was mapped, which the peers will find
  // short), then the first failure is returned.
  absl::Status ConnectPeers(Exchange& exchange) override {
    if (auto st = Peers::CheckExchange(exchange, topology()); !st.ok()) return st;
    absl::StatusOr<absl::Status> agreed;
    if constexpr (IsBroadcast<P>()) {
      agreed = peers_.AgreeByDigest(exchange, topology(), boundary_, remote_source_);
    } else {
      agreed = peers_.AgreeByIds(exchange, topology());
    }
    if (!agreed.ok()) return agreed.status();
    absl::Status neighbours = ConnectNeighbours(exchange);
    return agreed->ok() ? neighbours : *agreed;
  }
  // Collective: the remote neighbours' lists and degrees, for programs that read them; every
  // step is taken even after one failed, then the first failure is returned.
  absl::Status ConnectNeighbours(Exchange& exchange) {
    absl::Status st;
    if constexpr (UsesNeighbourhood<P>()) {
      auto nb = Neighbourhood::Build(topology(), &exchange, peers_.mirror());
      if (nb.ok()) {
        neighbourhood_ = std::move(*nb);
      } else {
        st = nb.status();
      }
    }
    if constexpr (UsesNeighbourDegrees<P>()) {
      absl::Status degrees = BuildSlotDegrees(&exchange);
      if (st.ok()) st = degrees;
    }
    return st;
  }
  // Whether ConnectPeers succeeded: batches then address by position.
  bool connected() const { return peers_.connected(); }

  absl::Status AcceptRelayed(RelayBatch batch) override {
    relay_in_.Add(std::move(batch));
    return absl::OkStatus();
  }

  absl::StatusOr<StepStats> RunSuperstep(uint64_t superstep,
                                         const std::atomic<bool>& cancel) override {
    const auto start = std::chrono::steady_clock::now();
    if constexpr (UsesNeighbourhood<P>()) {
      // Local mode builds the lists here, in the job's compute; a distributed job has them from
      // ConnectPeers.
      if (!neighbourhood_) {
        auto nb = Neighbourhood::Build(topology(), nullptr, peers_.mirror());
        if (!nb.ok()) return nb.status();
        neighbourhood_ = std::move(*nb);
      }
    }
    if constexpr (UsesNeighbourDegrees<P>()) {
      if (slot_degree_.empty() && topology().num_local() > 0) {
        if (auto st = BuildSlotDegrees(nullptr); !st.ok()) return st;
      }
    }
    if (delivered_ahead_ == superstep) {
      delivered_ahead_ = kNotAhead;  // by WriteCheckpoint
    } else if (auto st = Deliver(superstep); !st.ok()) {
      return st;
    }
    StepStats stats;
    stats.superstep = superstep;
    const uint32_t n = topology().num_local();
    tracer_.StartStep();
    tbb::parallel_for(size_t{0}, num_blocks_, [&](size_t b) {
      if (cancel.load(std::memory_order_relaxed)) return;
      BlockBuffers& buf = blocks_[b];
      Context<P> ctx;
      ctx.engine_ = this;
      ctx.buffers_ = &buf;
      ctx.superstep_ = superstep;
      ctx.block_ = b;
      // The block's awake vertices (sparse supersteps: a pass over n / 64 words, then the
      // vertices that run); the block owns its words of awake_, as it is 64-aligned.
      const uint32_t begin = static_cast<uint32_t>(b * kBlock);
      const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((b + 1) * kBlock));
      if (tracer_.traces_block(b)) [[unlikely]] {
        RunTracedBlock(ctx, buf, begin, end);
        return;
      }
      for (uint32_t w = begin >> 6; w < (end + 63) >> 6; ++w) {
        for (uint64_t bits = awake_[w]; bits != 0; bits &= bits - 1) {
          if (!RunVertex(ctx, buf, w, (w << 6) + static_cast<uint32_t>(std::countr_zero(bits)))) {
            return;
          }
        }
      }
    });
    if (cancel.load()) return absl::CancelledError("job was cancelled");
    for (size_t b = 0; b < num_blocks_; ++b) {
      if (!blocks_[b].error.ok()) return blocks_[b].error;
    }
    for (size_t b = 0; b < num_blocks_; ++b) {
      BlockBuffers& buf = blocks_[b];
      stats.active += buf.active;
      stats.unhalted += buf.unhalted;
      stats.messages += buf.sent;
      published_count_ += buf.published;
      published_sources_ += buf.published_sources;
      buf.active = buf.unhalted = buf.sent = buf.published = buf.published_sources = 0;
    }
    // Values held back (kAnyOrder) are messages still to deliver: the job goes on.
    stats.messages += held_back_edges_;
    if (tracer_.active()) tracer_.WriteLines(superstep, values_, halted_);
    aggregators_.MergeStep();
    const auto flush_start = std::chrono::steady_clock::now();
    if (auto st = FlushRemote(superstep); !st.ok()) return st;
    stats.relay_encode_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - flush_start).count();
    stats.relay_decode_seconds = relay_decode_seconds_;
    stats.relayed_messages = relay_out_.TakeMessages();
    stats.relayed_bytes = relay_out_.TakeBytes();
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
    if constexpr (!IsBroadcast<P>()) {
      if (delivered_ahead_ != next) {
        if (auto st = Deliver(next); !st.ok()) return st;
        delivered_ahead_ = next;
      }
    }
    EngineCheckpoint<Engine>::Write(*this, out);
    return absl::OkStatus();
  }

  // The other half (StepEngine::RestoreCheckpoint). A value pending at its owner or held back
  // anywhere is pending for all of its out-neighbours here: re-offering a value that some of them
  // took already changes nothing under a min combiner with Improves.
  absl::Status RestoreCheckpoint(const CheckpointSource& source) override {
    if (auto st = RestoreCheckpointAggregators(aggregators_, source); !st.ok()) return st;
    return EngineCheckpoint<Engine>::Restore(*this, source);
  }

  // Checkpoint hooks (engine/checkpoint.h).
  static constexpr bool kPublishes = IsBroadcast<P>();
  static constexpr bool kHoldsBack = IsAnyOrder<P>();
  uint8_t CheckpointFlag(uint32_t v) {
    if constexpr (IsBroadcast<P>()) {
      return has_published_[v] != 0 ? kCheckpointPublished : 0;
    } else {
      return MessagesOf(blocks_.back(), v).empty() ? 0 : kCheckpointMessages;
    }
  }
  void WriteExtra(std::string& extra) {
    const uint32_t n = topology().num_local();
    if constexpr (IsBroadcast<P>()) {
      if constexpr (!RegeneratesPublished<P>()) {
        for (uint32_t v = 0; v < n; ++v) {
          if (has_published_[v] != 0) Codec<Message>::Encode(published_[v], extra);
        }
      }
    } else {
      for (uint32_t v = 0; v < n; ++v) {
        const std::span<const Message> messages = MessagesOf(blocks_.back(), v);
        if (messages.empty()) continue;
        Codec<uint32_t>::Encode(static_cast<uint32_t>(messages.size()), extra);
        for (const Message& m : messages) Codec<Message>::Encode(m, extra);
      }
    }
  }
  void WriteHeld(CheckpointWriter& out) {
    const Topology& topo = topology();
    const uint32_t n = topo.num_local();
    for (uint32_t r = 0; r < topo.num_remote(); ++r) {
      if (has_published_[uint64_t{n} + r] == kHeldBack) {
        Codec<Message>::Encode(published_[uint64_t{n} + r], out.Held(topo.remote_id(r)));
      }
    }
  }
  absl::Status RestoreExtra(uint8_t f, uint32_t v, const VertexId& id, const VertexValue& value,
                            const CheckpointFile& file, uint64_t i, std::string_view& extra) {
    if constexpr (IsBroadcast<P>()) {
      if (!(f & kCheckpointPublished)) return absl::OkStatus();
      Message m;
      if constexpr (RegeneratesPublished<P>()) {
        m = program_.Regenerate(value, file.out_degree(i));
      } else if (!Codec<Message>::Decode(extra, m)) {
        return absl::DataLossError("has a published value that does not decode");
      }
      RestorePublished(v, id, std::move(m));
    } else if (f & kCheckpointMessages) {
      uint32_t messages = 0;
      if (!Codec<uint32_t>::Decode(extra, messages) || messages == 0) {
        return absl::DataLossError("has a bad message count");
      }
      for (uint32_t k = 0; k < messages; ++k) {
        Message m;
        if (!Codec<Message>::Decode(extra, m)) {
          return absl::DataLossError("has a message that does not decode");
        }
        if (v != kNoVertex) blocks_.back().bins[v >> bin_shift_].push_back({v, std::move(m)});
      }
    }
    return absl::OkStatus();
  }
  void AfterRestore() {
    const uint32_t n = topology().num_local();
    if constexpr (IsBroadcast<P>()) {
      published_count_ = published_sources_ = 0;
      for (uint32_t v = 0; v < n; ++v) {
        published_count_ += has_published_[v] != 0 ? 1 : 0;
        if constexpr (IsSumPull<P>()) {
          published_sources_ += has_published_[v] != 0 && PublishedEdges(v) > 0 ? 1 : 0;
        }
      }
    }
    if constexpr (IsMinBroadcast<P>()) {
      // Each block's frontier, edges and least, as its publishers would have left them.
      for (size_t b = 0; b < num_blocks_; ++b) {
        BlockBuffers& buf = blocks_[b];
        buf.frontier.clear();
        buf.frontier_edges = 0;
        buf.least.reset();
        const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((b + 1) * kBlock));
        for (uint32_t v = static_cast<uint32_t>(b * kBlock); v < end; ++v) {
          if (!has_published_[v]) continue;
          buf.frontier.push_back(v);
          buf.frontier_edges += PublishedEdges(v);
          if (!buf.least || published_[v] < *buf.least) buf.least = published_[v];
        }
      }
      published_count_ = 0;
    }
  }

  // Sets every vertex's initial value (Init, or value-initialised) and wakes it up.
  void InitValues() {
    const uint32_t n = topology().num_local();
    tbb::parallel_for(uint32_t{0}, n, [&](uint32_t v) {
      if constexpr (requires(const P& p, const Context<P>& c) { p.Init(c); }) {
        Context<P> ctx;
        ctx.engine_ = this;
        ctx.vertex_ = v;
        values_[v] = program_.Init(ctx);
      } else {
        values_[v] = VertexValue{};
      }
    });
  }

 private:
  friend class Context<P>;
  template <class>
  friend class EngineCheckpoint;

  using LocalEnvelope = bsp::LocalEnvelope<Message>;
  using RemoteEnvelope = bsp::RemoteEnvelope<Message>;
  using IdEnvelope = bsp::IdEnvelope<Message>;

 public:
  using BlockBuffers = bsp::BlockBuffers<Message>;

 private:
  // boundary_[q] for each partition q of `parts`: the local vertices with an out-neighbour in q
  // (or an in-neighbour, for a value that goes both ways), in increasing order (ConnectBroadcast
  // puts them in global-index order, which is the same for a loaded part). Up to 64
  // partitions, each vertex gathers the partitions of its out-neighbours as bits (no branch per
  // edge) and is listed once per bit.
  void FindBoundary(uint32_t parts) {
    const Topology& topo = topology();
    const uint32_t n = topo.num_local();
    const uint32_t self = static_cast<uint32_t>(topo.part());
    boundary_.assign(parts, {});
    if (parts <= 64) {
      std::vector<uint8_t> part_of(uint64_t{n} + topo.num_remote(), static_cast<uint8_t>(self));
      for (uint32_t r = 0; r < topo.num_remote(); ++r) {
        part_of[n + r] = static_cast<uint8_t>(topo.remote_partition(r));
      }
      for (uint32_t v = 0; v < n; ++v) {
        uint64_t mask = 0;
        for (uint32_t slot : topo.out_slots(v)) mask |= uint64_t{1} << part_of[slot];
        if (both_) {
          for (uint32_t slot : topo.in_slots(v)) mask |= uint64_t{1} << part_of[slot];
        }
        for (mask &= ~(uint64_t{1} << self); mask != 0; mask &= mask - 1) {
          boundary_[std::countr_zero(mask)].push_back(v);
        }
      }
      return;
    }
    std::vector<uint32_t> seen(parts, kNoVertex);
    for (uint32_t v = 0; v < n; ++v) {
      auto visit = [&](std::span<const uint32_t> slots) {
        for (uint32_t slot : slots) {
          if (topo.IsLocal(slot)) continue;
          const uint32_t q = topo.remote_partition(slot - n);
          if (seen[q] != v) {
            seen[q] = v;
            boundary_[q].push_back(v);
          }
        }
      };
      visit(topo.out_slots(v));
      if (both_) visit(topo.in_slots(v));
    }
  }

  // Broadcast programs: the slots vertex v gathers from. Its in-slots; or, on a symmetric graph
  // built without them for a min-combined broadcast (NeedsInEdges(symmetric), program.h), its
  // out-slots, which are the same vertices.
  std::span<const uint32_t> PullSlots(uint32_t v) const {
    return topology().has_in_edges() ? topology().in_slots(v) : topology().out_slots(v);
  }
  // The edge values beside PullSlots(v), for a message that changes along an edge (HasAlong).
  std::span<const EdgeValue> PullValues(uint32_t v) const {
    return topology().has_in_edges() ? graph_.in_values(v) : graph_.out_values(v);
  }
  std::span<const uint32_t> AllPullSlots() const {
    return topology().has_in_edges() ? topology().all_in_slots() : topology().all_out_slots();
  }

  // Restores a published value of local vertex v, or (v is kNoVertex) of remote vertex `id` if it
  // publishes to this partition. A min-combined broadcast takes the least of several.
  void RestorePublished(uint32_t v, const VertexId& id, Message m) {
    const uint32_t n = topology().num_local();
    uint64_t slot = v;
    if (v == kNoVertex) {
      const uint32_t r = topology().FindRemote(id);
      if (r == kNoVertex || !remote_source_[r]) return;
      slot = uint64_t{n} + r;
    }
    if constexpr (IsMinBroadcast<P>()) {
      if (has_published_[slot]) {
        P::Combine(published_[slot], m);
      } else {
        published_[slot] = std::move(m);
      }
    } else {
      published_[slot] = std::move(m);
    }
    if (slot >= n) remote_published_count_ += 1 - has_published_[slot];
    has_published_[slot] = 1;
  }

  // Min-combined broadcasts: for each remote vertex, the local vertices it is an in-neighbour of
  // (or an out-neighbour, for a value that goes both ways), along which a pushed value of it goes.
  void FindRemoteOut() {
    const Topology& topo = topology();
    const uint32_t n = topo.num_local();
    const uint32_t num_remote = topo.num_remote();
    if (num_remote == 0) return;
    remote_out_offsets_.assign(uint64_t{num_remote} + 1, 0);
    for (uint32_t slot : AllPullSlots()) {
      if (slot >= n) ++remote_out_offsets_[slot - n + 1];
    }
    if (both_) {
      for (uint32_t slot : topo.all_out_slots()) {
        if (slot >= n) ++remote_out_offsets_[slot - n + 1];
      }
    }
    std::partial_sum(remote_out_offsets_.begin(), remote_out_offsets_.end(),
                     remote_out_offsets_.begin());
    remote_out_targets_.resize(remote_out_offsets_.back());
    if constexpr (HasAlong<P>()) remote_out_weights_.resize(remote_out_offsets_.back());
    std::vector<uint64_t> at(remote_out_offsets_.begin(), remote_out_offsets_.end() - 1);
    for (uint32_t v = 0; v < n; ++v) {
      const auto slots = PullSlots(v);
      const auto weights = PullValues(v);
      for (size_t i = 0; i < slots.size(); ++i) {
        if (slots[i] < n) continue;
        if constexpr (HasAlong<P>()) remote_out_weights_[at[slots[i] - n]] = weights[i];
        remote_out_targets_[at[slots[i] - n]++] = v;
      }
      if (both_) {
        for (uint32_t slot : topo.out_slots(v)) {
          if (slot >= n) remote_out_targets_[at[slot - n]++] = v;
        }
      }
    }
  }

  // Delivers a min-combined broadcast (docs/design.md §3.4): when the publishers' out-edges are
  // few against all in-edges, each publisher's value is pushed along them (a compare-and-swap
  // minimum per target, or for other messages an envelope binned by target); otherwise
  // every vertex pulls, skipped if the least published value cannot improve it and stopping at
  // that value. Only improving messages are delivered; the minimum does not depend on the
  // direction or the order.
  void DeliverMin() {
    const Topology& topo = topology();
    const uint32_t n = topo.num_local();
    const uint32_t num_remote = topo.num_remote();
    remote_frontier_.clear();
    for (uint32_t r = 0; r < num_remote; ++r) {
      if (has_published_[uint64_t{n} + r]) remote_frontier_.push_back(r);
    }
    bool any = false;
    Message least{};
    uint64_t edges = 0;
    auto consider = [&](const Message& m) {
      if (!any || m < least) least = m;
      any = true;
    };
    // The local publishers' least value and edges, gathered per block as they published.
    for (size_t b = 0; b < num_blocks_; ++b) {
      if (blocks_[b].least) consider(*blocks_[b].least);
      edges += blocks_[b].frontier_edges;
    }
    for (uint32_t r : remote_frontier_) {
      consider(published_[uint64_t{n} + r]);
      edges += remote_out_offsets_[r + 1] - remote_out_offsets_[r];
    }
    const uint64_t all_edges = AllPullSlots().size() + (both_ ? topo.all_out_slots().size() : 0);
    bool push = direction_ == Direction::kChoose ? edges * kPullFactor < all_edges
                                                 : direction_ == Direction::kPush;
    // A program that takes its messages in any order (kAnyOrder) pushes the least values of a
    // frontier too large to push and holds the others back (values above `limit`).
    std::optional<Message> limit;
    if constexpr (IsAnyOrder<P>()) {
      if (any && !push && direction_ == Direction::kChoose) {
        limit = HoldBackLimit(edges, all_edges / kPullFactor);
        push = limit.has_value();
      }
    }
    const Message* published = published_.data();
    const uint8_t* has_published = has_published_.data();
    // Whether the value at a published slot goes out in this superstep.
    auto delivered = [&](uint64_t slot) { return !limit || !(*limit < published[slot]); };
    // v's gather over the slots its in-neighbours published at: skipped if the least value
    // cannot improve v, stopped once it reaches that value (no slot can lower it).
    auto pull = [&](uint32_t v) {
      has_message_[v] = 0;
      if (!P::Improves(values_[v], least)) return;
      bool has = false;
      Message combined{};
      auto take = [&](const Message& m) {
        if (has) {
          P::Combine(combined, m);
        } else {
          combined = m;
          has = true;
        }
        return !(least < combined);
      };
      auto gather = [&](std::span<const uint32_t> slots) {
        if constexpr (HasAlong<P>()) {
          const auto weights = PullValues(v);
          for (size_t i = 0; i < slots.size(); ++i) {
            if (has_published[slots[i]] && take(P::Along(published[slots[i]], weights[i]))) {
              return true;
            }
          }
        } else {
          for (uint32_t slot : slots) {
            if (has_published[slot] && take(published[slot])) return true;
          }
        }
        return false;
      };
      if (!gather(PullSlots(v)) && both_) gather(topo.out_slots(v));
      if (has && P::Improves(values_[v], combined)) {
        inbox_[v] = combined;
        has_message_[v] = 1;
        Wake(v);  // pulls run a block per task
      }
    };
    // No vertex has a message here: each that had one ran and consumed it (ConsumeMessage), and
    // an in-place push's targets are at no message, the identity of min.
    if (any && push) {
      ++pushed_supersteps_;
      // A compare-and-swap minimum into the target; or, for other messages, an envelope in the
      // publisher's block's bin of the target (propagation blocking), of which each bin's
      // targets then take the least. Only improving messages are offered.
      auto offer = [&](BlockBuffers& buf, uint32_t v, const Message& m) {
        if (!P::Improves(values_[v], m)) return;
        if constexpr (PushesInPlace<P>()) {
          std::atomic_ref<Message> into(inbox_[v]);
          Message now = into.load(std::memory_order_relaxed);
          while (m < now && !into.compare_exchange_weak(now, m, std::memory_order_relaxed)) {
          }
          std::atomic_ref<uint8_t> has(has_message_[v]);
          if (has.load(std::memory_order_relaxed) == 0 &&
              has.exchange(1, std::memory_order_relaxed) == 0) {
            WakeShared(v);
          }
        } else {
          buf.bins[v >> bin_shift_].push_back({v, m});
        }
      };
      tbb::parallel_for(size_t{0}, num_blocks_ + 1, [&](size_t b) {
        BlockBuffers& buf = blocks_[b];
        if (b < num_blocks_) {
          for (uint32_t u : buf.frontier) {
            if (!delivered(u)) continue;
            const Message m = published_[u];
            const auto slots = topo.out_slots(u);
            if constexpr (HasAlong<P>()) {
              const auto weights = graph_.out_values(u);
              for (size_t i = 0; i < slots.size(); ++i) {
                if (slots[i] < n) offer(buf, slots[i], P::Along(m, weights[i]));
              }
            } else {
              for (uint32_t slot : slots) {
                if (slot < n) offer(buf, slot, m);
              }
            }
            if (both_) {
              for (uint32_t slot : topo.in_slots(u)) {
                if (slot < n) offer(buf, slot, m);
              }
            }
          }
          return;
        }
        // The relayed values go along the remote vertices' edges into the last block's bins.
        for (uint32_t r : remote_frontier_) {
          if (!delivered(uint64_t{n} + r)) continue;
          const Message m = published_[uint64_t{n} + r];
          for (uint64_t i = remote_out_offsets_[r]; i < remote_out_offsets_[r + 1]; ++i) {
            if constexpr (HasAlong<P>()) {
              offer(buf, remote_out_targets_[i], P::Along(m, remote_out_weights_[i]));
            } else {
              offer(buf, remote_out_targets_[i], m);
            }
          }
        }
      });
      if constexpr (!PushesInPlace<P>()) CombineBins();
    } else if (any) {
      ++pulled_supersteps_;
      tbb::parallel_for(size_t{0}, num_blocks_, [&](size_t b) {
        const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((b + 1) * kBlock));
        for (uint32_t v = static_cast<uint32_t>(b * kBlock); v < end; ++v) {
          pull(v);
        }
      });
    }
    if (limit) ++held_back_supersteps_;
    // The values that went out are done; those held back stay published (kHeldBack: already
    // relayed to other partitions) and in their block's frontier, with its edges and least.
    held_back_edges_ = 0;
    tbb::parallel_for(size_t{0}, num_blocks_, [&](size_t b) {
      BlockBuffers& buf = blocks_[b];
      buf.frontier_edges = 0;
      buf.least.reset();
      if (!limit) {
        for (uint32_t v : buf.frontier) has_published_[v] = 0;
        buf.frontier.clear();
        return;
      }
      size_t kept = 0;
      for (uint32_t v : buf.frontier) {
        if (delivered(v)) {
          has_published_[v] = 0;
          continue;
        }
        has_published_[v] = kHeldBack;
        buf.frontier[kept++] = v;
        buf.frontier_edges += PublishedEdges(v);
        if (!buf.least || published_[v] < *buf.least) buf.least = published_[v];
      }
      buf.frontier.resize(kept);
    });
    for (size_t b = 0; b < num_blocks_; ++b) held_back_edges_ += blocks_[b].frontier_edges;
    for (uint32_t r : remote_frontier_) {
      const uint64_t slot = uint64_t{n} + r;
      if (delivered(slot)) {
        has_published_[slot] = 0;
      } else {
        has_published_[slot] = kHeldBack;
        held_back_edges_ += remote_out_offsets_[r + 1] - remote_out_offsets_[r];
      }
    }
    published_count_ = remote_published_count_ = 0;
  }

  // For a frontier of `edges` edges that a program taking its messages in any order would pull:
  // the value up to which its least values fill about `budget` edges, estimated from a sample of
  // the publishers; none when they would all go out anyway (their values are equal, as BFS's).
  std::optional<Message> HoldBackLimit(uint64_t edges, uint64_t budget) {
    const Topology& topo = topology();
    const uint32_t n = topo.num_local();
    uint64_t count = remote_frontier_.size();
    for (size_t b = 0; b < num_blocks_; ++b) count += blocks_[b].frontier.size();
    const uint64_t stride = std::max<uint64_t>(1, count / kHoldBackSample);
    sample_.clear();
    uint64_t i = 0;
    for (size_t b = 0; b < num_blocks_; ++b) {
      for (uint32_t u : blocks_[b].frontier) {
        if (i++ % stride == 0) {
          sample_.push_back({published_[u], PublishedEdges(u)});
        }
      }
    }
    for (uint32_t r : remote_frontier_) {
      if (i++ % stride == 0) {
        sample_.push_back(
            {published_[uint64_t{n} + r], remote_out_offsets_[r + 1] - remote_out_offsets_[r]});
      }
    }
    std::sort(sample_.begin(), sample_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    uint64_t sampled = 0;
    for (const auto& s : sample_) sampled += s.second;
    if (sampled == 0) return std::nullopt;
    // The sample's edges stand for `edges` in all.
    const double scale = static_cast<double>(edges) / static_cast<double>(sampled);
    size_t last = 0;
    double filled = 0;
    for (size_t k = 0; k < sample_.size(); ++k) {
      filled += static_cast<double>(sample_[k].second) * scale;
      if (filled > static_cast<double>(budget)) break;
      last = k;
    }
    const Message cut = sample_[last].first;
    if (!(cut < sample_.back().first)) return std::nullopt;
    return cut;
  }

  // A vertex that has messages, or has not halted, runs in the next compute. Wake is for a task
  // that owns v's word of awake_ (one per block: blocks are 64-aligned), WakeShared for any.
  void Wake(uint32_t v) { awake_[v >> 6] |= uint64_t{1} << (v & 63); }
  void WakeShared(uint32_t v) {
    std::atomic_ref<uint64_t>(awake_[v >> 6])
        .fetch_or(uint64_t{1} << (v & 63), std::memory_order_relaxed);
  }
  // After v ran: its combined message is gone (an in-place push's target back at the identity
  // of min), so deliveries need not clear every vertex's.
  void ConsumeMessage(uint32_t v) {
    if constexpr (IsGather<P>()) {
      // Nothing to drop: the values are gathered where they were published.
    } else if constexpr (IsSumPull<P>()) {
      // Nothing to drop: every delivery sets every vertex's message (Deliver).
    } else if constexpr (HasCombiner<P>) {
      has_message_[v] = 0;
      if constexpr (PushesInPlace<P>()) inbox_[v] = NoMessage();
    } else {
      inbox_count_[v] = 0;
    }
  }

  // Combines the envelopes in the blocks' bins into the inbox, one task per bin and blocks in
  // order, and empties the bins.
  void CombineBins() {
    tbb::parallel_for(uint32_t{0}, num_bins_, [&](uint32_t bin) {
      for (BlockBuffers& buf : blocks_) {
        for (const LocalEnvelope& e : buf.bins[bin]) {
          if (has_message_[e.target]) {
            P::Combine(inbox_[e.target], e.message);
          } else {
            inbox_[e.target] = e.message;
            has_message_[e.target] = 1;
            WakeShared(e.target);  // a bin narrower than 64 vertices shares words
          }
        }
        buf.bins[bin].clear();
      }
    });
  }

  // The edges a value published by local vertex v goes along.
  uint64_t PublishedEdges(uint32_t v) const {
    return topology().out_degree(v) + (both_ ? topology().in_degree(v) : 0);
  }

  std::span<const Message> MessagesOf(BlockBuffers& buf, uint32_t v) {
    if constexpr (IsGather<P>()) {
      // The values published last superstep along the vertex's edges (none: no messages).
      buf.gathered.clear();
      auto gather = [&](std::span<const uint32_t> slots) {
        for (uint32_t slot : slots) {
          if (has_gathered_[slot]) buf.gathered.push_back(gathered_[slot]);
        }
      };
      gather(PullSlots(v));
      if (both_) gather(topology().out_slots(v));
      return buf.gathered;
    } else if constexpr (HasCombiner<P>) {
      if constexpr (IsSumPull<P>()) {
        if (pulled_all_) {
          return topology().in_degree(v) > 0 ? std::span<const Message>(&inbox_[v], 1)
                                             : std::span<const Message>();
        }
      }
      return has_message_[v] ? std::span<const Message>(&inbox_[v], 1) : std::span<const Message>();
    } else {
      return {inbox_.data() + inbox_begin_[v], inbox_count_[v]};
    }
  }

  void Publish(BlockBuffers& buf, uint32_t v, const Message& m) {
    const uint64_t edges = PublishedEdges(v);
    const uint8_t had = has_published_[v];
    if constexpr (IsMinBroadcast<P>()) {
      if (!had) {
        buf.frontier.push_back(v);
        buf.frontier_edges += edges;
      }
    }
    if constexpr (IsAnyOrder<P>()) {
      // A value held back from an earlier superstep (DeliverMin) and this one go as their least.
      if (had == kHeldBack) {
        P::Combine(published_[v], m);
      } else {
        published_[v] = m;
      }
    } else {
      published_[v] = m;
    }
    if constexpr (PushesInPlace<P>() && std::is_floating_point_v<Message>) {
      // -0 and +0 compare equal: one of them, so that which one a vertex gets never depends on
      // the order of combining.
      if (m == Message{0}) published_[v] = Message{0};
    }
    if constexpr (IsMinBroadcast<P>()) {
      if (!buf.least || published_[v] < *buf.least) buf.least = published_[v];
    }
    buf.published += had == 0 ? 1 : 0;
    if constexpr (IsSumPull<P>()) buf.published_sources += had == 0 && edges > 0 ? 1 : 0;
    has_published_[v] = 1;
    buf.sent += had == kHeldBack ? 0 : edges;  // counted as held back (RunSuperstep)
  }

  void SendFromBlock(BlockBuffers& buf, uint32_t slot, const Message& m) {
    ++buf.sent;
    const uint32_t n = topology().num_local();
    if (slot < n) {
      buf.bins[slot >> bin_shift_].push_back({slot, m});
    } else {
      buf.remote.push_back({slot - n, m});
    }
  }

  void SendToId(BlockBuffers& buf, uint32_t from, const VertexId& target, const Message& m) {
    const uint32_t local = topology().Find(target);
    if (local != kNoVertex) {
      SendFromBlock(buf, local, m);
      return;
    }
    const auto& split = topology().split();
    auto part = split.PartitionFor(target);
    if (!relay_out_.has_relayer() || !part.ok() || *part == topology().part()) {
      buf.Fail(absl::NotFoundError(absl::StrCat(
          "vertex '", std::string(topology().external_id(from)), "' sent a message to vertex ",
          ToString(target), ", which is not in the graph")));
      return;
    }
    ++buf.sent;
    buf.by_id.push_back({target, static_cast<uint32_t>(*part), m});
  }

  // Moves last superstep's messages (local blocks in order, then relayed batches in sender order)
  // into the inbox of `superstep`.
  absl::Status Deliver(uint64_t superstep) {
    const auto decode_start = std::chrono::steady_clock::now();
    if (auto st = DecodeRelayed(superstep); !st.ok()) return st;
    relay_decode_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - decode_start).count();
    const uint32_t n = topology().num_local();
    if constexpr (IsMinBroadcast<P>()) {
      DeliverMin();
    } else if constexpr (IsGather<P>()) {
      // Last superstep's values become the ones compute gathers; this superstep publishes anew.
      // Every vertex with an edge to gather along wakes: the gather just before its Compute
      // (MessagesOf) reads the flags once and finds whether it has messages.
      published_.swap(gathered_);
      has_published_.swap(has_gathered_);
      std::fill(has_published_.begin(), has_published_.end(), 0);
      if (published_count_ + remote_published_count_ > 0) {
        tbb::parallel_for(size_t{0}, num_blocks_, [&](size_t b) {
          const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((b + 1) * kBlock));
          for (uint32_t v = static_cast<uint32_t>(b * kBlock); v < end; ++v) {
            if (!PullSlots(v).empty() || (both_ && topology().out_degree(v) > 0)) Wake(v);
          }
        });
      }
      published_count_ = remote_published_count_ = 0;
    } else if constexpr (IsBroadcast<P>()) {
      // The pull: each vertex combines what its in-neighbours published, in in-edge order. When
      // every vertex published (PageRank), the flags need not be read: the loop is the gather
      // of a sparse matrix-vector product. Remote vertices count if they publish here at all.
      // Values are indexed by slot, local and remote alike: a branch on the slot's kind was taken
      // at random for about half the edges of a partition of two, and its mispredictions made a
      // worker's superstep 2-3x slower (bench/README.md).
      // Every vertex with out-edges (a superset of the local in-neighbours: PageRank's dangling
      // vertices publish nothing) and every remote in-neighbour.
      const bool all =
          published_sources_ == local_sources_ && remote_published_count_ == remote_sources_;
      const Message* published = published_.data();
      const uint8_t* has_published = has_published_.data();
      if (all) {
        const Topology& topo = topology();
        const std::span<const uint32_t> sources = topo.all_in_slots();
        Message* inbox = inbox_.data();
        tbb::parallel_for(size_t{0}, num_blocks_, [&](size_t b) {
          const uint32_t begin = static_cast<uint32_t>(b * kBlock);
          const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((b + 1) * kBlock));
          const uint32_t* src = sources.data();
          // The value kPullPrefetch edges ahead is fetched while this one is added (clamped to
          // the last edge, so nothing past the array is read).
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
        for (size_t w = 0; w < pulling_bits_.size(); ++w) awake_[w] |= pulling_bits_[w];
      }
      pulled_all_ = all;
      if (!all)
        tbb::parallel_for(size_t{0}, num_blocks_, [&](size_t b) {
          const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((b + 1) * kBlock));
          for (uint32_t v = static_cast<uint32_t>(b * kBlock); v < end; ++v) {
            bool has = false;
            Message combined{};
            for (uint32_t slot : topology().in_slots(v)) {
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
            if (has) Wake(v);
          }
        });
      std::fill(has_published_.begin(), has_published_.end(), 0);
      published_count_ = published_sources_ = remote_published_count_ = 0;
    } else if constexpr (HasCombiner<P>) {
      CombineBins();
    } else {
      // Counting sort by target: each bin owns a contiguous range of targets and of the inbox.
      std::vector<uint64_t> bin_base(num_bins_ + 1, 0);
      for (uint32_t bin = 0; bin < num_bins_; ++bin) {
        uint64_t total = 0;
        for (const auto& buf : blocks_) total += buf.bins[bin].size();
        bin_base[bin + 1] = bin_base[bin] + total;
      }
      inbox_.resize(bin_base.back());
      bin_targets_.resize(num_bins_);
      tbb::parallel_for(uint32_t{0}, num_bins_, [&](uint32_t bin) {
        const uint32_t lo = bin << bin_shift_;
        const uint32_t hi = std::min<uint64_t>(n, uint64_t{bin + 1} << bin_shift_);
        // Counts (every count is 0 here: a vertex that had messages ran and dropped them), then
        // first positions, then fill cursors; each bin touches only [lo, hi). With few messages
        // against the bin's width only their targets are visited, in index order.
        const uint64_t messages = bin_base[bin + 1] - bin_base[bin];
        uint64_t run = bin_base[bin];
        auto place = [&](uint32_t v) {
          inbox_begin_[v] = inbox_cursor_[v] = run;
          run += inbox_count_[v];
          WakeShared(v);  // a bin narrower than 64 vertices shares words
        };
        if (messages * kSparseBin < hi - lo) {
          std::vector<uint32_t>& targets = bin_targets_[bin];
          targets.clear();
          for (const auto& buf : blocks_) {
            for (const LocalEnvelope& e : buf.bins[bin]) {
              if (inbox_count_[e.target]++ == 0) targets.push_back(e.target);
            }
          }
          std::sort(targets.begin(), targets.end());
          for (uint32_t v : targets) place(v);
        } else {
          for (const auto& buf : blocks_) {
            for (const LocalEnvelope& e : buf.bins[bin]) ++inbox_count_[e.target];
          }
          for (uint32_t v = lo; v < hi; ++v) {
            if (inbox_count_[v] > 0) place(v);
          }
        }
        for (auto& buf : blocks_) {
          for (LocalEnvelope& e : buf.bins[bin])
            inbox_[inbox_cursor_[e.target]++] = std::move(e.message);
          buf.bins[bin].clear();
        }
      });
    }
    return absl::OkStatus();
  }

  // Takes the relayed batches sent before `superstep` and decodes them (engine/relay_in.h).
  absl::Status DecodeRelayed(uint64_t superstep) {
    const std::vector<RelayBatch> batches = relay_in_.Take(superstep);
    if (batches.empty()) return absl::OkStatus();
    return bsp::DecodeRelayed(*this, batches, peers_, static_cast<uint32_t>(topology().part()));
  }

 public:
  // The relay's sink (engine/relay_in.h): a broadcast program's value of remote vertex r, or a
  // message for local vertex v.
  static constexpr bool kDecodesRunsInPlace = IsBroadcast<P>() && !IsAnyOrder<P>();
  absl::StatusOr<uint32_t> TargetOfId(const VertexId& id, uint32_t from) const {
    const Topology& topo = topology();
    const uint32_t self = static_cast<uint32_t>(topo.part());
    if constexpr (IsBroadcast<P>()) {
      const uint32_t r = topo.FindRemote(id);
      if (r == kNoVertex || !remote_source_[r]) {
        return absl::NotFoundError(absl::StrCat("partition ", from, " relayed a value of vertex ",
                                                ToString(id),
                                                ", which has no out-edge into partition ", self));
      }
      return r;
    } else {
      const uint32_t v = topo.Find(id);
      if (v == kNoVertex) {
        return absl::NotFoundError(absl::StrCat("partition ", from,
                                                " relayed a message for vertex ", ToString(id),
                                                ", which partition ", self, " does not have"));
      }
      return v;
    }
  }
  void Accept(uint32_t target, Message&& m) {
    if constexpr (IsBroadcast<P>()) {
      const uint64_t slot = uint64_t{topology().num_local()} + target;
      if constexpr (IsAnyOrder<P>()) {
        if (has_published_[slot]) {
          P::Combine(published_[slot], m);  // with a value held back (DeliverMin)
        } else {
          published_[slot] = std::move(m);
        }
      } else {
        published_[slot] = std::move(m);
      }
      remote_published_count_ += 1 - has_published_[slot];
      has_published_[slot] = 1;
    } else {
      blocks_.back().bins[target >> bin_shift_].push_back({target, std::move(m)});
    }
  }
  absl::Status AcceptRun(uint32_t first, size_t count, std::string_view& bytes, uint32_t from) {
    const uint64_t base = uint64_t{topology().num_local()} + first;
    Message* out = published_.data() + base;
    for (size_t i = 0; i < count; ++i) {
      if (!Codec<Message>::Decode(bytes, out[i])) {
        return absl::DataLossError(
            absl::StrCat("cannot decode a value relayed from partition ", from));
      }
    }
    uint8_t* flags = has_published_.data() + base;
    uint64_t had = 0;
    for (size_t i = 0; i < count; ++i) had += flags[i] != 0;
    remote_published_count_ += count - had;
    std::memset(flags, 1, count);
    return absl::OkStatus();
  }

 private:
  // Hands every non-local message of this superstep to the relayer (engine/relay_out.h): one
  // batch per destination partition, combined per destination vertex if the program has a
  // combiner.
  absl::Status FlushRemote(uint64_t superstep) {
    const Topology& topo = topology();
    if constexpr (IsBroadcast<P>()) {
      // Each published value goes once to every other partition that has an out-neighbour.
      for (uint32_t q = 0; q < boundary_.size(); ++q) {
        const std::vector<uint32_t>& boundary = boundary_[q];
        if (boundary.empty()) continue;
        OutgoingBatch out = EncodePublished(superstep, topo, q, boundary, published_.data(),
                                            has_published_.data(), peers_.connected());
        if (out.count == 0) continue;
        if (!relay_out_.has_relayer()) {
          return absl::FailedPreconditionError(
              "a value for another partition cannot be delivered: no relayer is installed");
        }
        auto st = relay_out_.Send<Message>(std::move(out.batch), out.count,
                                           static_cast<uint32_t>(boundary.size()));
        if (!st.ok()) return st;
      }
      return absl::OkStatus();
    }
    bool any = false;
    for (size_t b = 0; b < num_blocks_; ++b) {
      any = any || !blocks_[b].remote.empty() || !blocks_[b].by_id.empty();
    }
    if (!any) return absl::OkStatus();
    if (!relay_out_.has_relayer()) {
      for (size_t b = 0; b < num_blocks_; ++b) {
        if (!blocks_[b].remote.empty()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "a message to vertex ", ToString(topo.remote_id(blocks_[b].remote[0].remote)),
              " cannot be delivered: it is not local and no relayer is installed"));
        }
      }
    }
    const std::vector<uint32_t>& begin = topo.remote_partition_begin();
    // Calls add(r, message) for the messages along edges, in increasing remote index r (hence
    // in increasing position within each partition's slice).
    auto for_each_remote = [&](uint32_t q, auto&& add) {
      if constexpr (HasCombiner<P>) {
        for (uint32_t r = begin[q]; r < begin[q + 1]; ++r) {
          if (remote_has_[r]) add(r, remote_combined_[r]);
        }
      } else {
        for (uint32_t r = begin[q]; r < begin[q + 1]; ++r) {
          for (uint64_t i = r == 0 ? 0 : remote_end_[r - 1]; i < remote_end_[r]; ++i) {
            add(r, *remote_sorted_[i]);
          }
        }
      }
    };
    if constexpr (HasCombiner<P>) {
      remote_combined_.resize(topo.num_remote());
      remote_has_.assign(topo.num_remote(), 0);
      for (size_t b = 0; b < num_blocks_; ++b) {
        for (const RemoteEnvelope& e : blocks_[b].remote) {
          if (remote_has_[e.remote]) {
            P::Combine(remote_combined_[e.remote], e.message);
          } else {
            remote_combined_[e.remote] = e.message;
            remote_has_[e.remote] = 1;
          }
        }
      }
    } else {
      // A stable counting sort by remote index: a vertex's messages keep their sending order.
      remote_end_.assign(uint64_t{topo.num_remote()} + 1, 0);
      for (size_t b = 0; b < num_blocks_; ++b) {
        for (const RemoteEnvelope& e : blocks_[b].remote) ++remote_end_[e.remote + 1];
      }
      for (uint32_t r = 0; r < topo.num_remote(); ++r) remote_end_[r + 1] += remote_end_[r];
      remote_sorted_.resize(remote_end_.back());
      for (size_t b = 0; b < num_blocks_; ++b) {
        for (const RemoteEnvelope& e : blocks_[b].remote) {
          remote_sorted_[remote_end_[e.remote]++] = &e.message;
        }
      }
    }
    std::vector<OutgoingBatch> out = EncodeMessages<Message>(
        superstep, topo, std::span<const BlockBuffers>(blocks_.data(), num_blocks_),
        peers_.connected(), for_each_remote);
    for (size_t b = 0; b < num_blocks_; ++b) {
      blocks_[b].remote.clear();
      blocks_[b].by_id.clear();
    }
    for (uint32_t q = 0; q < out.size(); ++q) {
      if (out[q].count == 0) continue;
      auto st =
          relay_out_.Send<Message>(std::move(out[q].batch), out[q].count, begin[q + 1] - begin[q]);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  P program_;
  Graph<EdgeValue> graph_;
  std::vector<VertexValue> values_;
  std::vector<uint8_t> halted_;
  // Bit v: vertex v runs in the next compute (it has not halted, or it has messages).
  std::vector<uint64_t> awake_;
  // Inbox of the current superstep: one combined message per vertex, or a CSR of messages.
  std::vector<Message> inbox_;
  std::vector<uint8_t> has_message_;
  // Without a combiner: vertex v's messages are inbox_[inbox_begin_[v]...] (inbox_count_[v] of
  // them, 0 once it ran); the fill cursors; per bin, the targets of a sparse delivery (a bin
  // with fewer than 1 / kSparseBin messages per vertex), reused across supersteps.
  std::vector<uint64_t> inbox_begin_;
  std::vector<uint64_t> inbox_count_;
  std::vector<uint64_t> inbox_cursor_;
  std::vector<std::vector<uint32_t>> bin_targets_;
  static constexpr uint64_t kSparseBin = 8;

  size_t num_blocks_ = 0;
  uint32_t num_bins_ = 1;
  uint32_t bin_shift_ = 0;
  std::vector<BlockBuffers> blocks_;
  std::vector<Message> remote_combined_;
  std::vector<uint8_t> remote_has_;
  // Programs without a combiner: messages along edges to remote vertices, by remote index
  // (remote r's end at remote_end_[r] after the sort), for the superstep's flush.
  std::vector<uint64_t> remote_end_;
  std::vector<const Message*> remote_sorted_;
  // Broadcast programs: this superstep's published values by slot (local vertices, then the
  // relayed values of remote ones), and per other partition the local vertices with
  // out-neighbours there.
  std::vector<Message> published_;
  std::vector<uint8_t> has_published_;
  // Gathers: last superstep's published values, which compute reads (swapped with published_).
  std::vector<Message> gathered_;
  std::vector<uint8_t> has_gathered_;
  // Sum pulls: whether every in-neighbour published last superstep, so that every vertex with
  // in-edges has a message (Deliver), and those vertices as awake_'s words.
  bool pulled_all_ = false;
  std::vector<uint64_t> pulling_bits_;
  std::vector<std::vector<uint32_t>> boundary_;
  uint64_t published_count_ = 0;
  // Sum pulls: publishers with out-edges, and the local vertices with out-edges.
  uint64_t published_sources_ = 0;
  uint64_t local_sources_ = 0;
  uint64_t remote_published_count_ = 0;
  // Broadcast programs: whether a remote vertex is an in-neighbour of a local one (and so
  // publishes to this partition), and how many are.
  std::vector<uint8_t> remote_source_;
  uint64_t remote_sources_ = 0;
  // Min-combined broadcasts: push when the publishers' out-edges times this are fewer than all
  // in-edges (the direction-optimising rule; Beamer et al. 2012 use 14-15); remote vertex r's
  // local out-neighbours at remote_out_targets_[remote_out_offsets_[r]...]; this superstep's
  // remote publishers; the identity of min.
  static constexpr uint64_t kPullFactor = 15;
  std::vector<uint64_t> remote_out_offsets_;
  std::vector<uint32_t> remote_out_targets_;
  std::vector<EdgeValue> remote_out_weights_;  // beside the targets, for Along
  std::vector<uint32_t> remote_frontier_;
  Direction direction_ = Direction::kChoose;
  // A value that goes both ways (kBothDirections) on a graph that is not symmetric.
  bool both_ = false;
  uint64_t pushed_supersteps_ = 0;
  uint64_t pulled_supersteps_ = 0;
  // Min-combined broadcasts taking messages in any order (kAnyOrder): a frontier too large to
  // push goes out in pushes of about all edges / kPullFactor, least values first, chosen on a
  // sample of kHoldBackSample publishers (for SSSP on Kronecker scale 20, shares of 1/8 to 1/60
  // were within noise of each other, 1/4 and 1/50 slower before pushes were in place: 15 keeps one
  // rule for both); a published value held back is flagged kHeldBack (it was relayed already);
  // the edges of those held back after the last delivery (pending messages).
  static constexpr uint64_t kHoldBackSample = 2048;
  static constexpr uint8_t kHeldBack = 2;
  uint64_t held_back_supersteps_ = 0;
  uint64_t held_back_edges_ = 0;
  std::vector<std::pair<Message, uint64_t>> sample_;
  static Message NoMessage() {
    if constexpr (std::numeric_limits<Message>::has_infinity) {
      return std::numeric_limits<Message>::infinity();
    } else {
      return std::numeric_limits<Message>::max();
    }
  }
  // Vertex tracing (SetTrace).
  Tracer<P> tracer_;
  // Runs vertex v of a block (its bit in awake_ word w); false once the block failed. Inlined
  // into RunSuperstep's loop, which is then the loop it was before tracing, and into RunTraced.
  [[gnu::always_inline]] inline bool RunVertex(Context<P>& ctx, BlockBuffers& buf, uint32_t w,
                                               uint32_t v) {
    const std::span<const Message> msgs = MessagesOf(buf, v);
    bool halt = true;
    if (!halted_[v] || !msgs.empty()) {
      ++buf.active;
      ctx.vertex_ = v;
      ctx.halt_ = false;
      if constexpr (std::is_same_v<decltype(program_.Compute(ctx, msgs)), absl::Status>) {
        absl::Status st = program_.Compute(ctx, msgs);
        if (!st.ok()) {
          buf.Fail(absl::Status(st.code(), absl::StrCat("compute failed for vertex '",
                                                        std::string(topology().external_id(v)),
                                                        "': ", st.message())));
          return false;
        }
      } else {
        program_.Compute(ctx, msgs);
      }
      halt = ctx.halt_;
      halted_[v] = halt ? 1 : 0;
      buf.unhalted += halt ? 0 : 1;
      if (!buf.error.ok()) return false;
      ConsumeMessage(v);
    }
    if (halt) awake_[w] &= ~(uint64_t{1} << (v & 63));
    return true;
  }
  // RunSuperstep's loop for a block [begin, end) that holds a traced vertex: out of line, so that
  // the loop every other block runs is the only copy of RunVertex in RunSuperstep.
  [[gnu::noinline]] void RunTracedBlock(Context<P>& ctx, BlockBuffers& buf, uint32_t begin,
                                        uint32_t end) {
    for (uint32_t w = begin >> 6; w < (end + 63) >> 6; ++w) {
      for (uint64_t bits = awake_[w]; bits != 0; bits &= bits - 1) {
        const uint32_t v = (w << 6) + static_cast<uint32_t>(std::countr_zero(bits));
        if (!RunTraced(ctx, buf, w, v)) return;
      }
    }
  }
  // A traced block's vertex v, run and recorded if it is traced: its messages as compute sees
  // them, and what it sent. Off the compute loop's path (RunSuperstep).
  bool RunTraced(Context<P>& ctx, BlockBuffers& buf, uint32_t w, uint32_t v) {
    TracedVertex* t = tracer_.Find(v);
    if (t == nullptr) return RunVertex(ctx, buf, w, v);
    Tracer<P>::Received(*t, MessagesOf(buf, v));
    const uint64_t sent_before = buf.sent, active_before = buf.active;
    uint8_t had = 0;
    if constexpr (IsBroadcast<P>()) had = has_published_[v];
    const bool ok = RunVertex(ctx, buf, w, v);
    t->ran = buf.active != active_before;
    t->sent = buf.sent - sent_before;
    if constexpr (IsAnyOrder<P>()) {
      // A value held back and this one go together; Publish counts them as held back.
      if (had == kHeldBack && has_published_[v] == 1) t->sent += PublishedEdges(v);
    }
    return ok;
  }

  // The superstep whose messages WriteCheckpoint delivered ahead of it.
  static constexpr uint64_t kNotAhead = ~uint64_t{0};
  uint64_t delivered_ahead_ = kNotAhead;
  // Programs that declare kNeighbourhood: the lists, from superstep 0 on.
  std::optional<Neighbourhood> neighbourhood_;
  // Programs that declare kNeighbourDegrees: k by slot, from superstep 0 on.
  std::vector<uint32_t> slot_degree_;
  absl::Status BuildSlotDegrees(Exchange* exchange) {
    absl::Status bad_peer;
    auto degrees = SlotDegrees(topology(), exchange, peers_.mirror(), &bad_peer);
    if (!degrees.ok()) return degrees.status();
    if (!bad_peer.ok()) return bad_peer;
    slot_degree_ = std::move(*degrees);
    return absl::OkStatus();
  }

  AggregatorRegistry aggregators_;
  // Where non-local messages go, what other partitions relayed, and the positions agreed with
  // them (engine/relay_out.h, relay_in.h, peers.h).
  RelayOut relay_out_;
  RelayInbox relay_in_;
  Peers peers_;
  double relay_decode_seconds_ = 0;  // of the superstep under way (StepStats)
};

}  // namespace lockstep::bsp
