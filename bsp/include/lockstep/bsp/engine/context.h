#pragma once

// What a vertex program's Compute sees of its vertex and the job (docs/design.md §3.1): one
// Context serves a whole block of vertices on one thread, and the engine (driver.h) sets its
// vertex before each call.

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "lockstep/bsp/aggregator.h"
#include "lockstep/bsp/engine/block.h"
#include "lockstep/bsp/neighbourhood.h"
#include "lockstep/bsp/program.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

template <class P>
class Engine;

// What compute sees of its vertex and the job. One Context serves a whole block of vertices on one
// thread; nothing in it locks or allocates per message.
template <class P>
class Context {
 public:
  using VertexValue = typename P::VertexValue;
  using EdgeValue = typename P::EdgeValue;
  using Message = typename P::Message;

  uint64_t superstep() const { return superstep_; }
  // The number of vertices of the whole graph (all partitions).
  uint64_t num_vertices() const { return engine_->topology().num_global(); }

  // The current vertex.
  uint32_t index() const { return vertex_; }
  const VertexId& id() const { return engine_->topology().id(vertex_); }
  // The vertex's rank in the whole input's ID order (integers numerically, then strings).
  uint32_t global_index() const { return engine_->topology().global_index(vertex_); }
  // A copy: the topology keeps the names packed, not as strings.
  std::string external_id() const { return std::string(engine_->topology().external_id(vertex_)); }
  VertexValue& value() { return engine_->values_[vertex_]; }
  const VertexValue& value() const { return engine_->values_[vertex_]; }

  // Out-edges as slots (see Topology) with their values; in-edges if the program asks for them.
  uint32_t out_degree() const { return engine_->topology().out_degree(vertex_); }
  std::span<const uint32_t> out_slots() const { return engine_->topology().out_slots(vertex_); }
  std::span<const EdgeValue> out_values() const { return engine_->graph_.out_values(vertex_); }
  // A min-combined broadcast has them only if it asks (kNeedsInEdges): on a symmetric graph the
  // engine builds none for it (NeedsInEdges(symmetric), program.h).
  std::span<const uint32_t> in_slots() const requires(AsksInEdges<P>() || IsSumPull<P>()) {
    return engine_->topology().in_slots(vertex_);
  }
  std::span<const EdgeValue> in_values() const requires(AsksInEdges<P>() || IsSumPull<P>()) {
    return engine_->graph_.in_values(vertex_);
  }
  // Programs that declare kNeighbourhood (program.h, neighbourhood.h): the vertex's number of
  // distinct neighbours other than itself (k), those ranked above it in degree order, where to
  // send to the i-th of them, and the i-th's own list.
  uint32_t neighbour_count() const requires(UsesNeighbourhood<P>()) {
    return engine_->neighbours_.lists().degree(vertex_);
  }
  NeighbourList higher_neighbours() const requires(UsesNeighbourhood<P>()) {
    return engine_->neighbours_.lists().Higher(vertex_);
  }
  uint32_t higher_neighbour_slot(uint32_t i) const requires(UsesNeighbourhood<P>()) {
    return engine_->neighbours_.lists().Slot(vertex_, i);
  }
  NeighbourList higher_neighbours_of(uint32_t i) const requires(UsesNeighbourhood<P>()) {
    return engine_->neighbours_.lists().HigherOfNeighbour(vertex_, i);
  }

  // Programs that declare kNeighbourDegrees (program.h): the number of distinct neighbours
  // other than itself of the vertex, and of the vertex at one of its edges' slots.
  uint32_t degree() const requires(UsesNeighbourDegrees<P>()) {
    return engine_->neighbours_.degree(vertex_);
  }
  uint32_t SlotDegree(uint32_t slot) const requires(UsesNeighbourDegrees<P>()) {
    return engine_->neighbours_.degree(slot);
  }

  // The UUID of the vertex at an edge's slot.
  const VertexId& SlotId(uint32_t slot) const { return engine_->topology().SlotId(slot); }
  uint32_t SlotGlobalIndex(uint32_t slot) const {
    return engine_->topology().SlotGlobalIndex(slot);
  }
  bool IsSelf(uint32_t slot) const { return slot == vertex_; }

  // Sends along an edge: the slot is one of out_slots() or in_slots().
  void Send(uint32_t slot, const Message& m) {
    static_assert(!IsBroadcast<P>(), "a broadcast program sends only with SendToAllNeighbors");
    engine_->Send(*buffers_, slot, m);
  }
  // Sends to all out-neighbours; a broadcast program publishes its value for them.
  void SendToAllNeighbors(const Message& m) { engine_->SendToAll(*buffers_, block_, vertex_, m); }
  // Sends to any vertex by ID. An ID that is neither local nor routable fails the job.
  void SendTo(const VertexId& target, const Message& m) {
    static_assert(!IsBroadcast<P>(), "a broadcast program sends only with SendToAllNeighbors");
    engine_->SendTo(*buffers_, vertex_, target, m);
  }

  void VoteToHalt() { halt_ = true; }

  template <class T, class Op>
  void Aggregate(Aggregator<T, Op>* aggregator, const std::type_identity_t<T>& x) {
    aggregator->AggregateIn(block_, x);
  }

 private:
  friend class Engine<P>;
  Engine<P>* engine_ = nullptr;
  BlockBuffers<Message>* buffers_ = nullptr;
  uint64_t superstep_ = 0;
  uint32_t vertex_ = 0;
  size_t block_ = 0;
  bool halt_ = false;
};

}  // namespace lockstep::bsp
