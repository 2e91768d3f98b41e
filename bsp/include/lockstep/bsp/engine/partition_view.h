#pragma once

// What a program's partition step sees (program.h, HasPartitionStep; docs/design.md §3.9): the
// partition as a whole, before superstep 0's Compute. It reads the partition's part of the graph,
// writes any vertex values, and says which vertices sit out superstep 0 (halted, as if they had
// voted to halt: a message wakes them). Local mode is one partition holding every vertex, so a
// step there sees the whole graph; a distributed job's partitions each run theirs alone, and the
// vertex program's supersteps carry values across partitions.

#include <bit>
#include <cstdint>
#include <span>

#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/topology.h"
#include "tbb/blocked_range.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

template <class P>
class PartitionView {
 public:
  using VertexValue = typename P::VertexValue;

  explicit PartitionView(EngineState<P>& state) : state_(state) {}

  const Topology& topology() const { return state_.topology(); }
  // The partition's edges with their values (out_values(v) beside topology().out_slots(v)).
  const Graph<typename P::EdgeValue>& graph() const { return state_.graph(); }
  uint32_t num_local() const { return topology().num_local(); }
  // Every local vertex's value, by local index (Init's, or a restored checkpoint's).
  std::span<VertexValue> values() { return state_.values_; }

  // fn(v) for every local vertex v, in parallel (any order, any thread).
  template <class F>
  void ForEachVertex(F&& fn) const {
    tbb::parallel_for(tbb::blocked_range<uint32_t>(0, num_local()),
                      [&](const tbb::blocked_range<uint32_t>& r) {
                        for (uint32_t v = r.begin(); v != r.end(); ++v) fn(v);
                      });
  }

  // Halts every local vertex: the step's values are final, and none runs superstep 0.
  void HaltAll() {
    HaltUnless([](uint32_t) { return false; });
  }

  // Halts every local vertex v for which awake(v) is false: it sits out superstep 0 unless a
  // message wakes it later. awake runs in parallel, once per vertex.
  template <class F>
  void HaltUnless(F&& awake) {
    const uint32_t n = num_local();
    tbb::parallel_for(
        tbb::blocked_range<uint32_t>(0, (n + 63) / 64), [&](const tbb::blocked_range<uint32_t>& r) {
          for (uint32_t w = r.begin(); w != r.end(); ++w) {
            uint64_t word = state_.awake_[w];
            for (uint64_t bits = word; bits != 0; bits &= bits - 1) {
              const uint32_t v = (w << 6) + static_cast<uint32_t>(std::countr_zero(bits));
              if (awake(v)) continue;
              state_.halted_[v] = 1;
              word &= ~(uint64_t{1} << (v & 63));
            }
            state_.awake_[w] = word;
          }
        });
  }

 private:
  EngineState<P>& state_;
};

}  // namespace lockstep::bsp
