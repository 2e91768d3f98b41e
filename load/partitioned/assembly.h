// The assembly of a partitioned load (docs/design.md §4.4): the worker's vertices (its own and the
// remote ends of its edges) with their global indexes and UUIDs, and its received edges laid out
// for the build (bsp::PartEdges, or a GraphInput's arrays), which then makes exactly the part
// Topology::Build makes from the whole input. Private to the load library.
#pragma once

#include "absl/status/statusor.h"
#include "lockstep/bsp/load_stats.h"
#include "lockstep/load/partition_input.h"
#include "partitioned/load_state.h"
#include "partitioned/ranking.h"

namespace lockstep::load::partitioned {

// Empties `got` and `ranks` into the worker's partition. `weighted`: as the agreement found.
absl::StatusOr<PartitionInput> Assemble(const LoadFrame& frame, const InputPlan& plan,
                                        Received& got, Ranks& ranks, bool weighted,
                                        bsp::PartitionLoadStats& stats);

}  // namespace lockstep::load::partitioned
