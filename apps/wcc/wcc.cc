#include "lockstep/apps/wcc/wcc.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "lockstep/apps/common/most_frequent.h"
#include "lockstep/bsp/disjoint_sets.h"
#include "lockstep/runner/program_runner.h"

namespace lockstep::apps::wcc {
namespace {

// Afforest's neighbour rounds: each vertex links its first kRounds neighbours before the largest
// component is guessed.
constexpr uint32_t kRounds = 2;

// The root most of `kSamples` vertices drawn with a fixed seed are in (after Compress): the largest
// component, most likely. Only how much work is skipped depends on it, never the labels.
uint32_t LikelyLargest(std::span<const uint32_t> root) {
  constexpr size_t kSamples = 1024;
  std::mt19937 random(7);
  std::uniform_int_distribution<size_t> pick(0, root.size() - 1);
  std::vector<uint32_t> sample(kSamples);
  for (uint32_t& s : sample) s = root[pick(random)];
  return common::MostFrequent(sample);
}

// Links v with its local neighbours among `slots` from the first'th on.
void LinkLocal(bsp::ConcurrentDisjointSets& sets, const bsp::Topology& t, uint32_t v,
               std::span<const uint32_t> slots, size_t first) {
  for (size_t i = first; i < slots.size(); ++i) {
    if (t.IsLocal(slots[i])) sets.Link(v, slots[i]);
  }
}

// Whether v has an edge, out or in, to a vertex of another partition.
bool CrossesPartitions(const bsp::Topology& t, uint32_t v) {
  auto remote = [&](uint32_t slot) { return !t.IsLocal(slot); };
  if (std::ranges::any_of(t.out_slots(v), remote)) return true;
  return t.has_in_edges() && std::ranges::any_of(t.in_slots(v), remote);
}

}  // namespace

void Program::PartitionStep(bsp::PartitionView<Program>& part) const {
  const bsp::Topology& t = part.topology();
  if (!union_find || part.num_local() == 0) return;
  bsp::ConcurrentDisjointSets sets(part.values());
  for (uint32_t r = 0; r < kRounds; ++r) {
    part.ForEachVertex([&](uint32_t v) {
      const std::span<const uint32_t> out = t.out_slots(v);
      if (r < out.size() && t.IsLocal(out[r])) sets.Link(v, out[r]);
    });
    sets.Compress();
  }
  // The largest component's vertices may skip their remaining edges, as every edge is also seen
  // from its other end: a symmetric graph's out-edges, or a directed graph's in-edges (which a
  // broadcast always has: broadcast_base.h).
  const uint32_t largest = LikelyLargest(sets.parents());
  part.ForEachVertex([&](uint32_t v) {
    if (sets.Parent(v) == largest) return;
    LinkLocal(sets, t, v, t.out_slots(v), kRounds);
    if (!t.symmetric()) LinkLocal(sets, t, v, t.in_slots(v), 0);
  });
  sets.Compress();
  // A root is its set's least local index, so its global index is the set's least (Topology).
  std::span<uint32_t> label = part.values();
  part.ForEachVertex([&](uint32_t v) { label[v] = t.global_index(label[v]); });
  if (t.num_remote() == 0) {
    part.HaltAll();
  } else {
    part.HaltUnless([&](uint32_t v) { return CrossesPartitions(t, v); });
  }
}

absl::StatusOr<Program> App::Make(const bsp::Params& params, const bsp::GraphFacts&) {
  const std::string start = bsp::ParamString(params, "start");
  Program p;
  if (start == "own-label") {
    p.union_find = false;
  } else if (!start.empty() && start != "union-find") {
    return bsp::ParamError("start",
                           absl::StrCat("expected union-find or own-label, got '", start, "'"));
  }
  return p;
}

catalogue::AppInfo Info() {
  catalogue::AppInfo info;
  info.name = "wcc";
  info.summary = "weakly connected components, labelled by their smallest vertex ID";
  info.params = {{"start", "union-find",
                  "union-find: each partition joins its own components before superstep 0; "
                  "own-label: every vertex starts with its own label (plain HashMin)"}};
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
