#pragma once

// Community detection by synchronous label propagation (Raghavan, Albert & Kumara 2007), exactly
// as LDBC Graphalytics defines it (spec v1.0 §2.3.4): every vertex starts with its own ID as label;
// in each of a fixed number of rounds it takes the label that occurs most often among its in- and
// out-neighbours, counted with multiplicity (a neighbour joined both ways counts twice), ties
// going to the smallest label; a vertex without neighbours keeps its label. Labels travel as
// global indexes, which sort like the IDs (integers numerically, before strings).
#include <span>
#include <vector>

#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::apps::cdlp {

struct Program {
  using VertexValue = uint32_t;
  using EdgeValue = bsp::NoValue;
  using Message = uint32_t;
  // A gather (bsp/program.h): each vertex publishes its label, and Compute reads its in- and
  // out-neighbours' labels where they were published, with no message buffers.
  static constexpr bool kBroadcast = true;
  static constexpr bool kBothDirections = true;

  uint64_t max_iterations = 10;

  void Compute(bsp::Context<Program>& ctx, std::span<const uint32_t> messages) const;
  bool KeepRunning(const bsp::StepStats& stats) const { return stats.superstep < max_iterations; }
};

struct App {
  using Program = cdlp::Program;
  static constexpr bsp::WeightUse kWeights = bsp::WeightUse::kIgnore;
  static absl::StatusOr<Program> Make(const bsp::Params& params, const bsp::GraphFacts& facts);
  // A label is a global index; it is printed as that vertex's ID.
  static void Format(const Program&, uint32_t label, const bsp::VertexNames& names,
                     std::string& out) {
    names.Append(label, out);
  }
};

catalogue::AppInfo Info();

// The serial oracle over the whole input; labels are global indexes.
std::vector<uint32_t> Oracle(const bsp::GraphInput& input, uint64_t iterations);

}  // namespace lockstep::apps::cdlp
