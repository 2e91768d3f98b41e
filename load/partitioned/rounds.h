// The rounds of a partitioned load (docs/design.md §4.4): worker r of P reads share r of a file in
// rounds of a bounded number of bytes, and every worker runs the same number of rounds: each
// round's first step tells all whether anyone has more, or met a bad line, which ends the rounds.
// The vertex rounds (vertex_rounds.h) and the edge rounds (edge_rounds.h) are built of these.
// Private to the load library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/load_stats.h"
#include "partitioned/failures.h"
#include "partitioned/load_state.h"
#include "partitioned/share_text.h"
#include "text/parse.h"

namespace lockstep::load::partitioned {

// The first step of a round: each worker's batches, each led by a byte saying whether its sender
// has more rounds (1) and whether it met a bad line (2), which ends the rounds.
struct RoundStep {
  std::vector<std::string> batches;
  bool more = false;
  bool stop = false;
};
absl::StatusOr<RoundStep> FirstStep(bsp::Exchange& exchange, std::vector<std::string> out,
                                    bsp::PartitionLoadStats& stats);

// The flags byte that leads a round's batches.
inline uint8_t RoundFlags(bool more, bool stop) {
  return static_cast<uint8_t>((more ? 1 : 0) | (stop ? 2 : 0));
}

// Parses a round's text; a table's rows name errors by their fields.
text::ParsedFile ParseRound(const LoadFrame& frame, const std::string& path, std::string text,
                            text::FileKind kind, bool keep_weights);

// After a parse error anywhere: parses the rest of this share alone, for its first error (noted
// in `failure`) and its line count, which it returns (`lines`: the share's lines so far).
uint64_t FinishShare(const LoadFrame& frame, ShareText& reader, text::FileKind kind, uint64_t lines,
                     Failure& failure);

}  // namespace lockstep::load::partitioned
