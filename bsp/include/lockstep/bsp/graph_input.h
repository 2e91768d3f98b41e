#pragma once

// What the engine knows of an input graph: where it comes from (GraphSource) and a whole graph
// with dense global indexes (GraphInput), with the order of external IDs that gives those indexes.
// Reading and parsing a graph is the load library's (lockstep/load/source.h, docs/design.md §4).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace lockstep::bsp {

// The text of a graph that does not live in files (a database's tables), in the edge-list form,
// for the load to parse (docs/design.md §10). Errors name `edges_name` or `vertices_name` and a
// row (its position in the text and its fields), not a file and line.
struct GraphText {
  std::string edges;  // "src\tdst[\tweight]\n" per stored edge, in any order
  std::string edges_name;
  // `vertices` lists the vertex set, one ID per line: an edge naming another ID is an error.
  bool has_vertices = false;
  std::string vertices;
  std::string vertices_name;
};

// One worker's share of a table's rows, read in rounds (a partitioned load, docs/design.md §4.4).
class GraphTextShare {
 public:
  virtual ~GraphTextShare() = default;
  virtual bool done() const = 0;
  // The next whole rows, about `max_bytes` of them (at least one unless done).
  virtual absl::StatusOr<std::string> Next(uint64_t max_bytes) = 0;
  // How many rows this share has read so far.
  virtual uint64_t rows() const = 0;
};

// Where the text of a graph that is not a file comes from. Neither the engine nor the load links a
// database client: whoever holds the command line sets one on the GraphSource.
class GraphTextSource {
 public:
  virtual ~GraphTextSource() = default;
  // The whole graph, in one consistent snapshot; with its weights if `weights`.
  virtual absl::StatusOr<GraphText> ReadAll(bool weights) const = 0;
  // Worker `rank` of `size`'s share of the edge rows (with their weights if `weights`), or of the
  // vertex rows: together the workers' shares hold every row once, all from one snapshot. NotFound
  // for the vertex rows of a graph that has no vertex list.
  virtual absl::StatusOr<std::unique_ptr<GraphTextShare>> OpenShare(bool vertices, bool weights,
                                                                    uint32_t rank,
                                                                    uint32_t size) const = 0;
  // How errors name the edge rows and the vertex rows (e.g. `table "edges"`).
  virtual std::string EdgesName() const = 0;
  virtual std::string VerticesName() const = 0;
};

// Where a job's graph comes from.
struct GraphSource {
  std::string path;
  // "edgelist", "graphalytics", or empty: a path ending in ".properties" is Graphalytics.
  std::string format;
  // Edge list only: add the reverse of every edge (a self-loop once).
  bool undirected = false;
  // Edge list only, with `undirected`: the list already holds every edge in both directions (as
  // the GAP converter writes a symmetric graph), so the load keeps each pair once, the edge from
  // the lower vertex (a self-loop as listed), after checking that every edge has its reverse
  // with the same weight. Local mode and `lockstep partition` read it (load/text/both_listed.h).
  bool both_listed = false;
  // Set when the graph is not a file (`path` then only names it, e.g. a database URI). Its rows
  // come in no particular order, so its edges are stored sorted by (source, target, weight) in
  // the vertex order below: the same graph as an edge list with its lines in that order.
  std::shared_ptr<const GraphTextSource> text;
  // Such a graph's settings (a database's tables and columns, the job's snapshot), which the
  // distributed layer passes to the workers as they are, for them to make `text` from.
  std::map<std::string, std::string> options;
};

// What the app needs of the third column.
enum class WeightUse {
  kIgnore,       // weights are not read
  kNonNegative,  // if any edge has a weight, all must, and none may be negative
};

// A whole input graph with dense global vertex indexes. Vertices are ordered by external ID:
// integer IDs numerically first, then all other IDs as byte strings (ExternalIdLess), so the order
// does not depend on the input's line order or the thread count.
//
// An undirected input stores each edge once (`symmetric`): a stored edge that is not a self-loop
// also stands for its reverse, which Topology::Build adds while it lays out the CSR. Storing it
// twice here would double the input's share of a load's peak memory. The directed edges of a
// symmetric input are, in this order, the stored edges and then the reverses of the stored
// non-loop edges in stored order (ForEachEdge visits them so; WithReverseEdges stores them so).
struct GraphInput {
  std::vector<std::string> external_ids;
  // Stored edge i goes from src[i] to dst[i].
  std::vector<uint32_t> src;
  std::vector<uint32_t> dst;
  // One per stored edge, or empty if the input has no weights or they were not asked for. A
  // reverse edge has the weight of the edge it reverses.
  std::vector<double> weights;
  bool directed = true;
  // Every stored non-loop edge also stands for its reverse (see above).
  bool symmetric = false;
  // Symmetric only: the number of stored edges that are not self-loops (the reverses).
  size_t num_reverse = 0;
  // Graphalytics only: the properties with their "graph.<name>." prefix removed
  // (e.g. "pr.damping-factor" -> "0.85").
  std::map<std::string, std::string> properties;

  size_t num_vertices() const { return external_ids.size(); }
  // Directed edges, reverses included.
  size_t num_edges() const { return src.size() + (symmetric ? num_reverse : 0); }
  size_t num_stored_edges() const { return src.size(); }
};

// Calls f(src, dst, stored_index) for every directed edge of `input`, in the order above.
template <class F>
void ForEachEdge(const GraphInput& input, F&& f) {
  const size_t m = input.src.size();
  for (size_t e = 0; e < m; ++e) f(input.src[e], input.dst[e], e);
  if (!input.symmetric) return;
  for (size_t e = 0; e < m; ++e) {
    if (input.src[e] != input.dst[e]) f(input.dst[e], input.src[e], e);
  }
}

// The same graph with every directed edge stored (not symmetric): for oracles and tests that
// read the edge arrays directly.
GraphInput WithReverseEdges(const GraphInput& input);
// Marks an input whose edges stand for both directions as symmetric (counts num_reverse).
void MakeSymmetric(GraphInput& input);

// True if `text` is the canonical decimal form of an unsigned 64-bit integer.
bool ParseIntegerId(std::string_view text, uint64_t& value);

// The order of external IDs: integers as integers and before all others, the others bytewise.
bool ExternalIdLess(std::string_view a, std::string_view b);

// True if the graph has a vertex with this external ID (a binary search: IDs are sorted).
bool HasVertex(const GraphInput& input, std::string_view external);

// Reads a whole file; the error names the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace lockstep::bsp
