#pragma once

// A user's own vertex program that gets the engine's sparse frontiers and push/pull switching for
// free: every vertex learns the smallest vertex, in ID order, that reaches it along directed edges
// (itself included), the forward pass of the colouring algorithm for strongly connected
// components. Its only declarations beyond Compute are what the engine needs to know about its
// messages: each vertex offers one value to all its out-neighbours (kBroadcast), they combine by
// minimum (Combine), and a value no smaller than a vertex's own changes nothing (Improves). The
// engine then pushes a small frontier's values along out-edges and pulls over in-edges when the
// frontier is large, and visits only the vertices that are woken (docs/design.md §3.2, §3.4).
#include <algorithm>
#include <span>

#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"
#include "lockstep/runner/program_runner.h"

namespace example {

struct MinReach {
  using VertexValue = uint32_t;  // a global index: the rank of a vertex's ID
  using EdgeValue = lockstep::bsp::NoValue;
  using Message = uint32_t;

  static constexpr bool kBroadcast = true;
  static void Combine(uint32_t& into, const uint32_t& m) { into = std::min(into, m); }
  static bool Improves(uint32_t value, uint32_t m) { return m < value; }
  uint32_t Init(const lockstep::bsp::Context<MinReach>& ctx) const { return ctx.global_index(); }

  void Compute(lockstep::bsp::Context<MinReach>& ctx, std::span<const uint32_t> messages) const {
    if (ctx.superstep() == 0) {
      ctx.SendToAllNeighbors(ctx.value());
    } else if (!messages.empty() && messages[0] < ctx.value()) {
      ctx.value() = messages[0];
      ctx.SendToAllNeighbors(ctx.value());
    }
    ctx.VoteToHalt();
  }
};

struct MinReachApp {
  using Program = MinReach;
  static constexpr lockstep::bsp::WeightUse kWeights = lockstep::bsp::WeightUse::kIgnore;
  static absl::StatusOr<MinReach> Make(const lockstep::bsp::Params&,
                                       const lockstep::bsp::GraphFacts&) {
    return MinReach{};
  }
  // The smallest reaching vertex by its external ID.
  static void Format(const MinReach&, uint32_t value, const lockstep::bsp::VertexNames& names,
                     std::string& out) {
    names.Append(value, out);
  }
};

inline lockstep::catalogue::AppInfo MinReachInfo() {
  lockstep::catalogue::AppInfo info;
  info.name = "minreach";
  info.summary =
      "the smallest vertex reaching each vertex along directed edges (an example of a "
      "user-written program that gets push/pull for free)";
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<lockstep::runner::JobRunner> {
    return std::make_unique<lockstep::runner::ProgramRunner<MinReachApp>>(report);
  };
  return info;
}

}  // namespace example
