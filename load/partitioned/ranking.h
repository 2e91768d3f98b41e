// The ranking of a partitioned load (docs/design.md §4.4): global indexes are ranks in
// ExternalIdLess order. While every worker still receives raw, they come from the union of the
// owned IDs' bitmaps with no sort (RankRaw); else from a sample sort over the exchange: the owners
// send their sorted names to the workers whose rank range they fall in, which count, rank and
// answer (RankBySample). Each worker then asks the owners of its remote vertices for their rank
// and UUID (AskRemotes). Private to the load library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/load_stats.h"
#include "partitioned/agreement.h"
#include "partitioned/load_state.h"

namespace lockstep::load::partitioned {

struct Ranks {
  std::vector<uint32_t> rank_of;  // per table entry: its global index (kNoIndex until known)
  // Worker q keeps the names of global indexes [starts[q], starts[q + 1]) (RankNames): these.
  std::vector<uint64_t> starts;
  std::vector<uint64_t> names_ints;
  std::vector<std::string> names_texts;
};

// Collective, after the agreement. If every worker still receives raw, the ranks of the owned
// vertices from the union of the owned IDs' bitmaps; else each leaves raw and nothing (then
// RankBySample).
absl::StatusOr<std::optional<Ranks>> RankRaw(const LoadFrame& frame, const Agreement& agreement,
                                             Received& got, bsp::PartitionLoadStats& stats);
// Collective. The ranks of the owned vertices by a sample sort of every worker's names.
absl::StatusOr<Ranks> RankBySample(const LoadFrame& frame, const VertexTable& table);
// Collective. Each remote vertex's rank and UUID, from its owner, into `rank_of` and the table.
absl::Status AskRemotes(const LoadFrame& frame, VertexTable& table, std::vector<uint32_t>& rank_of);

}  // namespace lockstep::load::partitioned
