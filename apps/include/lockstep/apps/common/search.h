#pragma once

// What the partition steps of the single-source apps share (docs/design.md §3.9): a
// direction-optimising breadth-first search over a partition's own edges, and which vertices must
// publish what it found.
#include <cstdint>
#include <span>

#include "lockstep/bsp/topology.h"

namespace lockstep::apps::common {

// Gives every local vertex the source reaches along local out-edges its hop count from the
// source; the others keep `unreached`, which every entry of `depth` must hold on entry. Any thread
// count gives the same levels.
template <class T>
void SearchLevels(const bsp::Topology& t, uint32_t source, std::span<T> depth, T unreached);

// Whether v has an out-edge to a vertex of another partition.
bool SendsAcross(const bsp::Topology& t, uint32_t v);

// Halts, after a partition step from the source, every vertex but those it reached (`reached(v)`)
// with an out-edge to another partition: they publish in superstep 0, the rest wait for a message.
// `searched` says whether the source is this partition's.
template <class Part, class Reached>
void HaltAllButSenders(Part& part, bool searched, Reached&& reached) {
  const bsp::Topology& t = part.topology();
  if (!searched || t.num_remote() == 0) {
    part.HaltUnless([](uint32_t) { return false; });
  } else {
    part.HaltUnless([&](uint32_t v) { return reached(v) && SendsAcross(t, v); });
  }
}

}  // namespace lockstep::apps::common
