#include "lockstep/apps/sssp/sssp.h"

#include <algorithm>
#include <cmath>
#include <queue>

#include "lockstep/apps/common/source.h"
#include "lockstep/runner/program_runner.h"

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
  const std::string start = bsp::ParamString(params, "start");
  if (start == "source") {
    p.delta_stepping = false;
  } else if (!start.empty() && start != "delta-stepping") {
    return bsp::ParamError("start",
                           absl::StrCat("expected delta-stepping or source, got '", start, "'"));
  }
  const std::string delta = bsp::ParamString(params, "delta");
  if (!delta.empty() && delta != "auto") {
    auto d = bsp::ParamDouble(params, "delta");
    if (!d.ok()) return d.status();
    if (!(*d > 0) || !std::isfinite(*d)) {
      return bsp::ParamError("delta",
                             absl::StrCat("expected a positive number, got '", delta, "'"));
    }
    p.delta = *d;
  }
  return p;
}

void App::Report(const bsp::Engine<Program>& engine, const bsp::Params& params, std::ostream& out) {
  const std::string target_name = bsp::ParamString(params, "path-to");
  if (target_name.empty()) return;
  const bsp::Topology& topo = engine.topology();
  const uint32_t target = topo.Find(bsp::VertexIdFromExternal(target_name));
  if (target == bsp::kNoVertex) return;  // not this process's vertex
  const auto dist = engine.values();
  if (dist[target] == kUnreachable) {
    out << "path: none\n";
    return;
  }
  if (topo.num_remote() > 0 || topo.num_local() != topo.num_global()) {
    out << "path: (crosses partitions; run locally to print it)\n";
    return;
  }
  const uint32_t source = topo.Find(engine.program().source);
  // An edge u -> x is tight if it ends a shortest path: dist[u] + w == dist[x], the very sum the
  // run computed. A breadth-first search from the source along tight edges gives each vertex up
  // to the target's level its fewest edges on a shortest path.
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> hops(topo.num_local(), kNone);
  std::vector<uint32_t> level = {source}, next;
  hops[source] = 0;
  for (uint32_t h = 0; hops[target] == kNone && !level.empty(); ++h) {
    next.clear();
    for (uint32_t u : level) {
      const auto slots = topo.out_slots(u);
      const auto weights = engine.graph().out_values(u);
      for (size_t i = 0; i < slots.size(); ++i) {
        const uint32_t x = slots[i];
        if (hops[x] == kNone && Program::Along(dist[u], weights[i]) == dist[x]) {
          hops[x] = h + 1;
          next.push_back(x);
        }
      }
    }
    level.swap(next);
  }
  // Back from the target: each step to the tight in-neighbour one level nearer with the
  // smallest UUID (on a symmetric graph the out-edges are the in-edges).
  std::vector<std::string> path;
  for (uint32_t v = target;;) {
    path.push_back(std::string(topo.external_id(v)));
    if (v == source) break;
    const bool in = topo.has_in_edges();
    const auto slots = in ? topo.in_slots(v) : topo.out_slots(v);
    const auto weights = in ? engine.graph().in_values(v) : engine.graph().out_values(v);
    uint32_t best = bsp::kNoVertex;
    for (size_t i = 0; i < slots.size(); ++i) {
      const uint32_t u = slots[i];
      if (hops[u] != hops[v] - 1 || Program::Along(dist[u], weights[i]) != dist[v]) continue;
      if (best == bsp::kNoVertex || topo.id(u) < topo.id(best)) best = u;
    }
    v = best;  // one exists: v was reached from a vertex one level nearer
  }
  std::string line = "path: ";
  for (size_t i = path.size(); i-- > 0;) {
    line += path[i];
    if (i > 0) line += " -> ";
  }
  line += " (cost ";
  bsp::AppendDouble(dist[target], line);
  out << line << ")\n";
}

catalogue::AppInfo Info() {
  catalogue::AppInfo info;
  info.name = "sssp";
  info.summary = "single-source shortest paths (non-negative weights; 1 when unweighted)";
  info.validation = catalogue::ValidationRule::kEpsilon;
  info.values = catalogue::ValueKind::kReal;
  bsp::AppendDouble(kUnreachable, info.unreachable);
  info.params = {
      {"source", "", "the source vertex (external ID)"},
      {"path-to", "", "also print the shortest path to this vertex on stdout (run only)", false,
       true},
      {"start", "delta-stepping",
       "delta-stepping: a partition no edge leaves (local mode's) runs delta-stepping from the "
       "source in superstep 0; source: the source alone starts (plain Pregel SSSP)"},
      {"delta", "auto",
       "the width of delta-stepping's buckets (a positive number); auto: from the weights. "
       "Unused with start source, or where the input has no weights (a search runs)"},
  };
  info.graphalytics = {{"sssp.source-vertex", "source", {}}};
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<runner::JobRunner> {
    return std::make_unique<runner::ProgramRunner<App>>(report);
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
