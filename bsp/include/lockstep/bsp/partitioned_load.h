#pragma once

// Loading by partition (docs/design.md §4): every worker of a distributed job reads a share of the
// input, sends each vertex and edge to the worker that owns it, and builds its part of the graph
// from what it owns. No process holds or reads the whole graph, and each part equals what
// Topology::Build gives for the whole input (the same vertices, global indexes, CSR order and
// remote table), so results do not depend on how the graph was loaded.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/collectives.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/topology.h"

namespace lockstep::bsp {

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
  // IDs instead of a sort (docs/design.md §4). Off: through the vertex table, as other IDs.
  bool raw_integer_ids = true;
};

// The external IDs of one worker's range of global indexes: a partitioned load ranks all vertices
// by a distributed sort, and each worker keeps the sorted names of one contiguous range, so that a
// global index (a label) can be turned back into its name without any process holding all names.
class RankNames {
 public:
  RankNames() = default;
  RankNames(std::vector<uint64_t> range_starts, uint32_t rank, std::vector<uint64_t> ints,
            std::vector<std::string> texts)
      : starts_(std::move(range_starts)),
        rank_(rank),
        ints_(std::move(ints)),
        texts_(std::move(texts)) {}

  // starts()[p]..starts()[p + 1] is worker p's range; size workers + 1.
  const std::vector<uint64_t>& starts() const { return starts_; }
  // The worker that holds the name of global index g.
  uint32_t HolderOf(uint64_t g) const;
  // Appends the name of global index g, which must be in this worker's range.
  void Append(uint64_t g, std::string& out) const;
  uint64_t first() const { return starts_.empty() ? 0 : starts_[rank_]; }
  uint64_t size() const { return ints_.size() + texts_.size(); }

 private:
  std::vector<uint64_t> starts_;
  uint32_t rank_ = 0;
  std::vector<uint64_t> ints_;      // the range's integer IDs, which sort before all others
  std::vector<std::string> texts_;  // then the others
};

// How much of the input a worker handled: a partitioned load is meant to keep these a fraction of
// the whole (tests check it).
struct PartitionLoadStats {
  uint64_t lines_parsed = 0;    // lines of its shares of the files
  uint64_t records_parsed = 0;  // vertices and edges on those lines
  uint64_t vertices_known = 0;  // owned vertices and remote ends of its edges
  uint64_t edges_received = 0;  // stored edges with an end it owns
  uint64_t rounds = 0;
  uint64_t direct_rounds = 0;  // rounds of an edge list whose IDs its direct table covered
  // Edge records received with their partitions in their IDs (8 bytes each, not 12), and of those
  // the ones with 3-byte IDs (6 bytes each).
  uint64_t records_with_partitions = 0;
  uint64_t slim_records = 0;
  // Of the 6-byte ones, those whose IDs are less the load's base (IDs far from 0).
  uint64_t based_records = 0;
  bool oriented = false;  // the part's edges go to the build oriented (PartEdges)
  // Bytes of the received edges' blocks whose pages became the packed edges' (moved, not faulted
  // in afresh).
  uint64_t bytes_moved = 0;
  // Where the worker stopped receiving integer IDs raw (docs/design.md §4): it never did (not an
  // edge list, or turned off); at an announcement or a record it could not keep so; at the
  // ranking, because another worker had stopped; or it never stopped, and the global indexes
  // came from the union of the owned IDs' bitmaps.
  enum class RawEnd : uint8_t { kNotRaw, kAnnouncement, kRecord, kRanking, kBitmaps };
  RawEnd raw_end = RawEnd::kNotRaw;
  // The load's ID base, from its first round's least IDs: 0 for IDs that begin near 0. Receiving
  // raw keeps IDs less it; 6-byte records of IDs far from 0 spell them less it.
  uint64_t id_base = 0;
};

// One worker's share of a graph after a partitioned load: the stored edges with an end it owns,
// in input order (or, oriented, the directed edges from its vertices; PartEdges), between the
// vertices of `vertices` (those it owns and the remote ends of its edges; `input` has no external
// IDs), and the properties. The edges are in `edges` if `packed` (the vertices then in any order,
// with their local order), else in `input` (the vertices in global-index order). BuildPartGraph
// makes the worker's part from it.
struct PartitionInput {
  GraphInput input;  // the properties, flags and weights, and unless packed the edges
  PartEdges edges;
  bool packed = false;
  PartVertices vertices;
  RankNames names;
  PartitionLoadStats stats;

  // Directed edges, reverses included (for a packed symmetric input that is not oriented, an
  // estimate: self-loops count twice).
  size_t num_edges() const {
    return packed ? edges.size() * (edges.symmetric && !edges.oriented ? 2 : 1) : input.num_edges();
  }
};

// Graph<E>::BuildPart of a loaded part, emptying it.
template <class E>
absl::StatusOr<Graph<E>> BuildPartGraph(PartitionInput& part, const partition::Range& split,
                                        uint64_t rank, bool in_edges) {
  if (part.packed) {
    auto g = Graph<E>::BuildPart(part.edges, part.input.weights, std::move(part.vertices), split,
                                 rank, in_edges);
    part.input = GraphInput{};
    return g;
  }
  return Graph<E>::BuildPart(part.input, std::move(part.vertices), split, rank, in_edges);
}

// Collective over `exchange` (every worker calls it; worker exchange.rank() owns part rank() of
// the UUID space cut in exchange.size()). Loads `source` as LoadGraph does, with the same errors
// on every worker (a bad line found by any worker fails the load everywhere, naming the file and
// the line in the whole file). `in_edges`: the program needs in-edges, so each edge also goes to
// its target's owner.
absl::StatusOr<PartitionInput> LoadPartition(const GraphSource& source, WeightUse weights,
                                             Exchange& exchange, bool in_edges,
                                             const PartitionLoadOptions& options = {});

// Collective: for each of `names` (the same list on every worker), whether the graph has a vertex
// with that external ID. Each worker answers for its own vertices.
absl::StatusOr<std::vector<bool>> HaveVertices(const Topology& topology, Exchange& exchange,
                                               const std::vector<std::string>& names);

// Collective: the external IDs of `globals` (global indexes, any subset on each worker), asked of
// the workers that hold their ranges.
absl::StatusOr<absl::flat_hash_map<uint32_t, std::string>> ResolveNames(
    const RankNames& names, Exchange& exchange, std::vector<uint32_t> globals);

}  // namespace lockstep::bsp
