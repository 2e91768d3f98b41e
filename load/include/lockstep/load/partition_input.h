#pragma once

// What loading a worker's partition gives (docs/design.md §4.4), whatever the input's form: the
// partition's vertices and edges, its slice of the names and the figures of the load, from which
// the worker builds its graph (BuildPartGraph).

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/load_stats.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/load/names.h"
#include "lockstep/partition/range.h"

namespace lockstep::load {

struct PartitionLoadOptions {
  // The input a worker parses and sends per round (each round is one collective step): bounds the
  // memory a round's text and records take, whatever the size of the graph.
  uint64_t round_bytes = uint64_t{2} << 20;
  // The edges as PartEdges (PartitionInput::packed), which a worker holds in less memory while it
  // builds, instead of a GraphInput's arrays.
  bool packed_edges = true;
  // The questions about remote vertices each worker sends an owner per step (at least 1).
  uint64_t list_step = uint64_t{1} << 15;
  // Whether the build will lay out in-edges if the input turns out symmetric
  // (NeedsInEdges<P>(true); unset: as `in_edges`). A symmetric part with a self-loop whose
  // build needs in-edges keeps its stored edges; any other symmetric part's edges go oriented.
  std::optional<bool> in_edges_if_symmetric;
  // Whether a worker may receive an edge list's integer IDs raw (a byte per ID below a bound,
  // numbered once all have come) and, if all do, rank them by the union of bitmaps of the owned
  // IDs instead of a sort (docs/design.md §4.4). Off: through the vertex table, as other IDs.
  bool raw_integer_ids = true;
};

// One worker's share of a graph after a partitioned load: the stored edges with an end it owns,
// in input order (or, oriented, the directed edges from its vertices; PartEdges), between the
// vertices of `vertices` (those it owns and the remote ends of its edges; `input` has no external
// IDs), and the properties. The edges are in `edges` if `packed` (the vertices then in any order,
// with their local order), else in `input` (the vertices in global-index order). BuildPartGraph
// makes the worker's graph from it.
struct PartitionInput {
  bsp::GraphInput input;  // the properties, flags and weights, and unless packed the edges
  bsp::PartEdges edges;
  bool packed = false;
  bsp::PartVertices vertices;
  RankNames names;
  bsp::PartitionLoadStats stats;

  // Directed edges, reverses included (for a packed symmetric input that is not oriented, an
  // estimate: self-loops count twice).
  size_t num_edges() const {
    return packed ? edges.size() * (edges.symmetric && !edges.oriented ? 2 : 1) : input.num_edges();
  }
};

// Graph<E>::BuildPart of a loaded partition, emptying it.
template <class E>
absl::StatusOr<bsp::Graph<E>> BuildPartGraph(PartitionInput& part, const partition::Range& split,
                                             uint64_t rank, bool in_edges) {
  if (part.packed) {
    auto g = bsp::Graph<E>::BuildPart(part.edges, part.input.weights, std::move(part.vertices),
                                      split, rank, in_edges);
    part.input = bsp::GraphInput{};
    return g;
  }
  return bsp::Graph<E>::BuildPart(part.input, std::move(part.vertices), split, rank, in_edges);
}

}  // namespace lockstep::load
