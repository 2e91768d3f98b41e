#include "lockstep/apps/cdlp/cdlp.h"

#include <algorithm>

#include "lockstep/apps/common/most_frequent.h"
#include "lockstep/runner/program_runner.h"

namespace lockstep::apps::cdlp {

void Program::Compute(bsp::Context<Program>& ctx, std::span<const uint32_t> messages) const {
  if (ctx.superstep() == 0) {
    ctx.value() = ctx.global_index();
  } else if (!messages.empty()) {
    // One scratch buffer per thread: no allocation per vertex once it has grown.
    thread_local std::vector<uint32_t> scratch;
    scratch.assign(messages.begin(), messages.end());
    ctx.value() = common::MostFrequent(scratch);
  }
  // On an undirected graph the engine gives each neighbour's label once (it is both an in- and
  // an out-neighbour): halving every count changes neither the most frequent label nor the ties.
  if (ctx.superstep() < max_iterations) ctx.SendToAllNeighbors(ctx.value());
}

absl::StatusOr<Program> App::Make(const bsp::Params& params, const bsp::GraphFacts&) {
  auto iterations = bsp::ParamInt(params, "max-iterations");
  if (!iterations.ok()) return iterations.status();
  if (*iterations < 0) return bsp::ParamError("max-iterations", "must be >= 0");
  Program p;
  p.max_iterations = static_cast<uint64_t>(*iterations);
  return p;
}

catalogue::AppInfo Info() {
  catalogue::AppInfo info;
  info.name = "cdlp";
  info.summary = "community detection by synchronous label propagation";
  info.validation = catalogue::ValidationRule::kExact;
  info.values = catalogue::ValueKind::kVertex;
  info.params = {{"max-iterations", "10", "rounds of label propagation"}};
  info.iterations_param = "max-iterations";
  info.graphalytics = {{"cdlp.max-iterations", "max-iterations", {}}};
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<runner::JobRunner> {
    return std::make_unique<runner::ProgramRunner<App>>(report);
  };
  return info;
}

std::vector<uint32_t> Oracle(const bsp::GraphInput& stored, uint64_t iterations) {
  // The oracle reads every directed edge from the arrays.
  const bsp::GraphInput input = bsp::WithReverseEdges(stored);
  const size_t n = input.num_vertices();
  std::vector<std::vector<uint32_t>> neighbours(n);
  for (size_t e = 0; e < input.num_edges(); ++e) {
    neighbours[input.src[e]].push_back(input.dst[e]);
    neighbours[input.dst[e]].push_back(input.src[e]);
  }
  std::vector<uint32_t> label(n), next(n);
  for (uint32_t v = 0; v < n; ++v) label[v] = v;
  std::vector<uint32_t> seen;
  for (uint64_t it = 0; it < iterations; ++it) {
    for (uint32_t v = 0; v < n; ++v) {
      if (neighbours[v].empty()) {
        next[v] = label[v];
        continue;
      }
      seen.clear();
      for (uint32_t u : neighbours[v]) seen.push_back(label[u]);
      std::sort(seen.begin(), seen.end());  // not MostFrequent's radix sort: checked against it
      next[v] = common::MostFrequentSorted(seen);
    }
    label.swap(next);
  }
  return label;
}

}  // namespace lockstep::apps::cdlp
