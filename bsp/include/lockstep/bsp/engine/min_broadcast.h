#pragma once

// The message strategy of a broadcast program combined by the minimum that declares Improves
// (IsMinBroadcast: BFS, SSSP, WCC; docs/design.md §3.4). Only improving messages are delivered,
// so a vertex no message can lower is not woken, and each superstep chooses, as Beamer's
// direction-optimising BFS does, how to deliver: when the publishers' edges are few against all
// edges, each published value is pushed along its publisher's edges (a compare-and-swap minimum
// into its target, or for other messages an envelope in the publisher's block's bin of the
// target); otherwise every vertex pulls, skipped if the superstep's least published value cannot
// improve it and stopping at that value. A program that takes its messages in any order
// (kAnyOrder) pushes the least values of a frontier too large to push and holds the others back,
// as delta-stepping orders its relaxations. The minimum does not depend on the direction or the
// order, so neither does the answer.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/engine/broadcast_base.h"
#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/program.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

// How a min-combined broadcast's superstep delivers: kChoose follows the direction-optimising
// rule; tests force one direction.
enum class DeliveryDirection { kChoose, kPush, kPull };

template <class P>
class MinBroadcast : public BroadcastBase<P, MinBroadcast<P>> {
  using Base = BroadcastBase<P, MinBroadcast<P>>;

 public:
  using typename Base::Block;
  using typename Base::EdgeValue;
  using typename Base::Message;
  using Direction = DeliveryDirection;
  static constexpr bool kHoldsBack = IsAnyOrder<P>();
  // A value held back meets a relayed one: they combine, so no run is decoded in place.
  static constexpr bool kDecodesRunsInPlace = !IsAnyOrder<P>();
  // The combined inbox of pushes, the frontier and up to one remote publisher's out-edge (target
  // and edge value) per edge, beside the published values and their flags.
  static constexpr PeakBytes kPeakBytes{
      .per_vertex = sizeof(Message) + 1 + 4 + 2 * (sizeof(Message) + 1),
      .per_edge = 4 + (std::is_same_v<EdgeValue, NoValue> ? 0 : sizeof(EdgeValue))};

  MinBroadcast(P program, Graph<EdgeValue> graph) : Base(std::move(program), std::move(graph)) {
    static_assert(!IsBothDirections<P>() || !HasAlong<P>(),
                  "a value that changes along an edge goes one way (kBothDirections, Along)");
    const uint32_t n = this->topology().num_local();
    inbox_.resize(n);
    if constexpr (PushesInPlace<P>()) std::fill(inbox_.begin(), inbox_.end(), NoMessage());
    has_message_.assign(n, 0);
    frontiers_.resize(this->num_blocks_);
    FindRemoteOut();
  }

  void SetDirection(Direction d) { direction_ = d; }
  // The supersteps whose values were pushed, pulled, and (kAnyOrder) partly held back, so far.
  uint64_t pushed_supersteps() const { return pushed_supersteps_; }
  uint64_t pulled_supersteps() const { return pulled_supersteps_; }
  uint64_t held_back_supersteps() const { return held_back_supersteps_; }

  // Compute publishes v's value (Context::SendToAllNeighbors); the value's vertex joins its
  // block's frontier.
  void SendToAll(Block& buf, size_t block, uint32_t v, const Message& m) {
    Frontier& frontier = frontiers_[block];
    const uint64_t edges = this->PublishedEdges(v);
    const uint8_t had = this->has_published_[v];
    if (!had) {
      frontier.vertices.push_back(v);
      frontier.edges += edges;
    }
    Message& published = this->published_[v];
    if (IsAnyOrder<P>() && had == kHeldBack) {
      P::Combine(published, m);  // with a value held back from an earlier superstep
    } else {
      published = m;
    }
    if constexpr (PushesInPlace<P>() && std::is_floating_point_v<Message>) {
      // -0 and +0 compare equal: one of them, so that which one a vertex gets never depends on
      // the order of combining.
      if (m == Message{0}) published = Message{0};
    }
    if (!frontier.least || published < *frontier.least) frontier.least = published;
    this->has_published_[v] = 1;
    buf.sent += had == kHeldBack ? 0 : edges;  // counted as held back (EndCompute)
  }
  // After compute: values held back are messages still to deliver, so the job goes on.
  void EndCompute(StepStats& stats) { stats.messages += held_back_edges_; }

