#pragma once

// Single-source shortest paths, the Pregel way (Malewicz et al., SIGMOD 2010, §5.2): a vertex
// that learns a shorter distance stores it and offers dist + w to its out-neighbours; every vertex
// votes to halt and is woken by messages. A vertex keeps its distance alone (8 bytes, as a
// hand-written kernel does); --path-to finds the path after the run from the distances (Report).
// Weights must be >= 0 (1 when the input has none); of parallel edges the lightest counts.
// Unreachable vertices stay at Infinity.
#include <limits>
#include <span>

#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::apps::sssp {

inline constexpr double kUnreachable = std::numeric_limits<double>::infinity();

struct Program {
  using VertexValue = double;  // the distance from the source
  using EdgeValue = double;
  using Message = double;

  bsp::VertexId source{};

  // A vertex offers its distance to all its out-neighbours, each getting it plus its edge's
  // weight, under min: the engine pushes or pulls it per superstep (docs/design.md §3.4), and an
  // offer no shorter than a vertex's distance changes nothing. A vertex ends at the cheapest
  // offer it ever got, whatever the superstep it came in (kAnyOrder): the engine may offer the
  // cheapest distances of a large frontier first and hold the others back (delta-stepping's
  // order), which saves offering distances that a cheaper path overtakes later.
  static constexpr bool kBroadcast = true;
  static constexpr bool kAnyOrder = true;
  static void Combine(double& into, const double& m) { into = std::min(into, m); }
  static bool Improves(double distance, double m) { return m < distance; }
  static double Along(double m, double weight) { return m + weight; }
  double Init(const bsp::Context<Program>&) const { return kUnreachable; }

  // In local mode superstep 0 starts with a partition step (delta_stepping.cc, docs/design.md
  // §3.9): delta-stepping over the whole graph (a breadth-first search when it has no weights)
  // gives every distance, and the job ends after superstep 0. Partitions that edges join to
  // others skip it (common::SearchesAlone). With `start source` the step is left out:
  // the source alone starts.
  bool delta_stepping = true;
  double delta = 0;  // the buckets' width; 0: chosen from a sample of the partition's weights
  void PartitionStep(bsp::PartitionView<Program>& part) const;

  void Compute(bsp::Context<Program>& ctx, std::span<const double> messages) const {
    double best = ctx.value();
    if (ctx.superstep() == 0 && ctx.id() == source) best = 0;
    if (!messages.empty()) best = std::min(best, messages[0]);
    if (best < ctx.value()) {
      ctx.value() = best;
      ctx.SendToAllNeighbors(best);
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
  static void Format(const Program&, double distance, std::string& out) {
    bsp::AppendDouble(distance, out);
  }
  // With the path-to parameter, prints "path: a -> b -> c (cost X)" or "path: none": of the
  // shortest paths, one with the fewest edges, each step from the vertex with the smaller UUID.
  static void Report(const bsp::Engine<Program>& engine, const bsp::Params& params,
                     std::ostream& out);
};

catalogue::AppInfo Info();

// The serial oracle: Dijkstra with a binary heap over the whole input.
std::vector<double> Oracle(const bsp::GraphInput& input, uint32_t source);

}  // namespace lockstep::apps::sssp
