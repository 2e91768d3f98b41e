#pragma once

#include <atomic>
#include <concepts>
#include <span>
#include <type_traits>

#include "absl/status/status.h"
#include "lockstep/bsp/aggregator.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/executor.h"

namespace lockstep::bsp {

template <class P>
class Context;
template <class P>
class PartitionView;

// A vertex program names its vertex value, edge value and message types and computes:
//
//   struct MyProgram {
//     using VertexValue = double;
//     using EdgeValue = bsp::NoValue;          // or double, float, ...
//     using Message = double;
//     void Compute(bsp::Context<MyProgram>& ctx, std::span<const Message> messages) const;
//     // optional:
//     static void Combine(Message& into, const Message& m);   // a commutative, associative merge
//     static constexpr bool kNeedsInEdges = true;             // ctx.in_slots() / in_values()
//     static constexpr bool kBroadcast = true;  // only ever sends one value to all out-neighbours
//                                               // (with a combiner): runs as a pull (see below)
//     static bool Improves(const VertexValue& value, const Message& m);  // a broadcast program
//                                  // whose combiner is min: push or pull per superstep (below)
//     static constexpr bool kBothDirections = true;  // with Improves: to in-neighbours too
//     static constexpr bool kAddsInPlace = true;  // Combine is `into += m` on unsigned integers
//     VertexValue Init(const bsp::Context<MyProgram>& ctx) const;  // initial value of a vertex
//     void Register(bsp::AggregatorRegistry& aggregators);    // aggregators, before superstep 0
//     void PartitionStep(bsp::PartitionView<MyProgram>& part) const;  // over the whole partition
//                                  // in superstep 0, before its Compute (see HasPartitionStep)
//     absl::Status PreStep(uint64_t superstep);               // callbacks; they run on every
//     absl::Status PostStep(const bsp::StepStats& stats);     // process of a distributed job with
//     bool KeepRunning(const bsp::StepStats& stats);          // the same (global) values
//   };
//
// Compute may also return absl::Status; an error fails the job with the vertex's ID in it.
template <class P>
concept VertexProgram = std::copy_constructible<typename P::Message> &&
    std::movable<typename P::VertexValue> && HasCodec<typename P::Message> &&
    HasCodec<typename P::VertexValue> &&
    requires(const P& p, Context<P>& ctx, std::span<const typename P::Message> messages) {
  typename P::EdgeValue;
  p.Compute(ctx, messages);
};

template <class P>
concept HasCombiner = requires(typename P::Message& into, const typename P::Message& m) {
  P::Combine(into, m);
};

// A broadcast program sends, per superstep, at most one value per vertex and only to all of its
// out-neighbours, under a combiner (PageRank; the propagation steps of BFS/SSSP/WCC). The engine
// then runs it as a pull (docs/design.md §3.4): a vertex publishes its value and every vertex
// combines the values its in-neighbours published, in in-edge order — no message buffers, the
// memory traffic of a sparse matrix-vector product, and the same result as the push.
template <class P>
constexpr bool IsBroadcast() {
  if constexpr (requires { P::kBroadcast; }) {
    return P::kBroadcast;
  } else {
    return false;
  }
}

// A broadcast program may declare how its published value follows from its value and out-degree,
// `Message Regenerate(const VertexValue& value, uint32_t out_degree) const`, returning exactly
// what Compute published (PageRank: value / out-degree). Its checkpoints then hold values only,
// and the published values are regenerated on restore (docs/design.md §7.6).
template <class P>
constexpr bool RegeneratesPublished() {
  return requires(const P& p, const typename P::VertexValue& value, uint32_t out_degree) {
    { p.Regenerate(value, out_degree) } -> std::convertible_to<typename P::Message>;
  };
}

// A broadcast program without a combiner is a gather (label propagation: CDLP): Compute receives
// the values its in-neighbours published in the superstep before, in in-edge order, read from
// where they were published (docs/design.md §3.4): no message buffers. With kBothDirections its
// out-neighbours' values follow. On a symmetric graph each neighbour's value comes once per edge
// between them, in out-edge order.
template <class P>
constexpr bool IsGather() {
  return IsBroadcast<P>() && !HasCombiner<P>;
}

// A broadcast program whose combiner is the minimum under operator< (BFS, SSSP, WCC) may declare
// Improves(value, m): whether message m can change a vertex whose value is `value`. The contract:
// it is monotone (false for m means false for every m' with !(m' < m)); a vertex whose messages
// all fail to improve it must end Compute as if it had not been woken: its value, its sends and
// the aggregators unchanged, and halted (so that not waking it is the same); and no message is a
// NaN. The engine then delivers only improving messages, so a vertex whose value no message can
// lower is not woken, and it chooses per superstep how to deliver (docs/design.md §3.4): it pushes
// each published value along the publisher's out-edges when few vertices published, and otherwise
// pulls, skipping the vertices the superstep's least published value cannot improve and stopping a
// vertex's gather at that least value. The minimum does not depend on the order of combining, so
// the answer does not depend on the direction, the thread count or the worker count.
template <class P>
constexpr bool HasImproves() {
  return requires(const typename P::VertexValue& v, const typename P::Message& m) {
    { P::Improves(v, m) } -> std::convertible_to<bool>;
  };
}

// A min-combined broadcast program (HasImproves) or a gather (IsGather) may declare
// kBothDirections = true: its value goes to its in-neighbours as well as its out-neighbours (WCC,
// CDLP, which ignore edge direction).
template <class P>
constexpr bool IsBothDirections() {
  if constexpr (requires { P::kBothDirections; }) {
    return P::kBothDirections;
  } else {
    return false;
  }
}

// A program that sends messages (not a broadcast) whose Message is an unsigned integer and whose
// Combine is `into += m` may declare kAddsInPlace = true (LCC's counts): a message to a local
// vertex is then added into the target's sum as it is sent (an atomic add), where other programs
// keep it in a bin until the delivery. Sums of unsigned integers do not depend on the order of
// their terms, so the answer stays the same at any thread count; the memory of one envelope per
// message is saved, which for LCC is up to one per neighbour-list entry.
template <class P>
constexpr bool AddsInPlace() {
  if constexpr (requires { P::kAddsInPlace; }) {
    using M = typename P::Message;
    static_assert(!P::kAddsInPlace || (std::is_unsigned_v<M> && !IsBroadcast<P>() &&
                                       std::atomic_ref<M>::is_always_lock_free),
                  "kAddsInPlace: an unsigned integer Message, sent (not broadcast), added");
    return P::kAddsInPlace;
  } else {
    return false;
  }
}

// A program may declare kNeighbourhood = true (triangle-like kernels: LCC, triangle counting):
// from superstep 0's Compute on (not in Init) each vertex has its distinct neighbours ranked above
// it in degree order, sorted by rank (k, then global index), and the same lists of those
// neighbours, local or remote (neighbourhood.h): ctx.neighbour_count(), ctx.higher_neighbours(),
// ctx.higher_neighbours_of(i), ctx.higher_neighbour_slot(i), intersected with ForEachCommon.
template <class P>
constexpr bool UsesNeighbourhood() {
  if constexpr (requires { P::kNeighbourhood; }) {
    return P::kNeighbourhood;
  } else {
    return false;
  }
}

// A program may declare kNeighbourDegrees = true (degree-ordered kernels: largest-degree-first
// colouring): from superstep 0's Compute on (not in Init) ctx.degree() and ctx.SlotDegree(slot)
// give the number of distinct neighbours other than itself (k) of the vertex and of the vertex at
// any of its edges' slots, local or remote (exchanged once at set-up: 4 bytes a vertex, no
// messages).
template <class P>
constexpr bool UsesNeighbourDegrees() {
  if constexpr (requires { P::kNeighbourDegrees; }) {
    return P::kNeighbourDegrees;
  } else {
    return false;
  }
}

// A program may declare a partition step (libgrape-lite's PEval, Blogel's block step;
// docs/design.md §3.9): `void PartitionStep(bsp::PartitionView<P>& part) const`, run once in
// superstep 0 over the partition as a whole, after Init and before Compute (a job restored at a
// later superstep has its effects in the checkpoint). It may set any vertex's value and halt
// vertices, which then sit out superstep 0's Compute until a message wakes them. Its contract: the
// job's answer must not depend on how the graph is split into partitions (local mode is one
// partition; the vertex program's supersteps carry values between them), and the step's own
// result must not depend on the thread count. WCC links each partition's components with a
// union-find and leaves awake only the vertices with an edge to another partition.
template <class P>
constexpr bool HasPartitionStep() {
  return requires(const P& p, PartitionView<P>& part) { p.PartitionStep(part); };
}

// Whether P asks for in-edges itself (kNeedsInEdges), for its own use of ctx.in_slots().
template <class P>
constexpr bool AsksInEdges() {
  if constexpr (requires { P::kNeedsInEdges; }) {
    return P::kNeedsInEdges;
  } else {
    return false;
  }
}

template <class P>
constexpr bool NeedsInEdges() {
  return AsksInEdges<P>() || IsBroadcast<P>() || UsesNeighbourhood<P>() ||
         UsesNeighbourDegrees<P>();
}

// A min-combined broadcast program (HasImproves) whose message changes along an edge declares
// Along(m, w): what its published m is worth at the far end of an edge of value w (SSSP: cost +
// weight). It must never lower a message (!(Along(m, w) < m)) and keep the order of messages.
template <class P>
constexpr bool HasAlong() {
  return requires(const typename P::Message& m, const typename P::EdgeValue& w) {
    { P::Along(m, w) } -> std::convertible_to<typename P::Message>;
  };
}

// Whether P is a broadcast program combined by min that declares Improves: it is then pushed or
// pulled per superstep (docs/design.md §3.4).
template <class P>
constexpr bool IsMinBroadcast() {
  return IsBroadcast<P>() && HasImproves<P>();
}

// A broadcast program with any other combiner (PageRank's sum): always a pull over its in-edges
// (docs/design.md §3.4).
template <class P>
constexpr bool IsSumPull() {
  return IsBroadcast<P>() && !IsGather<P>() && !IsMinBroadcast<P>();
}

// A min-combined broadcast program (HasImproves) may declare kAnyOrder = true: its vertices end
// at the least of all messages ever offered to them, whatever the supersteps they arrive in (a
// label-correcting fixpoint: BFS, SSSP, WCC; not a program that reads the superstep number after
// superstep 0). The engine may then hold a published value back to a later superstep and deliver
// the least values first (docs/design.md §3.4), as delta-stepping orders SSSP's relaxations: fewer
// values are offered that a smaller one overtakes later. Its Along must keep the order of messages.
template <class P>
constexpr bool IsAnyOrder() {
  if constexpr (requires { P::kAnyOrder; }) {
    return P::kAnyOrder;
  } else {
    return false;
  }
}

// Whether a min-combined broadcast's push can combine a value into its target in place, with a
// compare-and-swap (an arithmetic message); otherwise the push bins its offers by target and
// each bin's targets take the least.
template <class P>
constexpr bool PushesInPlace() {
  if constexpr (IsMinBroadcast<P>() && std::is_arithmetic_v<typename P::Message>) {
    return std::atomic_ref<typename P::Message>::is_always_lock_free;
  } else {
    return false;
  }
}

// Whether P needs in-edges on a graph that is, or is not, symmetric. A min-combined broadcast that
// does not ask for them itself (kNeedsInEdges) gathers over the out-edges of a symmetric graph,
// which are its in-edges: the engine then keeps its gather's plain out-edge path (a symmetric
// graph's in-edges, when built, are its out-edges anyway: Topology::in_shared).
template <class P>
constexpr bool NeedsInEdges(bool symmetric) {
  if (symmetric && (IsMinBroadcast<P>() || IsGather<P>()) && !AsksInEdges<P>()) return false;
  // Neighbour lists of a symmetric graph are its out-neighbours.
  if (symmetric && (UsesNeighbourhood<P>() || UsesNeighbourDegrees<P>()) && !AsksInEdges<P>() &&
      !IsBroadcast<P>()) {
    return false;
  }
  return NeedsInEdges<P>();
}

}  // namespace lockstep::bsp