  // Vertex v's combined message of this superstep, if it has one.
  std::span<const Message> MessagesOf(size_t /*block*/, uint32_t v) const {
    return has_message_[v] ? std::span<const Message>(&inbox_[v], 1) : std::span<const Message>();
  }
  // After v ran: its message is gone (an in-place push's target back at the identity of min), so
  // deliveries need not clear every vertex's.
  void Consume(uint32_t v) {
    has_message_[v] = 0;
    if constexpr (PushesInPlace<P>()) inbox_[v] = NoMessage();
  }

  // Last superstep's published values, pushed or pulled. No vertex has a message here: each that
  // had one ran and consumed it.
  void Deliver() {
    const Topology& topo = this->topology();
    FindRemoteFrontier();
    const Least least = FindLeast();
    const uint64_t all_edges =
        this->AllPullSlots().size() + (this->both_ ? topo.all_out_slots().size() : 0);
    bool push = direction_ == Direction::kChoose ? least.edges * kPullFactor < all_edges
                                                 : direction_ == Direction::kPush;
    std::optional<Message> limit;
    if constexpr (IsAnyOrder<P>()) {
      if (least.any && !push && direction_ == Direction::kChoose) {
        limit = HoldBackLimit(least.edges, all_edges / kPullFactor);
        push = limit.has_value();
      }
    }
    if (least.any && push) {
      ++pushed_supersteps_;
      Push(limit);
    } else if (least.any) {
      ++pulled_supersteps_;
      Pull(least.value);
    }
    if (limit) ++held_back_supersteps_;
    Retire(limit);
    this->remote_published_count_ = 0;
  }

  // Relayed values (relay_in.h): one that meets a value held back goes as their least.
  void Accept(uint32_t r, Message&& m) {
    const uint64_t slot = uint64_t{this->topology().num_local()} + r;
    if (IsAnyOrder<P>() && this->has_published_[slot]) {
      P::Combine(this->published_[slot], m);
    } else {
      this->published_[slot] = std::move(m);
    }
    this->MarkRemotePublished(slot);
  }

  // Checkpoint hooks (checkpoint.h, beside broadcast_base.h's): a restored value takes the least
  // of several; each remote vertex's value held back is written.
  void RestorePublished(uint32_t v, const VertexId& id, Message m) {
    const uint64_t slot = this->RestoredSlot(v, id);
    if (slot == Base::kNoSlot) return;
    if (this->has_published_[slot]) {
      P::Combine(this->published_[slot], m);
    } else {
      this->published_[slot] = std::move(m);
    }
    this->MarkRestored(slot);
  }
  void WriteHeld(CheckpointWriter& out) const {
    const Topology& topo = this->topology();
    const uint32_t n = topo.num_local();
    for (uint32_t r = 0; r < topo.num_remote(); ++r) {
      if (this->has_published_[uint64_t{n} + r] == kHeldBack) {
        Codec<Message>::Encode(this->published_[uint64_t{n} + r], out.Held(topo.remote_id(r)));
      }
    }
  }
  // Each block's frontier, edges and least, as its publishers would have left them.
  void AfterRestore() {
    for (size_t b = 0; b < this->num_blocks_; ++b) {
      Frontier& frontier = frontiers_[b];
      frontier.vertices.clear();
      frontier.edges = 0;
      frontier.least.reset();
      for (uint32_t v = this->BlockBegin(b); v < this->BlockEnd(b); ++v) {
        if (!this->has_published_[v]) continue;
        frontier.vertices.push_back(v);
        frontier.edges += this->PublishedEdges(v);
        if (!frontier.least || this->published_[v] < *frontier.least) {
          frontier.least = this->published_[v];
        }
      }
    }
  }

