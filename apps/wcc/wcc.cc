#include "lockstep/apps/wcc/wcc.h"

#include <numeric>

#include "lockstep/runner/program_runner.h"

namespace lockstep::apps::wcc {

catalogue::AppInfo Info() {
  catalogue::AppInfo info;
  info.name = "wcc";
  info.summary = "weakly connected components, labelled by their smallest vertex ID";
  info.validation = catalogue::ValidationRule::kEquivalence;
  info.values = catalogue::ValueKind::kVertex;
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<runner::JobRunner> {
    return std::make_unique<runner::ProgramRunner<App>>(report);
  };
  return info;
}

std::vector<uint32_t> Oracle(const bsp::GraphInput& stored) {
  // The oracle reads every directed edge from the arrays.
  const bsp::GraphInput input = bsp::WithReverseEdges(stored);
  std::vector<uint32_t> parent(input.num_vertices());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (size_t e = 0; e < input.num_edges(); ++e) {
    const uint32_t a = find(input.src[e]), b = find(input.dst[e]);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);  // the root stays the smallest index
  }
  std::vector<uint32_t> label(input.num_vertices());
  for (uint32_t v = 0; v < label.size(); ++v) label[v] = find(v);
  return label;
}

}  // namespace lockstep::apps::wcc
