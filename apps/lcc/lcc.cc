#include "lockstep/apps/lcc/lcc.h"

#include <bit>
#include <set>

#include "lockstep/runner/program_runner.h"

namespace lockstep::apps::lcc {

void Program::Compute(bsp::Context<Program>& ctx, std::span<const Message> messages) const {
  Value& me = ctx.value();
  for (const Message m : messages) me.edges += m;
  const uint64_t s = ctx.superstep();
  if (s == 0) me.k = ctx.neighbour_count();
  if (s < phases && ctx.global_index() % phases == s) {
    // x = this vertex; y, z ranked above it, z above y: each (y, z) in both lists is a triangle.
    const bsp::NeighbourList mine = ctx.higher_neighbours();
    thread_local std::vector<uint64_t> owed;  // per neighbour of mine
    owed.assign(mine.size(), 0);
    uint64_t own = 0;
    for (uint32_t i = 0; i < mine.size(); ++i) {
      const bsp::NeighbourList theirs = ctx.higher_neighbours_of(i);
      const uint32_t xy = static_cast<uint32_t>(std::popcount(mine.bits(i)));
      uint64_t to_y = 0;
      // z ranks above y: after it in mine.
      if (mine.symmetric()) {
        // Every edge goes both ways: 2 directed edges between any two corners.
        uint64_t triangles = 0;
        bsp::ForEachCommon(mine.From(i + 1), theirs, [&](uint32_t j, uint32_t) {
          ++triangles;
          owed[i + 1 + j] += 2;
        });
        own += 2 * triangles;
        to_y += 2 * triangles;
      } else {
        bsp::ForEachCommon(mine.From(i + 1), theirs, [&](uint32_t j, uint32_t l) {
          own += static_cast<uint32_t>(std::popcount(theirs.bits(l)));         // y - z, for x
          to_y += static_cast<uint32_t>(std::popcount(mine.bits(i + 1 + j)));  // x - z, for y
          owed[i + 1 + j] += xy;                                               // x - y, for z
        });
      }
      owed[i] += to_y;
    }
    me.edges += own;
    for (uint32_t i = 0; i < mine.size(); ++i) {
      if (owed[i] != 0) ctx.Send(ctx.higher_neighbour_slot(i), owed[i]);
    }
  }
  if (s + 1 >= phases) ctx.VoteToHalt();
}

absl::StatusOr<Program> App::Make(const bsp::Params& params, const bsp::GraphFacts&) {
  auto phases = bsp::ParamInt(params, "phases");
  if (!phases.ok()) return phases.status();
  if (*phases < 1 || *phases > 1 << 20) {
    return bsp::ParamError("phases", "must be between 1 and 1048576");
  }
  Program p;
  p.phases = static_cast<uint32_t>(*phases);
  return p;
}

catalogue::AppInfo Info() {
  catalogue::AppInfo info;
  info.name = "lcc";
  info.summary = "local clustering coefficient (directed, Graphalytics semantics)";
  info.validation = catalogue::ValidationRule::kEpsilon;
  info.values = catalogue::ValueKind::kReal;
  info.params = {{"phases", "1",
                  "spread the triangle enumeration over this many supersteps "
                  "(bounds message memory)"}};
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<runner::JobRunner> {
    return std::make_unique<runner::ProgramRunner<App>>(report);
  };
  return info;
}

std::vector<double> Oracle(const bsp::GraphInput& stored) {
  // The oracle reads every directed edge from the arrays.
  const bsp::GraphInput input = bsp::WithReverseEdges(stored);
  const size_t n = input.num_vertices();
  std::vector<std::set<uint32_t>> nbrs(n), out(n);
  for (size_t e = 0; e < input.num_edges(); ++e) {
    const uint32_t a = input.src[e], b = input.dst[e];
    if (a == b) continue;
    nbrs[a].insert(b);
    nbrs[b].insert(a);
    out[a].insert(b);
  }
  std::vector<double> lcc(n, 0.0);
  for (size_t v = 0; v < n; ++v) {
    const double k = static_cast<double>(nbrs[v].size());
    if (k < 2) continue;
    uint64_t edges = 0;
    for (uint32_t a : nbrs[v]) {
      for (uint32_t b : out[a]) edges += nbrs[v].count(b);
    }
    lcc[v] = static_cast<double>(edges) / (k * (k - 1));
  }
  return lcc;
}

}  // namespace lockstep::apps::lcc
