#pragma once

// The message strategies: how a program's messages get from Compute to the next Compute, chosen
// once from the program's traits (program.h). Each is a class over the engine's state (state.h)
// with the same small interface, so the superstep driver (driver.h) has no branch on the program's
// kind, and no strategy has a branch on another's:
//
//   program                                 strategy
//   sends messages, with a combiner         CombinedInbox (combined_inbox.h)
//   sends messages, without one             MessageLists  (message_lists.h)
//   broadcast, combiner min with Improves   MinBroadcast  (min_broadcast.h)
//   broadcast, any other combiner           SumPull       (sum_pull.h)
//   broadcast, no combiner                  Gather        (gather.h)
//
// The first two share push_base.h, the last three broadcast_base.h (relay, peers' positions,
// checkpoints of their kind). Neighbour lists and degrees (neighbours.h) go beside either of the
// first two. A new strategy implements MessageStrategy and takes its place in StrategyFor.

#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/engine/combined_inbox.h"
#include "lockstep/bsp/engine/gather.h"
#include "lockstep/bsp/engine/message_lists.h"
#include "lockstep/bsp/engine/min_broadcast.h"
#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/engine/sum_pull.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/program.h"

namespace lockstep::bsp {

// What the driver, the relay (relay_in.h), the checkpoint (checkpoint.h) and the tracer ask of a
// strategy S, besides the state it derives from. In a superstep: Deliver (last superstep's
// messages into the inbox, waking their targets), then per vertex MessagesOf (what Compute sees),
// the sends, Consume (after it ran), then EndCompute (the blocks' counts) and FlushRemote (to the
// relayer).
template <class S>
concept MessageStrategy = std::derived_from<S, EngineState<typename S::Program>> &&
    requires(S& s, typename S::Block& buf, uint32_t v, const typename S::Message& m,
             StepStats& stats, Exchange& exchange, std::string& bytes, const VertexId& id) {
  { S::kPublishes } -> std::convertible_to<bool>;
  { S::kHoldsBack } -> std::convertible_to<bool>;
  { S::kDecodesRunsInPlace } -> std::convertible_to<bool>;
  { S::kPeakBytes } -> std::convertible_to<PeakBytes>;
  s.Deliver();
  { s.MessagesOf(size_t{0}, v) } -> std::convertible_to<std::span<const typename S::Message>>;
  s.SendToAll(buf, size_t{0}, v, m);
  s.Consume(v);
  s.EndCompute(stats);
  { s.FlushRemote(uint64_t{0}) } -> std::same_as<absl::Status>;
  { s.TargetOfId(id, v) } -> std::same_as<absl::StatusOr<uint32_t>>;
  { s.AgreePositions(exchange) } -> std::same_as<absl::StatusOr<absl::Status>>;
  { s.CheckpointFlag(v) } -> std::convertible_to<uint8_t>;
  s.WriteExtra(bytes);
  s.AfterRestore();
  { s.SendsNotCounted(v, s.BeforeTraced(v)) } -> std::convertible_to<uint64_t>;
};

template <class P>
using StrategyFor = std::conditional_t<
    IsMinBroadcast<P>(), MinBroadcast<P>,
    std::conditional_t<
        IsSumPull<P>(), SumPull<P>,
        std::conditional_t<IsGather<P>(), Gather<P>,
                           std::conditional_t<HasCombiner<P>, CombinedInbox<P>, MessageLists<P>>>>>;

}  // namespace lockstep::bsp
