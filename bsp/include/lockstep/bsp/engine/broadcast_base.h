#pragma once

// What the three strategies of broadcast programs share (sum_pull.h, min_broadcast.h, gather.h;
// docs/design.md §3.4): a vertex publishes one value per superstep for all of its out-neighbours,
// and no message buffers are built. Values are kept by slot, local vertices first and then the
// remote ones whose values other partitions relay here, so that a gather reads one array with no
// branch on the slot's kind. Each published value goes once to every other partition that holds an
// out-neighbour of it (the boundary lists), and a checkpoint holds each vertex's published value
// unless the program regenerates it. S is the strategy (CRTP).

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/engine/peers.h"
#include "lockstep/bsp/engine/relay_out.h"
#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/program.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

template <class P, class S>
class BroadcastBase : public EngineState<P> {
 public:
  using typename EngineState<P>::VertexValue;
  using typename EngineState<P>::EdgeValue;
  using typename EngineState<P>::Message;
  // Published values, not messages (relay_in.h, checkpoint.h); a strategy that holds values back
  // says so.
  static constexpr bool kPublishes = true;
  static constexpr bool kHoldsBack = false;
  static constexpr bool kDecodesRunsInPlace = true;

  BroadcastBase(P program, Graph<EdgeValue> graph)
      : EngineState<P>(std::move(program), std::move(graph)) {
    static_assert(!IsBothDirections<P>() || IsMinBroadcast<P>() || IsGather<P>(),
                  "kBothDirections needs a min-combined broadcast (Improves, program.h) or a "
                  "gather");
    const Topology& topo = this->topology();
    const uint32_t n = topo.num_local();
    published_.resize(uint64_t{n} + topo.num_remote());
    has_published_.assign(uint64_t{n} + topo.num_remote(), 0);
    // Without in-edges the gather takes the out-edges, which is right only on a symmetric graph.
    if (!topo.has_in_edges() && !topo.symmetric() && n > 0) {
      throw std::invalid_argument(
          "a broadcast program needs in-edges on a graph that is not symmetric");
    }
    // A value that goes both ways on a symmetric graph goes along the out-edges alone: they are
    // the in-edges, and a minimum does not depend on their order.
    both_ = IsBothDirections<P>() && !topo.symmetric();
    FindSources();
  }

