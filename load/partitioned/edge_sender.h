// The sending side of a partitioned load's edge round (docs/design.md §4.4): every stored edge goes
// to the owner of its source and, when the program needs in-edges or the input is symmetric, of
// its target, as compact records (records.h), with the partition of the end the receiver does not
// own; weights and the bad-weight checks on the way. Private to the load library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/bsp/vertex_id.h"
#include "partitioned/failures.h"
#include "partitioned/load_state.h"
#include "partitioned/record_buffer.h"
#include "partitioned/records.h"
#include "partitioned/share_ids.h"
#include "text/dictionary.h"
#include "text/parse.h"

namespace lockstep::load::partitioned {

// The partitions of a round's IDs on the sending side: integer IDs straight from the share's
// direct table where it covers them (`direct`), else through a dictionary of the round (part[i]
// for its i-th ID, with kUnlistedBit for an ID its owner does not list).
struct RoundIds {
  bool direct = false;
  text::Dictionary dict;
  std::vector<uint32_t> part;
  // The IDs this share meets for the first time, with their partitions and UUIDs (and, through a
  // dictionary, their indexes in it).
  std::vector<text::TextKey> fresh;
  std::vector<uint32_t> fresh_dict, fresh_part;
  std::vector<bsp::VertexId> uuids;
  IdCoding coding = IdCoding::kTagged;
  uint64_t max_id = 0;  // of a round of integer IDs
};

// What sending a round's edges found, in the round's lines.
struct SentRound {
  // Per chunk, the first edge naming an unlisted vertex and the first bad weight.
  std::vector<Failure> failures;
  // The round's first line with a weight and first without one (0 for none).
  uint64_t first_with_weight = 0, first_without_weight = 0;
  uint64_t records = 0;
};

class EdgeSender {
 public:
  // `id_base`: the load's ID base (RawIds::id_base) as far as it is chosen; `vertex_file` names the
  // vertex list in the message of an unlisted vertex.
  EdgeSender(const LoadFrame& frame, const text::ParsedFile& file, const RoundIds& ids,
             const ShareIds& share_ids, bool both_ends, const std::string& vertex_file,
             uint64_t id_base);

  // Appends the round's records to batches[owner] (led by the records' coding).
  SentRound AppendTo(std::vector<std::string>& batches);

 private:
  // How the round's edges are written: the records' coding, and kSlimBased's base.
  struct Coding {
    IdCoding edge = IdCoding::kTagged;
    uint32_t record_base = 0;  // kSlimBased: what its records' IDs are less
  };
  Coding ChooseCoding() const;
  // Fixed-size records, in one pass per chunk: each record's partitions looked up once and the
  // record written to a buffer per destination; then each destination's batch is the chunks'
  // buffers in chunk order.
  void AppendFixed(Coding coding, std::vector<std::string>& batches);
  void WriteChunk(size_t c, Coding coding, std::vector<RecordBuffer>& buffers);
  // Records of tagged IDs (any ID that is not an integer).
  void AppendTagged(std::vector<std::string>& batches);

  struct Ends {
    uint32_t ps, pd;  // the partitions of a record's ends (with kUnlistedBit)
  };
  // Of record i of m of chunk `ch`.
  Ends PartitionsOf(const text::ParsedChunk& ch, size_t i, size_t m) const;
  text::TextKey KeyOf(const text::ParsedChunk& ch, size_t i, int end) const;
  // The failure of `kind` at record i of chunk c, its text made from the record's fields.
  template <class TextOf>
  Failure FailureAt(uint32_t kind, size_t c, size_t i, TextOf&& text_of) const;
  // Calls emit(to, other, i, w) for each record i of chunk c, its ends' partitions from
  // ends_of(ch, i, m), and for the edge's other owner if both ends go; notes the chunk's first
  // unlisted vertex and bad weight.
  template <class EndsOf, class Emit>
  void Walk(size_t c, EndsOf&& ends_of, Emit&& emit);

  const LoadFrame& frame_;
  const text::ParsedFile& file_;
  const RoundIds& ids_;
  const ShareIds& share_ids_;
  const bool both_ends_;
  const bool keep_weights_;
  const std::string& vertex_file_;
  const uint64_t id_base_;
  std::vector<std::optional<Failure>> unlisted_, bad_weight_;  // per chunk
};

}  // namespace lockstep::load::partitioned