  // Tracing (Engine::RunTraced): a value held back and this one go together, counted as held
  // back when published.
  uint64_t SendsNotCounted(uint32_t v, uint8_t before) const {
    return before == kHeldBack && this->has_published_[v] == 1 ? this->PublishedEdges(v) : 0;
  }

 private:
  // Push when the publishers' out-edges times this are fewer than all in-edges (the
  // direction-optimising rule; Beamer et al. 2012 use 14-15).
  static constexpr uint64_t kPullFactor = 15;
  // kAnyOrder: a frontier too large to push goes out in pushes of about all edges / kPullFactor,
  // least values first, chosen on a sample of kHoldBackSample publishers (bench/README.md); a
  // published value held back is flagged kHeldBack (it was relayed already).
  static constexpr uint64_t kHoldBackSample = 2048;
  static constexpr uint8_t kHeldBack = 2;

  // A block's publishers, their edges and their least value (cache lines of its own).
  struct alignas(64) Frontier {
    std::vector<uint32_t> vertices;
    uint64_t edges = 0;
    std::optional<Message> least;
  };
  // The superstep's least published value, if any, and the edges its publishers' values go along.
  struct Least {
    bool any = false;
    Message value{};
    uint64_t edges = 0;
  };

  // The identity of min.
  static Message NoMessage() {
    if constexpr (std::numeric_limits<Message>::has_infinity) {
      return std::numeric_limits<Message>::infinity();
    } else {
      return std::numeric_limits<Message>::max();
    }
  }
  // Whether a published value goes out in this superstep: all do, or those up to `limit`.
  static bool Goes(const std::optional<Message>& limit, const Message& m) {
    return !limit || !(*limit < m);
  }
  uint64_t RemoteOutEdges(uint32_t r) const {
    return remote_out_offsets_[r + 1] - remote_out_offsets_[r];
  }

  // For each remote vertex, the local vertices it is an in-neighbour of (or an out-neighbour, for
  // a value that goes both ways), along which a pushed value of it goes.
  void FindRemoteOut() {
    const Topology& topo = this->topology();
    const uint32_t n = topo.num_local();
    const uint32_t num_remote = topo.num_remote();
    if (num_remote == 0) return;
    remote_out_offsets_.assign(uint64_t{num_remote} + 1, 0);
    for (uint32_t slot : this->AllPullSlots()) {
      if (slot >= n) ++remote_out_offsets_[slot - n + 1];
    }
    if (this->both_) {
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
      const auto slots = this->PullSlots(v);
      const auto weights = this->PullValues(v);
      for (size_t i = 0; i < slots.size(); ++i) {
        if (slots[i] < n) continue;
        if constexpr (HasAlong<P>()) remote_out_weights_[at[slots[i] - n]] = weights[i];
        remote_out_targets_[at[slots[i] - n]++] = v;
      }
      if (this->both_) {
        for (uint32_t slot : topo.out_slots(v)) {
          if (slot >= n) remote_out_targets_[at[slot - n]++] = v;
        }
      }
    }
  }

  // The remote vertices whose values were relayed (or held back) for this delivery.
  void FindRemoteFrontier() {
    const uint32_t n = this->topology().num_local();
    remote_frontier_.clear();
    for (uint32_t r = 0; r < this->topology().num_remote(); ++r) {
      if (this->has_published_[uint64_t{n} + r]) remote_frontier_.push_back(r);
    }
  }
  // The least published value and the publishers' edges: the local ones gathered per block as
  // they published, then the remote ones along the local edges they feed.
  Least FindLeast() const {
    const uint32_t n = this->topology().num_local();
    Least least;
    auto consider = [&](const Message& m) {
      if (!least.any || m < least.value) least.value = m;
      least.any = true;
    };
    for (const Frontier& frontier : frontiers_) {
      if (frontier.least) consider(*frontier.least);
      least.edges += frontier.edges;
    }
    for (uint32_t r : remote_frontier_) {
      consider(this->published_[uint64_t{n} + r]);
      least.edges += RemoteOutEdges(r);
    }
    return least;
  }

