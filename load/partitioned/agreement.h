// The agreement at the end of a partitioned load's input (docs/design.md §4.4): every worker
// gathers every share's tally (ShareTally) and picks the same failure, in the order the
// whole-graph loader would report it, with its line in the whole file; and learns whether the
// input is weighted and whether every worker still receives its IDs raw. Private to the load
// library.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "partitioned/load_state.h"

namespace lockstep::load::partitioned {

struct Agreement {
  // Every edge has a weight (and the program keeps them).
  bool weighted = false;
  // Every worker still receives raw, from one base, and the largest RawIds::part of any.
  bool every_raw = false;
  uint64_t raw_limit = 0;
};

// Collective. The input's first failure on every worker, else what all agree on.
absl::StatusOr<Agreement> AgreeOnInput(const LoadFrame& frame, const InputPlan& plan,
                                       const ShareTally& tally, const RawIds& raw);

}  // namespace lockstep::load::partitioned
