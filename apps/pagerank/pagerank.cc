#include "lockstep/apps/pagerank/pagerank.h"

#include "lockstep/runner/program_runner.h"

namespace lockstep::apps::pagerank {

absl::StatusOr<Program> App::Make(const bsp::Params& params, const bsp::GraphFacts&) {
  Program p;
  auto damping = bsp::ParamDouble(params, "damping");
  if (!damping.ok()) return damping.status();
  auto tolerance = bsp::ParamDouble(params, "tolerance");
  if (!tolerance.ok()) return tolerance.status();
  auto iterations = bsp::ParamInt(params, "max-iterations");
  if (!iterations.ok()) return iterations.status();
  if (!(*damping >= 0 && *damping <= 1)) {
    return bsp::ParamError("damping", "must be in [0, 1]");
  }
  if (!(*tolerance >= 0)) return bsp::ParamError("tolerance", "must be >= 0");
  if (*iterations < 0) return bsp::ParamError("max-iterations", "must be >= 0");
  p.damping = *damping;
  p.tolerance = *tolerance;
  p.max_iterations = static_cast<uint64_t>(*iterations);
  return p;
}

catalogue::AppInfo Info() {
  catalogue::AppInfo info;
  info.name = "pagerank";
  info.aliases = {"pr"};
  info.summary = "PageRank (power iteration with dangling mass spread over all vertices)";
  info.validation = catalogue::ValidationRule::kEpsilon;
  info.values = catalogue::ValueKind::kReal;
  info.params = {
      {"damping", "0.85", "damping factor d in [0, 1]"},
      {"tolerance", "1e-9", "stop when the L1 change of an iteration is below this (0 = never)"},
      {"max-iterations", "100", "stop after this many iterations"},
  };
  info.iterations_param = "max-iterations";
  info.graphalytics = {
      {"pr.damping-factor", "damping", {}},
      // Graphalytics runs exactly that many iterations.
      {"pr.num-iterations", "max-iterations", {{"tolerance", "0"}}},
  };
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<runner::JobRunner> {
    return std::make_unique<runner::ProgramRunner<App>>(report);
  };
  return info;
}

std::vector<double> Oracle(const bsp::GraphInput& stored, double damping, double tolerance,
                           uint64_t max_iterations) {
  // The oracle reads every directed edge from the arrays.
  const bsp::GraphInput input = bsp::WithReverseEdges(stored);
  const size_t n = input.num_vertices();
  std::vector<uint64_t> outdeg(n, 0);
  for (uint32_t s : input.src) ++outdeg[s];
  std::vector<double> rank(n, 1.0 / static_cast<double>(n)), next(n);
  for (uint64_t it = 0; it < max_iterations; ++it) {
    double dangling = 0;
    for (size_t v = 0; v < n; ++v) {
      if (outdeg[v] == 0) dangling += rank[v];
    }
    std::fill(next.begin(), next.end(), 0.0);
    for (size_t e = 0; e < input.num_edges(); ++e) {
      next[input.dst[e]] += rank[input.src[e]] / static_cast<double>(outdeg[input.src[e]]);
    }
    double change = 0;
    for (size_t v = 0; v < n; ++v) {
      next[v] = (1 - damping) / static_cast<double>(n) +
                damping * (next[v] + dangling / static_cast<double>(n));
      change += std::abs(next[v] - rank[v]);
    }
    rank.swap(next);
    if (tolerance > 0 && change < tolerance) break;
  }
  return rank;
}

}  // namespace lockstep::apps::pagerank