  // Offers m to local vertex v if it improves it: a compare-and-swap minimum into the target; or,
  // for other messages, an envelope in the publisher's block's bin of the target (propagation
  // blocking), of which each bin's targets then take the least.
  [[gnu::always_inline]] inline void Offer(Block& buf, uint32_t v, const Message& m) {
    if (!P::Improves(this->values_[v], m)) return;
    if constexpr (PushesInPlace<P>()) {
      std::atomic_ref<Message> into(inbox_[v]);
      Message now = into.load(std::memory_order_relaxed);
      while (m < now && !into.compare_exchange_weak(now, m, std::memory_order_relaxed)) {
      }
      std::atomic_ref<uint8_t> has(has_message_[v]);
      if (has.load(std::memory_order_relaxed) == 0 &&
          has.exchange(1, std::memory_order_relaxed) == 0) {
        this->WakeShared(v);
      }
    } else {
      buf.bins[v >> this->bin_shift_].push_back({v, m});
    }
  }

  // Pushes the values that go out along their publishers' edges: a block's frontier per task, and
  // the relayed values along the remote vertices' edges into the last block's bins.
  void Push(const std::optional<Message>& limit) {
    tbb::parallel_for(size_t{0}, this->num_blocks_ + 1, [&](size_t b) {
      if (b < this->num_blocks_) {
        PushBlock(b, limit);
      } else {
        PushRemote(limit);
      }
    });
    if constexpr (!PushesInPlace<P>()) this->CombineBins(inbox_, has_message_);
  }
  void PushBlock(size_t b, const std::optional<Message>& limit) {
    const Topology& topo = this->topology();
    const uint32_t n = topo.num_local();
    Block& buf = this->blocks_[b];
    for (uint32_t u : frontiers_[b].vertices) {
      if (!Goes(limit, this->published_[u])) continue;
      const Message m = this->published_[u];
      const auto slots = topo.out_slots(u);
      if constexpr (HasAlong<P>()) {
        const auto weights = this->graph_.out_values(u);
        for (size_t i = 0; i < slots.size(); ++i) {
          if (slots[i] < n) Offer(buf, slots[i], P::Along(m, weights[i]));
        }
      } else {
        for (uint32_t slot : slots) {
          if (slot < n) Offer(buf, slot, m);
        }
      }
      if (this->both_) {
        for (uint32_t slot : topo.in_slots(u)) {
          if (slot < n) Offer(buf, slot, m);
        }
      }
    }
  }
  void PushRemote(const std::optional<Message>& limit) {
    const uint32_t n = this->topology().num_local();
    Block& buf = this->blocks_[this->num_blocks_];
    for (uint32_t r : remote_frontier_) {
      if (!Goes(limit, this->published_[uint64_t{n} + r])) continue;
      const Message m = this->published_[uint64_t{n} + r];
      for (uint64_t i = remote_out_offsets_[r]; i < remote_out_offsets_[r + 1]; ++i) {
        if constexpr (HasAlong<P>()) {
          Offer(buf, remote_out_targets_[i], P::Along(m, remote_out_weights_[i]));
        } else {
          Offer(buf, remote_out_targets_[i], m);
        }
      }
    }
  }

  // Every vertex that the least published value could improve gathers over the slots its
  // in-neighbours published at, a block per task.
  void Pull(const Message& least) {
    const Message* published = this->published_.data();
    const uint8_t* has_published = this->has_published_.data();
    tbb::parallel_for(size_t{0}, this->num_blocks_, [&](size_t b) {
      const uint32_t end = this->BlockEnd(b);
      for (uint32_t v = this->BlockBegin(b); v < end; ++v) {
        PullVertex(v, least, published, has_published);
      }
    });
  }
  // v's gather, skipped if the least value cannot improve v and stopped once it reaches that
  // value (no slot can lower it).
  [[gnu::always_inline]] inline void PullVertex(uint32_t v, const Message& least,
                                                const Message* published,
                                                const uint8_t* has_published) {
    has_message_[v] = 0;
    if (!P::Improves(this->values_[v], least)) return;
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
        const auto weights = this->PullValues(v);
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
    if (!gather(this->PullSlots(v)) && this->both_) gather(this->topology().out_slots(v));
    if (has && P::Improves(this->values_[v], combined)) {
      inbox_[v] = combined;
      has_message_[v] = 1;
      this->Wake(v);  // pulls run a block per task
    }
  }

