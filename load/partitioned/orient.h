// A symmetric part's received edges laid out as oriented pairs (bsp::PartEdges, docs/design.md
// §4): the build then keys only the directed edges it keeps, by local index, instead of both
// directions of every stored edge. Private to the load library.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/load_stats.h"
#include "lockstep/bsp/topology.h"
#include "partitioned/load_state.h"
#include "partitioned/ranked_bits.h"

namespace lockstep::load::partitioned {

// The oriented pairs of the received edges (whose blocks it drains), unless the part has a
// self-loop and its build needs in-edges (nothing: nothing done); an error (malformed) if the pairs
// disagree with the counts made as the records came. `local_order`: the owned table entries in
// local order; `n`: the table's size; `ids`: the table's sorted() (the table is gone by then), for
// ends left raw (RawIds::ends).
absl::StatusOr<std::optional<bsp::PartEdges>> OrientEdges(const LoadFrame& frame, Received& got,
                                                          const std::vector<uint32_t>& local_order,
                                                          uint32_t n, const RankedBits& ids,
                                                          bsp::PartitionLoadStats& stats);

}  // namespace lockstep::load::partitioned
