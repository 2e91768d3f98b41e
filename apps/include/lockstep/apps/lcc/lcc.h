#pragma once

// Local clustering coefficient as LDBC Graphalytics defines it (spec v1.0 §2.3.5): with N(v) the
// set of in- and out-neighbours of v other than v and k = |N(v)|, LCC(v) is the number of directed
// edges a->b with a, b in N(v), divided by k(k-1); 0 when k < 2.
//
// Every such edge closes an undirected triangle {v, a, b}, so the kernel lists triangles with
// degree ordering (Schank & Wagner 2005, "forward"), on the engine's neighbour lists
// (kNeighbourhood, bsp/neighbourhood.h): each vertex x intersects its neighbours ranked above it
// with those of each such neighbour y; each z in both closes the triangle x < y < z, found once.
// (On graphs of up to 2^24 vertices the intersection marks x's list in a table by global index and
// looks y's up there, lcc.cc.) x credits itself with the directed edges between y and z, and sums
// what y and z are owed (the edges between the other two corners) per neighbour, one message each;
// a sum combiner adds them up at the receivers. The lists hold each undirected edge once, and the
// messages are at most one per listed edge; one to a local vertex is added into its sum as it is
// sent (kAddsInPlace), so only those relayed to other processes are held. `--phases P` spreads the
// listing over P supersteps by x's index (P = 1 is the fastest; larger P bounds a superstep's
// relayed messages).
#include <span>
#include <vector>

#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::apps::lcc {

struct Value {
  uint64_t k = 0;      // distinct neighbours other than the vertex
  uint64_t edges = 0;  // directed edges among the neighbours found so far
};

struct Program {
  using VertexValue = Value;
  using EdgeValue = bsp::NoValue;
  using Message = uint64_t;  // directed edges owed to the receiver, summed
  static constexpr bool kNeighbourhood = true;
  static void Combine(Message& into, const Message& m) { into += m; }
  // Added into the receiver's sum as sent: no envelope per listed edge (program.h).
  static constexpr bool kAddsInPlace = true;

  uint32_t phases = 1;
  // On a graph of at most this many vertices, each thread marks a vertex's neighbours in a table
  // of 4 bytes a vertex and looks its neighbours' lists up there; on a larger one it merges them.
  uint64_t mark_up_to = uint64_t{1} << 24;

  void Compute(bsp::Context<Program>& ctx, std::span<const Message> messages) const;
};

struct App {
  using Program = lcc::Program;
  static constexpr bsp::WeightUse kWeights = bsp::WeightUse::kIgnore;
  static absl::StatusOr<Program> Make(const bsp::Params& params, const bsp::GraphFacts& facts);
  static void Format(const Program&, const Value& value, std::string& out) {
    const double k = static_cast<double>(value.k);
    bsp::AppendDouble(value.k < 2 ? 0.0 : static_cast<double>(value.edges) / (k * (k - 1)), out);
  }
};

catalogue::AppInfo Info();

// The serial oracle: neighbour sets and a direct count over the whole input.
std::vector<double> Oracle(const bsp::GraphInput& input);

}  // namespace lockstep::apps::lcc
