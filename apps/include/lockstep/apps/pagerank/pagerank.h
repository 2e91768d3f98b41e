#pragma once

// PageRank by synchronous (Jacobi) power iteration, as LDBC Graphalytics defines it:
//   PR_0(v) = 1/N
//   PR_{t+1}(v) = (1-d)/N + d * (sum_{u->v} PR_t(u)/outdeg(u) + D_t/N)
// where D_t is the total rank of vertices without out-edges (dangling mass, spread over all N
// vertices). Iteration t runs in superstep t. The job stops after `max_iterations` iterations, or
// earlier when the L1 change sum_v |PR_{t+1}(v) - PR_t(v)| drops below `tolerance` (0 = never).
// Self-loops and parallel edges count as edges. Brin & Page 1998; Graphalytics spec v1.0 §2.3.3.
#include <cmath>
#include <span>

#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::apps::pagerank {

struct Program {
  using VertexValue = double;
  using EdgeValue = bsp::NoValue;
  using Message = double;
  static constexpr bool kBroadcast = true;  // runs as a pull over in-edges

  double damping = 0.85;
  double tolerance = 1e-9;
  uint64_t max_iterations = 100;

  // Dangling mass of superstep s goes to dangling[s % 2] and is read in superstep s + 1.
  bsp::SumAggregator<double>* dangling[2] = {nullptr, nullptr};
  bsp::SumAggregator<double>* change = nullptr;

  static void Combine(double& into, const double& m) { into += m; }
  // What Compute publishes (when it does): checkpoints hold ranks only.
  double Regenerate(const double& rank, uint32_t out_degree) const { return rank / out_degree; }

  void Register(bsp::AggregatorRegistry& aggregators) {
    dangling[0] = aggregators.Register<double>("pagerank.dangling.0");
    dangling[1] = aggregators.Register<double>("pagerank.dangling.1");
    change = aggregators.Register<double>("pagerank.change");
  }

  void Compute(bsp::Context<Program>& ctx, std::span<const double> messages) const {
    const double n = static_cast<double>(ctx.num_vertices());
    const uint64_t s = ctx.superstep();
    double rank = 1.0 / n;
    if (s > 0) {
      const double incoming = messages.empty() ? 0.0 : messages[0];
      rank = (1.0 - damping) / n + damping * (incoming + dangling[(s - 1) % 2]->Get() / n);
      // The change decides nothing when every iteration runs (tolerance 0, as Graphalytics
      // runs PageRank): its exact sum is not taken (about a tenth of an iteration).
      if (tolerance > 0) ctx.Aggregate(change, std::abs(rank - ctx.value()));
    }
    ctx.value() = rank;
    if (s == max_iterations) return;  // the last iteration: nobody reads what would be sent
    if (ctx.out_degree() == 0) {
      ctx.Aggregate(dangling[s % 2], rank);
    } else {
      ctx.SendToAllNeighbors(rank / ctx.out_degree());
    }
  }

  absl::Status PreStep(uint64_t superstep) {
    dangling[superstep % 2]->Set(0.0);
    change->Set(0.0);
    return absl::OkStatus();
  }

  bool KeepRunning(const bsp::StepStats& stats) const {
    if (stats.superstep >= max_iterations) return false;
    return stats.superstep == 0 || tolerance <= 0 || change->Get() >= tolerance;
  }
};

struct App {
  using Program = pagerank::Program;
  static constexpr bsp::WeightUse kWeights = bsp::WeightUse::kIgnore;
  static absl::StatusOr<Program> Make(const bsp::Params& params, const bsp::GraphFacts& facts);
  static void Format(const Program&, double rank, std::string& out) {
    bsp::AppendDouble(rank, out);
  }
};

catalogue::AppInfo Info();

// The serial oracle: the same iteration, written plainly over the whole input.
std::vector<double> Oracle(const bsp::GraphInput& input, double damping, double tolerance,
                           uint64_t max_iterations);

}  // namespace lockstep::apps::pagerank
