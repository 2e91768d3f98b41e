// The vertex rounds of a partitioned load (docs/design.md §4.4): the vertices a graph lists
// (Graphalytics' .v file, or a vertex table) go to their owners, each with its UUID and its line;
// a vertex listed twice is an error at its second listing in file order. Private to the load
// library.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/load_stats.h"
#include "partitioned/load_state.h"
#include "partitioned/share_text.h"
#include "text/parse.h"

namespace lockstep::load::partitioned {

class VertexRounds {
 public:
  VertexRounds(const LoadFrame& frame, ShareTally& tally, VertexTable& table,
               bsp::PartitionLoadStats& stats)
      : frame_(frame), tally_(tally), table_(table), stats_(stats) {}

  // Collective. Reads this worker's share of `path` (or of `rows`, a table's vertex share, if
  // given): its owned vertices go into the table, its failures and lines into the tally.
  absl::Status Run(const std::string& path, std::unique_ptr<bsp::GraphTextShare> rows);

 private:
  // This round's batches: its lines parsed, each distinct ID hashed once, every listing to its
  // owner with its UUID and line.
  std::vector<std::string> Listings(ShareText& reader, const std::string& path);
  void EncodeListings(const text::ParsedFile& file, std::vector<std::string>& out);
  // The owners take the listings of a round.
  absl::Status TakeListings(const std::vector<std::string>& batches);
  // A vertex listed more than once: the error is at its second listing in file order.
  void NoteRelisted();

  const LoadFrame& frame_;
  ShareTally& tally_;
  VertexTable& table_;
  bsp::PartitionLoadStats& stats_;
  uint64_t lines_ = 0;  // of this share, read so far
  // Where each owned vertex was first listed (share, line), and any further listings.
  std::vector<std::pair<uint32_t, uint64_t>> listed_at_;
  std::vector<std::tuple<uint32_t, uint32_t, uint64_t>> relisted_;
};

}  // namespace lockstep::load::partitioned
