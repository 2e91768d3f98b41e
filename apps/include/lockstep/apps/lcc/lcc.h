#pragma once

// Local clustering coefficient as LDBC Graphalytics defines it (spec v1.0 §2.3.5): with N(v) the
// set of in- and out-neighbours of v other than v and k = |N(v)|, LCC(v) is the number of directed
// edges a->b with a, b in N(v), divided by k(k-1); 0 when k < 2.
//
// Every such edge closes an undirected triangle {v, a, b}, so the kernel enumerates triangles the
// Pregel way with degree ordering (Schank & Wagner 2005, "forward"; Suri & Vassilvitskii 2011):
// vertices are ranked by (k, ID); x sends each higher-ranked neighbour y the neighbours z of x
// ranked above y, one fixed-size message per wedge; y finds the triangle x < y < z when z is its
// neighbour too, and credits each corner with the directed edges between the other two. Ranking
// by degree keeps the wedges few (a hub has few higher-ranked neighbours), and `--phases P`
// spreads them over P supersteps by y's index, so the message memory of a superstep is about
// 1/P of the total.
#include <span>
#include <vector>

#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::apps::lcc {

struct Neighbour {
  uint32_t global;  // global index
  uint32_t slot;    // where to send to it
  uint32_t degree;  // its k, once known
  uint32_t bits;    // 1: an edge v->n, 2: an edge n->v
};

struct Value {
  std::vector<Neighbour> neighbours;  // sorted by global index; dropped once enumeration ends
  uint64_t k = 0;
  uint64_t edges = 0;  // directed edges among the neighbours found so far
};

struct Message {
  enum Kind : uint32_t { kDegree, kEntry, kCredit };
  uint32_t kind;
  uint32_t a;  // degree: k of the sender;  entry: y;  credit: low 32 bits
  uint32_t b;  // degree: the sender;       entry: z;  credit: high 32 bits
  uint32_t c;  //                           entry: the edges between y and z (bits)
};

struct Program {
  using VertexValue = Value;
  using EdgeValue = bsp::NoValue;
  using Message = lcc::Message;
  static constexpr bool kNeedsInEdges = true;

  uint32_t phases = 1;

  void Compute(bsp::Context<Program>& ctx, std::span<const Message> messages) const;
  bool KeepRunning(const bsp::StepStats& stats) const { return stats.superstep < phases + 2; }
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

namespace lockstep::bsp {
template <>
struct Codec<apps::lcc::Value> {
  static void Encode(const apps::lcc::Value& v, std::string& out) {
    Codec<uint64_t>::Encode(v.k, out);
    Codec<uint64_t>::Encode(v.edges, out);
    EncodeLength(v.neighbours.size(), out);
    for (const auto& n : v.neighbours) Codec<apps::lcc::Neighbour>::Encode(n, out);
  }
  static bool Decode(std::string_view& in, apps::lcc::Value& v) {
    uint64_t n;
    if (!Codec<uint64_t>::Decode(in, v.k) || !Codec<uint64_t>::Decode(in, v.edges) ||
        !DecodeLength(in, n) || n > in.size() / sizeof(apps::lcc::Neighbour)) {
      return false;
    }
    v.neighbours.resize(n);
    for (auto& x : v.neighbours) Codec<apps::lcc::Neighbour>::Decode(in, x);
    return true;
  }
};
}  // namespace lockstep::bsp
