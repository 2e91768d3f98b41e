// Leaving the raw-ID fast path of a partitioned load (raw_ids.h): the IDs received raw become
// vertex-table entries, and the received ends with them. Private to the load library.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/load_stats.h"
#include "partitioned/load_state.h"
#include "partitioned/ranked_bits.h"

namespace lockstep::load::partitioned {

// Numbers the IDs received raw, in increasing order, as the table's first entries, and the edges
// received so far with them (at the ranking, when every edge has come, the assembly does:
// RawIds::ends); the load then goes on through the table. `why`: the stats' record of where
// (PartitionLoadStats::RawEnd). Nothing to do if the load is not receiving raw.
absl::Status LeaveRaw(Received& got, uint32_t rank, bsp::PartitionLoadStats::RawEnd why,
                      bsp::PartitionLoadStats& stats);
// LeaveRaw at the ranking's bitmaps (RawEnd::kBitmaps), which returns the owned IDs' bitmap, at
// least `min_words` 64-bit words long.
absl::StatusOr<std::vector<uint64_t>> LeaveRawForBitmaps(Received& got, uint32_t rank,
                                                         size_t min_words,
                                                         bsp::PartitionLoadStats& stats);
// The received ends, IDs, become their table entries (their ranks in `ids`).
void RewriteRawEnds(Received& got, const RankedBits& ids);

}  // namespace lockstep::load::partitioned
