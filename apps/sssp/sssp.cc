#include "lockstep/apps/sssp/sssp.h"

#include <algorithm>
#include <queue>

#include "lockstep/apps/common/source.h"

namespace lockstep::apps::sssp {

absl::StatusOr<Program> App::Make(const bsp::Params& params, const bsp::GraphFacts& facts) {
  auto source = common::SourceVertex(params, facts);
  if (!source.ok()) return source.status();
  // A path-to vertex that is not in the graph would otherwise print nothing at all. Checked
  // only where the graph is loaded (the distributed master has none), as for the source.
  const std::string target = bsp::ParamString(params, "path-to");
  if (!target.empty() && facts.Lacks(target)) {
    return bsp::ParamError("path-to", absl::StrCat("vertex '", target, "' is not in the graph"));
  }
  Program p;
  p.source = *source;
  return p;
}

void App::Report(const bsp::Engine<Program>& engine, const bsp::Params& params, std::ostream& out) {
  const std::string target = bsp::ParamString(params, "path-to");
  if (target.empty()) return;
  const bsp::Topology& topo = engine.topology();
  uint32_t v = topo.Find(bsp::VertexIdFromExternal(target));
  if (v == bsp::kNoVertex) return;  // not this process's vertex
  const auto values = engine.values();
  if (values[v].distance == std::numeric_limits<double>::infinity()) {
    out << "path: none\n";
    return;
  }
  const double cost = values[v].distance;
  std::vector<std::string> path;
  const bsp::VertexId source = engine.program().source;
  while (true) {
    path.push_back(std::string(topo.external_id(v)));
    if (topo.id(v) == source) break;
    v = topo.Find(values[v].predecessor);
    if (v == bsp::kNoVertex || path.size() > topo.num_local()) {
      out << "path: (crosses partitions; run locally to print it)\n";
      return;
    }
  }
  std::string line = "path: ";
  for (size_t i = path.size(); i-- > 0;) {
    line += path[i];
    if (i > 0) line += " -> ";
  }
  line += " (cost ";
  bsp::AppendDouble(cost, line);
  out << line << ")\n";
}

catalogue::AppInfo Info() {
  catalogue::AppInfo info;
  info.name = "sssp";
  info.summary = "single-source shortest paths (non-negative weights; 1 when unweighted)";
  info.validation = catalogue::ValidationRule::kEpsilon;
  info.params = {
      {"source", "", "the source vertex (external ID)"},
      {"path-to", "", "also print the shortest path to this vertex on stdout (run only)", false,
       true},
  };
  info.from_graphalytics = [](const std::map<std::string, std::string>& props,
                              bsp::Params& params) {
    if (auto it = props.find("sssp.source-vertex"); it != props.end()) {
      params["source"] = it->second;
    }
  };
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<bsp::JobRunner> {
    return std::make_unique<bsp::ProgramRunner<App>>(report);
  };
  return info;
}

std::vector<double> Oracle(const bsp::GraphInput& stored, uint32_t source) {
  // The oracle reads every directed edge from the arrays.
  const bsp::GraphInput input = bsp::WithReverseEdges(stored);
  const size_t n = input.num_vertices();
  std::vector<std::vector<std::pair<uint32_t, double>>> adj(n);
  for (size_t e = 0; e < input.num_edges(); ++e) {
    adj[input.src[e]].push_back({input.dst[e], input.weights.empty() ? 1.0 : input.weights[e]});
  }
  std::vector<double> dist(n, std::numeric_limits<double>::infinity());
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  dist[source] = 0;
  heap.push({0.0, source});
  while (!heap.empty()) {
    auto [d, u] = heap.top();
    heap.pop();
    if (d > dist[u]) continue;
    for (auto [v, w] : adj[u]) {
      if (d + w < dist[v]) {
        dist[v] = d + w;
        heap.push({dist[v], v});
      }
    }
  }
  return dist;
}

}  // namespace lockstep::apps::sssp
