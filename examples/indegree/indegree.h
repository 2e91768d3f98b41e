#pragma once

// A user's own vertex program, compiled against the installed lockstep package: every vertex
// counts its in-edges (optionally only those whose weight reaches --min-weight). Superstep 0
// sends a 1 along each qualifying out-edge; the sum combiner merges them; superstep 1 stores the
// sum. A count aggregator reports how many vertices have no in-edges at all.
#include <span>

#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"
#include "lockstep/runner/program_runner.h"

namespace example {

struct InDegree {
  using VertexValue = uint64_t;
  using EdgeValue = double;
  using Message = uint64_t;

  double min_weight = 0;
  lockstep::bsp::CountAggregator* sources = nullptr;

  static void Combine(uint64_t& into, const uint64_t& m) { into += m; }

  void Register(lockstep::bsp::AggregatorRegistry& aggregators) {
    sources = aggregators.Register<uint64_t>("indegree.sources");
  }

  void Compute(lockstep::bsp::Context<InDegree>& ctx, std::span<const uint64_t> messages) const {
    if (ctx.superstep() == 0) {
      const auto slots = ctx.out_slots();
      const auto weights = ctx.out_values();
      for (size_t i = 0; i < slots.size(); ++i) {
        if (weights[i] >= min_weight) ctx.Send(slots[i], 1);
      }
      return;  // stays awake for superstep 1 even if nothing arrives
    }
    ctx.value() = messages.empty() ? 0 : messages[0];
    if (ctx.value() == 0) ctx.Aggregate(sources, uint64_t{1});
    ctx.VoteToHalt();
  }
};

struct InDegreeApp {
  using Program = InDegree;
  static constexpr lockstep::bsp::WeightUse kWeights = lockstep::bsp::WeightUse::kNonNegative;
  static absl::StatusOr<InDegree> Make(const lockstep::bsp::Params& params,
                                       const lockstep::bsp::GraphFacts&) {
    auto min_weight = lockstep::bsp::ParamDouble(params, "min-weight");
    if (!min_weight.ok()) return min_weight.status();
    InDegree p;
    p.min_weight = *min_weight;
    return p;
  }
  static void Format(const InDegree&, uint64_t value, std::string& out) {
    lockstep::bsp::AppendUint(value, out);
  }
  static void Report(const lockstep::bsp::Engine<InDegree>& engine, const lockstep::bsp::Params&,
                     std::ostream& out) {
    out << "vertices without in-edges: " << engine.program().sources->Get() << "\n";
  }
};

inline lockstep::catalogue::AppInfo InDegreeInfo() {
  lockstep::catalogue::AppInfo info;
  info.name = "indegree";
  info.summary = "count each vertex's in-edges (an example of a user-written vertex program)";
  info.params = {{"min-weight", "0", "count only edges with at least this weight"}};
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<lockstep::runner::JobRunner> {
    return std::make_unique<lockstep::runner::ProgramRunner<InDegreeApp>>(report);
  };
  return info;
}

}  // namespace example