  // Hands this superstep's published values to the relayer, each once to every other partition
  // that has an out-neighbour of its vertex.
  absl::Status FlushRemote(uint64_t superstep) {
    for (uint32_t q = 0; q < boundary_.size(); ++q) {
      const std::vector<uint32_t>& boundary = boundary_[q];
      if (boundary.empty()) continue;
      OutgoingBatch out =
          EncodePublished(superstep, this->topology(), q, boundary, published_.data(),
                          has_published_.data(), this->peers_.connected());
      if (out.count == 0) continue;
      if (!this->relay_out_.has_relayer()) {
        return absl::FailedPreconditionError(
            "a value for another partition cannot be delivered: no relayer is installed");
      }
      auto st = this->relay_out_.template Send<Message>(std::move(out.batch), out.count,
                                                        static_cast<uint32_t>(boundary.size()));
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  // Relayed values (relay_in.h): remote vertex r's published value, at its slot.
  absl::StatusOr<uint32_t> TargetOfId(const VertexId& id, uint32_t from) const {
    const Topology& topo = this->topology();
    const uint32_t r = topo.FindRemote(id);
    if (r == kNoVertex || !remote_source_[r]) {
      return absl::NotFoundError(
          absl::StrCat("partition ", from, " relayed a value of vertex ", ToString(id),
                       ", which has no out-edge into partition ", topo.part()));
    }
    return r;
  }
  void Accept(uint32_t r, Message&& m) {
    const uint64_t slot = uint64_t{this->topology().num_local()} + r;
    published_[slot] = std::move(m);
    MarkRemotePublished(slot);
  }
  // Every value of remote vertices [first, first + count), in order: decoded in place.
  absl::Status AcceptRun(uint32_t first, size_t count, std::string_view& bytes, uint32_t from) {
    const uint64_t base = uint64_t{this->topology().num_local()} + first;
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

  // The relay's positions (peers.h): the boundary lists, checked by digest.
  absl::StatusOr<absl::Status> AgreePositions(Exchange& exchange) {
    return this->peers_.AgreeByDigest(exchange, this->topology(), boundary_, remote_source_);
  }

  // Checkpoint hooks (checkpoint.h): each vertex's published value, unless the program
  // regenerates it from the value and out-degree.
  uint8_t CheckpointFlag(uint32_t v) const {
    return has_published_[v] != 0 ? kCheckpointPublished : 0;
  }
  void WriteExtra(std::string& extra) const {
    if constexpr (!RegeneratesPublished<P>()) {
      for (uint32_t v = 0; v < this->topology().num_local(); ++v) {
        if (has_published_[v] != 0) Codec<Message>::Encode(published_[v], extra);
      }
    }
  }
  absl::Status RestoreExtra(uint8_t f, uint32_t v, const VertexId& id, const VertexValue& value,
                            const CheckpointFile& file, uint64_t i, std::string_view& extra) {
    if (!(f & kCheckpointPublished)) return absl::OkStatus();
    Message m;
    if constexpr (RegeneratesPublished<P>()) {
      m = this->program_.Regenerate(value, file.out_degree(i));
    } else if (!Codec<Message>::Decode(extra, m)) {
      return absl::DataLossError("has a published value that does not decode");
    }
    self().RestorePublished(v, id, std::move(m));
    return absl::OkStatus();
  }
  // A published value of local vertex v, or (v is kNoVertex) of remote vertex `id` if it
  // publishes to this partition.
  void RestorePublished(uint32_t v, const VertexId& id, Message m) {
    const uint64_t slot = RestoredSlot(v, id);
    if (slot == kNoSlot) return;
    published_[slot] = std::move(m);
    MarkRestored(slot);
  }

  // Tracing (Engine::RunTraced): the published flag before the vertex ran.
  uint8_t BeforeTraced(uint32_t v) const { return has_published_[v]; }
  uint64_t SendsNotCounted(uint32_t /*v*/, uint8_t /*before*/) const { return 0; }

 protected:
  static constexpr uint64_t kNoSlot = ~uint64_t{0};

  // The slots vertex v gathers from: its in-slots; or, on a symmetric graph built without them for
  // a min-combined broadcast or a gather (NeedsInEdges(symmetric), program.h), its out-slots,
  // which are the same vertices.
  std::span<const uint32_t> PullSlots(uint32_t v) const {
    const Topology& topo = this->topology();
    return topo.has_in_edges() ? topo.in_slots(v) : topo.out_slots(v);
  }
  // The edge values beside PullSlots(v), for a message that changes along an edge (HasAlong).
  std::span<const EdgeValue> PullValues(uint32_t v) const {
    return this->topology().has_in_edges() ? this->graph_.in_values(v) : this->graph_.out_values(v);
  }
  std::span<const uint32_t> AllPullSlots() const {
    const Topology& topo = this->topology();
    return topo.has_in_edges() ? topo.all_in_slots() : topo.all_out_slots();
  }
  // The edges a value published by local vertex v goes along.
  uint64_t PublishedEdges(uint32_t v) const {
    return this->topology().out_degree(v) + (both_ ? this->topology().in_degree(v) : 0);
  }

  // Counts a relayed value at a remote slot (held back before, it was counted already).
  void MarkRemotePublished(uint64_t slot) {
    remote_published_count_ += 1 - has_published_[slot];
    has_published_[slot] = 1;
  }
  // The slot a restored value of (v, id) goes to, or kNoSlot for a remote vertex that does not
  // publish here; and the mark of a value restored there.
  uint64_t RestoredSlot(uint32_t v, const VertexId& id) const {
    if (v != kNoVertex) return v;
    const uint32_t r = this->topology().FindRemote(id);
    if (r == kNoVertex || !remote_source_[r]) return kNoSlot;
    return uint64_t{this->topology().num_local()} + r;
  }
  void MarkRestored(uint64_t slot) {
    if (slot >= this->topology().num_local()) {
      remote_published_count_ += 1 - has_published_[slot];
    }
    has_published_[slot] = 1;
  }

  // This superstep's published values by slot (local vertices, then the relayed values of remote
  // ones), flagged 1 (a strategy that holds values back flags those 2).
  std::vector<Message> published_;
  std::vector<uint8_t> has_published_;
  // The remote values relayed (or restored) since the last delivery.
  uint64_t remote_published_count_ = 0;
  // Whether a remote vertex is an in-neighbour of a local one (and so publishes to this
  // partition), and how many are; per other partition, the local vertices with out-neighbours
  // there (boundary_, in global-index order once the peers agreed).
  std::vector<uint8_t> remote_source_;
  uint64_t remote_sources_ = 0;
  PartitionLists boundary_;
  // A value that goes both ways (kBothDirections) on a graph that is not symmetric.
  bool both_ = false;

 private:
  S& self() { return static_cast<S&>(*this); }

  // The remote vertices that publish to this partition (its remote in-neighbours: a remote vertex
  // that is only an out-neighbour never sends a value here), and the boundary lists.
  void FindSources() {
    const Topology& topo = this->topology();
    const uint32_t n = topo.num_local();
    const uint32_t num_remote = topo.num_remote();
    const uint32_t parts = static_cast<uint32_t>(topo.split().size());
    // On a symmetric graph every remote vertex is a source: the remote table holds only the far
    // ends of the part's edges (Topology::Build), and each such edge is an out-edge of its local
    // end, so an in-edge of it too. Otherwise one pass over the in-slots with no branch per edge:
    // a local slot marks the spare last entry.
    const bool every_remote_a_source = topo.symmetric();
    if (num_remote > 0) {
      remote_source_.assign(uint64_t{num_remote} + 1, every_remote_a_source ? 1 : 0);
      if (!every_remote_a_source) {
        for (uint32_t slot : AllPullSlots()) {
          remote_source_[std::min<uint32_t>(slot - n, num_remote)] = 1;
        }
        if (both_) {
          for (uint32_t slot : topo.all_out_slots()) {
            remote_source_[std::min<uint32_t>(slot - n, num_remote)] = 1;
          }
        }
      }
    }
    if (parts > 1) FindBoundary(parts);
    if (num_remote > 0) remote_source_.pop_back();
    remote_sources_ =
        static_cast<uint64_t>(std::count(remote_source_.begin(), remote_source_.end(), uint8_t{1}));
  }

  // boundary_[q] for each partition q of `parts`: the local vertices with an out-neighbour in q
  // (or an in-neighbour, for a value that goes both ways), in increasing order (AgreeByDigest puts
  // them in global-index order, which is the same for a loaded part). Up to 64 partitions, each
  // vertex gathers the partitions of its out-neighbours as bits (no branch per edge) and is listed
  // once per bit.
  void FindBoundary(uint32_t parts) {
    const Topology& topo = this->topology();
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
};

}  // namespace lockstep::bsp
