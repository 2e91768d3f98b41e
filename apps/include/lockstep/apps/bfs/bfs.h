#pragma once

// Breadth-first search: the hop depth of every vertex from a source along out-edges, as LDBC
// Graphalytics defines it (spec v1.0 §2.3.1); unreachable vertices get INT64_MAX. The Pregel form:
// a vertex that learns a smaller depth stores it and offers depth + 1 to its out-neighbours,
// under a min combiner; every vertex votes to halt.
#include <limits>
#include <span>

#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::apps::bfs {

inline constexpr int64_t kUnreachable = std::numeric_limits<int64_t>::max();

struct Program {
  using VertexValue = int64_t;
  using EdgeValue = bsp::NoValue;
  using Message = int64_t;

  bsp::VertexId source{};

  // Each vertex offers one depth to all its out-neighbours, under min: the engine pushes or pulls
  // it per superstep, and a depth no smaller than a vertex's own changes nothing.
  static constexpr bool kBroadcast = true;
  static void Combine(int64_t& into, const int64_t& m) { into = std::min(into, m); }
  static bool Improves(int64_t depth, int64_t m) { return m < depth; }
  int64_t Init(const bsp::Context<Program>&) const { return kUnreachable; }

  // In local mode superstep 0 starts with a partition step (apps/common/search.cc, docs/design.md
  // §3.9): a direction-optimising search over the whole graph gives every depth, and the job ends
  // after superstep 0. Partitions that edges join to others skip it (common::SearchesAlone).
  // With `start source` the step is left out: the source alone starts.
  bool search = true;
  void PartitionStep(bsp::PartitionView<Program>& part) const;

  void Compute(bsp::Context<Program>& ctx, std::span<const int64_t> messages) const {
    int64_t best = ctx.value();
    if (ctx.superstep() == 0 && ctx.id() == source) best = 0;
    if (!messages.empty()) best = std::min(best, messages[0]);
    if (best < ctx.value()) {
      ctx.value() = best;
      ctx.SendToAllNeighbors(best + 1);
    }
    ctx.VoteToHalt();
  }
};

struct App {
  using Program = bfs::Program;
  static constexpr bsp::WeightUse kWeights = bsp::WeightUse::kIgnore;
  static std::vector<std::string> NamedVertices(const bsp::Params& params) {
    return {bsp::ParamString(params, "source")};
  }
  static absl::StatusOr<Program> Make(const bsp::Params& params, const bsp::GraphFacts& facts);
  static void Format(const Program&, int64_t depth, std::string& out) {
    bsp::AppendInt(depth, out);
  }
};

catalogue::AppInfo Info();

// The serial oracle: a queue-based BFS over the whole input.
std::vector<int64_t> Oracle(const bsp::GraphInput& input, uint32_t source);

}  // namespace lockstep::apps::bfs
