#pragma once

// What the partition steps of the single-source apps share (docs/design.md §3.9): a
// direction-optimising breadth-first search over a partition's own edges, and where it runs.
#include <cstdint>
#include <span>

#include "lockstep/bsp/topology.h"

namespace lockstep::apps::common {

// Gives every local vertex the source reaches along local out-edges its hop count from the
// source; the others keep `unreached`, which every entry of `depth` must hold on entry. Any thread
// count gives the same levels.
template <class T>
void SearchLevels(const bsp::Topology& t, uint32_t source, std::span<T> depth, T unreached);

// Whether a single-source partition step searches this partition: only where no edge leaves or
// enters it (local mode's one partition), so that every value it finds is final. Across a cut, a
// search over the partition's own edges overestimates the vertices a shorter path reaches through
// another partition, and the supersteps that correct them cost more than those it saves
// (distributed BFS took 4.7x as long with it: bench/README.md).
inline bool SearchesAlone(const bsp::Topology& t) { return t.num_remote() == 0; }

}  // namespace lockstep::apps::common