  // The values that went out are done; those held back (above `limit`) stay published (kHeldBack:
  // already relayed to other partitions) and in their block's frontier, with its edges and least,
  // and their edges count as pending messages.
  void Retire(const std::optional<Message>& limit) {
    held_back_edges_ = 0;
    tbb::parallel_for(size_t{0}, this->num_blocks_, [&](size_t b) {
      Frontier& frontier = frontiers_[b];
      frontier.edges = 0;
      frontier.least.reset();
      if (!limit) {
        for (uint32_t v : frontier.vertices) this->has_published_[v] = 0;
        frontier.vertices.clear();
        return;
      }
      size_t kept = 0;
      for (uint32_t v : frontier.vertices) {
        if (Goes(limit, this->published_[v])) {
          this->has_published_[v] = 0;
          continue;
        }
        this->has_published_[v] = kHeldBack;
        frontier.vertices[kept++] = v;
        frontier.edges += this->PublishedEdges(v);
        if (!frontier.least || this->published_[v] < *frontier.least) {
          frontier.least = this->published_[v];
        }
      }
      frontier.vertices.resize(kept);
    });
    for (const Frontier& frontier : frontiers_) held_back_edges_ += frontier.edges;
    const uint32_t n = this->topology().num_local();
    for (uint32_t r : remote_frontier_) {
      const uint64_t slot = uint64_t{n} + r;
      if (Goes(limit, this->published_[slot])) {
        this->has_published_[slot] = 0;
      } else {
        this->has_published_[slot] = kHeldBack;
        held_back_edges_ += RemoteOutEdges(r);
      }
    }
  }

  // For a frontier of `edges` edges that would be pulled: the value up to which its least values
  // fill about `budget` edges, estimated from a sample of the publishers; none when they would all
  // go out anyway (their values are equal, as BFS's).
  std::optional<Message> HoldBackLimit(uint64_t edges, uint64_t budget) {
    const uint32_t n = this->topology().num_local();
    uint64_t count = remote_frontier_.size();
    for (const Frontier& frontier : frontiers_) count += frontier.vertices.size();
    const uint64_t stride = std::max<uint64_t>(1, count / kHoldBackSample);
    sample_.clear();
    uint64_t i = 0;
    for (const Frontier& frontier : frontiers_) {
      for (uint32_t u : frontier.vertices) {
        if (i++ % stride == 0) sample_.push_back({this->published_[u], this->PublishedEdges(u)});
      }
    }
    for (uint32_t r : remote_frontier_) {
      if (i++ % stride == 0)
        sample_.push_back({this->published_[uint64_t{n} + r], RemoteOutEdges(r)});
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

  // The combined inbox: pushes combine into it (in place, or from the bins), pulls set it.
  std::vector<Message> inbox_;
  std::vector<uint8_t> has_message_;
  // Per block, its publishers (a value held back stays in its block's frontier).
  std::vector<Frontier> frontiers_;
  // Remote vertex r's local out-neighbours at remote_out_targets_[remote_out_offsets_[r]...],
  // with the edge values beside them for Along; this superstep's remote publishers.
  std::vector<uint64_t> remote_out_offsets_;
  std::vector<uint32_t> remote_out_targets_;
  std::vector<EdgeValue> remote_out_weights_;
  std::vector<uint32_t> remote_frontier_;
  Direction direction_ = Direction::kChoose;
  uint64_t pushed_supersteps_ = 0;
  uint64_t pulled_supersteps_ = 0;
  uint64_t held_back_supersteps_ = 0;
  // The edges of the values held back after the last delivery (pending messages), and the
  // sample that chose the cut.
  uint64_t held_back_edges_ = 0;
  std::vector<std::pair<Message, uint64_t>> sample_;
};

}  // namespace lockstep::bsp
