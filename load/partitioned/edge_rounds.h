// The edge rounds of a partitioned load (docs/design.md §4.4): each round, a worker parses the
// next lines of its share of the edge input, hashes the IDs its share has not met and tells their
// owners (the vertex of an edge list, with its UUID; the question "is it listed?" for a listed
// graph), and sends every stored edge to the owners of its ends (edge_sender.h), which take them
// (edge_receiver.h). An edge list's edges ride with the announcements, one step a round; a listed
// graph's wait for the owners' answers. Private to the load library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/load_stats.h"
#include "partitioned/edge_sender.h"
#include "partitioned/load_state.h"
#include "partitioned/rounds.h"
#include "partitioned/share_ids.h"
#include "partitioned/share_text.h"
#include "text/parse.h"

namespace lockstep::load::partitioned {

class EdgeRounds {
 public:
  EdgeRounds(const LoadFrame& frame, const InputPlan& plan, ShareTally& tally, Received& got,
             bsp::PartitionLoadStats& stats)
      : frame_(frame),
        plan_(plan),
        tally_(tally),
        got_(got),
        stats_(stats),
        share_ids_(frame.size) {}

  // Collective. Reads this worker's share of the edge input: the stored edges with an end it owns
  // land in `got`, its failures and lines in the tally.
  absl::Status Run();

 private:
  // One round; false once it was the last.
  absl::StatusOr<bool> Round(ShareText& reader);
  // The round's text, parsed unless a parse failed before (failures noted in the tally).
  std::optional<text::ParsedFile> Parse(ShareText& reader);
  // The partitions of the round's IDs, the new ones hashed.
  RoundIds MeetRound(const text::ParsedFile& file);
  // Appends the round's announcements to `out` (and in the first round its least ID).
  void Announce(const RoundIds& ids, const text::ParsedFile& file, std::vector<std::string>& out);
  // Sends the round's edges to their owners, appended to `out`, and frees the round's text.
  void SendEdges(std::optional<text::ParsedFile>& file, const RoundIds& ids,
                 std::vector<std::string>& out);
  // What the owners took of a round's first step: their answers (a listed graph) and the edges
  // that rode with the announcements (an edge list).
  struct Announced {
    std::vector<std::string> answers;
    std::vector<std::string_view> edges_in;
  };
  absl::StatusOr<Announced> TakeAnnouncements(const std::vector<std::string>& batches);
  // An owner takes an announced vertex of its own.
  absl::Status Own(const text::TextKey& k, const bsp::VertexId& uuid);
  // A listed graph: the owners' answers mark the unlisted vertices among the round's new IDs.
  absl::Status MarkUnlisted(RoundIds& ids, std::vector<std::string> answers);
  absl::Status Take(const std::vector<std::string_view>& batches);

  const LoadFrame& frame_;
  const InputPlan& plan_;
  ShareTally& tally_;
  Received& got_;
  bsp::PartitionLoadStats& stats_;
  ShareIds share_ids_;
  uint64_t lines_ = 0;  // of this share, read so far
  bool first_round_ = true;
};

}  // namespace lockstep::load::partitioned
