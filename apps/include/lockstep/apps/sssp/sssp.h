#pragma once

// Single-source shortest paths, the Pregel way (Malewicz et al., SIGMOD 2010, §5.2): a vertex
// that learns a shorter distance stores it and offers dist + w to its out-neighbours; every vertex
// votes to halt and is woken by messages. Messages carry the sender, so each vertex also keeps
// its predecessor; the min combiner breaks equal costs by the smaller sender UUID, which makes the
// predecessor tree independent of thread and worker counts. Weights must be >= 0 (1 when the
// input has none); of parallel edges the lightest counts. Unreachable vertices stay at Infinity.
#include <limits>
#include <span>

#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::apps::sssp {

struct Message {
  double cost;
  bsp::VertexId from;
  // Cheaper first; of equal costs, the smaller sender: the order the combiner keeps the least of.
  friend bool operator<(const Message& a, const Message& b) {
    return a.cost < b.cost || (a.cost == b.cost && a.from < b.from);
  }
};

struct Value {
  double distance = std::numeric_limits<double>::infinity();
  bsp::VertexId predecessor{};
};

struct Program {
  using VertexValue = Value;
  using EdgeValue = double;
  using Message = sssp::Message;

  bsp::VertexId source{};

  // A vertex offers its distance to all its out-neighbours, each getting it plus its edge's
  // weight, under min: the engine pushes or pulls it per superstep (docs/design.md §3.4), and an
  // offer no shorter than a vertex's distance changes nothing.
  static constexpr bool kBroadcast = true;
  static void Combine(Message& into, const Message& m) {
    if (m < into) into = m;
  }
  static bool Improves(const Value& value, const Message& m) { return m.cost < value.distance; }
  static Message Along(const Message& m, double weight) { return {m.cost + weight, m.from}; }

  void Compute(bsp::Context<Program>& ctx, std::span<const Message> messages) const {
    Value best = ctx.value();
    bool improved = false;
    if (ctx.superstep() == 0 && ctx.id() == source) {
      best = {0.0, source};
      improved = true;
    }
    if (!messages.empty() && messages[0].cost < best.distance) {
      best = {messages[0].cost, messages[0].from};
      improved = true;
    }
    if (improved) {
      ctx.value() = best;
      ctx.SendToAllNeighbors(Message{best.distance, ctx.id()});
    }
    ctx.VoteToHalt();
  }
};

struct App {
  using Program = sssp::Program;
  static constexpr bsp::WeightUse kWeights = bsp::WeightUse::kNonNegative;
  static std::vector<std::string> NamedVertices(const bsp::Params& params) {
    return {bsp::ParamString(params, "source"), bsp::ParamString(params, "path-to")};
  }
  static absl::StatusOr<Program> Make(const bsp::Params& params, const bsp::GraphFacts& facts);
  static void Format(const Program&, const Value& value, std::string& out) {
    bsp::AppendDouble(value.distance, out);
  }
  // With the path-to parameter, prints "path: a -> b -> c (cost X)" or "path: none".
  static void Report(const bsp::Engine<Program>& engine, const bsp::Params& params,
                     std::ostream& out);
};

catalogue::AppInfo Info();

// The serial oracle: Dijkstra with a binary heap over the whole input.
std::vector<double> Oracle(const bsp::GraphInput& input, uint32_t source);

}  // namespace lockstep::apps::sssp
