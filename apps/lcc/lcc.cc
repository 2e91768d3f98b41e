#include "lockstep/apps/lcc/lcc.h"

#include <bit>
#include <set>

#include "lockstep/runner/program_runner.h"

namespace lockstep::apps::lcc {
namespace {

// Lists the triangles x < y < z at x, where mine holds x's neighbours ranked above it and
// theirs_of(i) those of mine's i-th: each z in both mine (after y) and y's list closes one. Returns
// the directed edges x counts (y - z); owed[i] gets what mine's i-th is owed (x - z as a y, x - y
// as a z). With a table of `marks` entries (the graph's vertices, or 0), each of mine is marked
// with its place (1 + its index) there by global index, and y's neighbours are looked up: a merge
// would walk the rest of mine again for every y, and mispredict where the lists interleave.
template <class TheirsOf>
uint64_t ListTriangles(const bsp::NeighbourList& mine, TheirsOf&& theirs_of, uint64_t marks,
                       std::vector<uint64_t>& owed) {
  thread_local std::vector<uint32_t> place;
  const bool marked = marks > 0;
  if (marked) {
    if (place.size() != marks) place.assign(marks, 0);
    for (uint32_t j = 0; j < mine.size(); ++j) place[mine.global(j)] = j + 1;
  }
  uint64_t own = 0;
  for (uint32_t i = 0; i < mine.size(); ++i) {
    const bsp::NeighbourList theirs = theirs_of(i);
    const uint32_t xy = static_cast<uint32_t>(std::popcount(mine.bits(i)));
    uint64_t to_y = 0;
    // z is mine's j-th and theirs' l-th.
    auto close = [&](uint32_t j, uint32_t l) {
      own += static_cast<uint32_t>(std::popcount(theirs.bits(l)));  // y - z, for x
      to_y += static_cast<uint32_t>(std::popcount(mine.bits(j)));   // x - z, for y
      owed[j] += xy;                                                // x - y, for z
    };
    if (marked) {
      // Every mark in y's list is after y in mine: both lists rank above y, in rank order.
      for (uint32_t l = 0; l < theirs.size(); ++l) {
        const uint32_t at = place[theirs.global(l)];
        if (at != 0) close(at - 1, l);
      }
    } else {
      bsp::ForEachCommon(mine.From(i + 1), theirs,
                         [&](uint32_t j, uint32_t l) { close(i + 1 + j, l); });
    }
    owed[i] += to_y;
  }
  if (marked) {
    for (uint32_t j = 0; j < mine.size(); ++j) place[mine.global(j)] = 0;
  }
  return own;
}

}  // namespace

void Program::Compute(bsp::Context<Program>& ctx, std::span<const Message> messages) const {
  Value& me = ctx.value();
  for (const Message m : messages) me.edges += m;
  const uint64_t s = ctx.superstep();
  if (s == 0) me.k = ctx.neighbour_count();
  if (s < phases && ctx.global_index() % phases == s) {
    const bsp::NeighbourList mine = ctx.higher_neighbours();
    thread_local std::vector<uint64_t> owed;  // per neighbour of mine
    owed.assign(mine.size(), 0);
    const uint64_t marks = ctx.num_vertices() <= mark_up_to ? ctx.num_vertices() : 0;
    me.edges += ListTriangles(
        mine, [&](uint32_t i) { return ctx.higher_neighbours_of(i); }, marks, owed);
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
