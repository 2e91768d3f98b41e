#pragma once

// Weakly connected components by label propagation (HashMin; Malewicz et al. 2010, and LDBC
// Graphalytics spec v1.0 §2.3.6): edge direction is ignored, every vertex starts with its own
// label and takes the smallest label it hears of, passing improvements to all neighbours (out and
// in) under a min combiner. A component ends up labelled by its smallest external ID (integer IDs
// as integers, before strings); labels travel as global indexes, which sort in that order.
//
// Superstep 0 starts with a partition step (docs/design.md §3.9): each partition finds its own
// components with a union-find (Afforest's order: two sampled neighbours per vertex, then every
// edge but those of the largest component found so far; Sutton et al., IPDPS 2018) and labels
// every vertex by its local component's smallest index. Only the vertices with an edge to another
// partition stay awake to publish; in local mode none does, and the job ends after superstep 0.
// With `start own-label` the step is left out: every vertex starts with its own label, and the
// supersteps (and traces) are those of plain HashMin, the same at any partition count.
#include <algorithm>
#include <span>

#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::apps::wcc {

struct Program {
  using VertexValue = uint32_t;  // global index of the component's smallest vertex
  using EdgeValue = bsp::NoValue;
  using Message = uint32_t;
  // A vertex offers its label to all its neighbours, out and in, under min: the engine pushes or
  // pulls it per superstep, and a label no smaller than a vertex's own changes nothing.
  static constexpr bool kBroadcast = true;
  static constexpr bool kBothDirections = true;
  // Whether superstep 0 starts with the partition's union-find (`start union-find`, the default).
  bool union_find = true;

  static void Combine(uint32_t& into, const uint32_t& m) { into = std::min(into, m); }
  static bool Improves(uint32_t label, uint32_t m) { return m < label; }

  uint32_t Init(const bsp::Context<Program>& ctx) const { return ctx.global_index(); }
  // Labels each vertex by the least global index of its component within the partition, and halts
  // those without an edge to another partition (wcc.cc).
  void PartitionStep(bsp::PartitionView<Program>& part) const;

  void Compute(bsp::Context<Program>& ctx, std::span<const uint32_t> messages) const {
    uint32_t label = ctx.value();
    bool changed = ctx.superstep() == 0;
    if (!messages.empty() && messages[0] < label) {
      label = messages[0];
      changed = true;
    }
    if (changed) {
      ctx.value() = label;
      ctx.SendToAllNeighbors(label);
    }
    ctx.VoteToHalt();
  }
};

struct App {
  using Program = wcc::Program;
  static constexpr bsp::WeightUse kWeights = bsp::WeightUse::kIgnore;
  static absl::StatusOr<Program> Make(const bsp::Params& params, const bsp::GraphFacts&);
  // A label is a global index; it is printed as that vertex's ID.
  static void Format(const Program&, uint32_t label, const bsp::VertexNames& names,
                     std::string& out) {
    names.Append(label, out);
  }
};

catalogue::AppInfo Info();

// The serial oracle: union-find over the whole input; the label of each vertex is the smallest
// global index of its component.
std::vector<uint32_t> Oracle(const bsp::GraphInput& input);

}  // namespace lockstep::apps::wcc
