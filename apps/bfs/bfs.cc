#include "lockstep/apps/bfs/bfs.h"

#include <deque>

#include "lockstep/apps/common/search.h"
#include "lockstep/apps/common/source.h"
#include "lockstep/runner/program_runner.h"

namespace lockstep::apps::bfs {

absl::StatusOr<Program> App::Make(const bsp::Params& params, const bsp::GraphFacts& facts) {
  auto source = common::SourceVertex(params, facts);
  if (!source.ok()) return source.status();
  Program p;
  p.source = *source;
  const std::string start = bsp::ParamString(params, "start");
  if (start == "source") {
    p.search = false;
  } else if (!start.empty() && start != "search") {
    return bsp::ParamError("start", absl::StrCat("expected search or source, got '", start, "'"));
  }
  return p;
}

void Program::PartitionStep(bsp::PartitionView<Program>& part) const {
  if (!search || !common::SearchesAlone(part.topology())) return;
  const uint32_t s = part.topology().Find(source);
  if (s != bsp::kNoVertex) common::SearchLevels(part.topology(), s, part.values(), kUnreachable);
  part.HaltAll();  // every depth is final
}

catalogue::AppInfo Info() {
  catalogue::AppInfo info;
  info.name = "bfs";
  info.summary = "breadth-first search: hop depth from the source along out-edges";
  info.validation = catalogue::ValidationRule::kExact;
  info.values = catalogue::ValueKind::kInteger;
  bsp::AppendInt(kUnreachable, info.unreachable);
  info.params = {{"source", "", "the source vertex (external ID)"},
                 {"start", "search",
                  "search: a partition no edge leaves (local mode's) searches from the source in "
                  "superstep 0; source: the source alone starts (plain Pregel BFS)"}};
  info.graphalytics = {{"bfs.source-vertex", "source", {}}};
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<runner::JobRunner> {
    return std::make_unique<runner::ProgramRunner<App>>(report);
  };
  return info;
}

std::vector<int64_t> Oracle(const bsp::GraphInput& stored, uint32_t source) {
  // The oracle reads every directed edge from the arrays.
  const bsp::GraphInput input = bsp::WithReverseEdges(stored);
  const size_t n = input.num_vertices();
  std::vector<std::vector<uint32_t>> adj(n);
  for (size_t e = 0; e < input.num_edges(); ++e) adj[input.src[e]].push_back(input.dst[e]);
  std::vector<int64_t> depth(n, kUnreachable);
  std::deque<uint32_t> queue{source};
  depth[source] = 0;
  while (!queue.empty()) {
    const uint32_t u = queue.front();
    queue.pop_front();
    for (uint32_t v : adj[u]) {
      if (depth[v] == kUnreachable) {
        depth[v] = depth[u] + 1;
        queue.push_back(v);
      }
    }
  }
  return depth;
}

}  // namespace lockstep::apps::bfs
