// The receiving side of a partitioned load's edge round (docs/design.md §4.4): a worker files the
// edges it is sent under their senders, each end as its vertex-table entry, or while it receives
// raw (raw_ids.h) as its position. Private to the load library.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/load_stats.h"
#include "partitioned/load_state.h"
#include "partitioned/records.h"

namespace lockstep::load::partitioned {

// How a batch's fixed-size records read, for worker `self` of `parts`. (Copied into a loop, it
// stays in registers.)
struct RecordShape {
  uint32_t self, parts;
  bool weights;
  // kNarrowParts and kSlimParts: a record's IDs carry their partitions in their top bits.
  uint32_t part_shift;
  uint64_t id_mask;
  // (No kSlimParts batch is valid past 2^23 workers: a partition alone would fill its 24 bits.)
  uint32_t slim_shift;
  uint64_t slim_mask;

  static RecordShape For(uint32_t self, uint32_t parts, bool weights) {
    RecordShape s{self, parts, weights, 0, 0, 0, 0};
    s.part_shift = 32 - PartitionBits(parts);
    s.id_mask = (uint64_t{1} << s.part_shift) - 1;
    s.slim_shift = kSlimBits - std::min(PartitionBits(parts), kSlimBits);
    s.slim_mask = (uint64_t{1} << s.slim_shift) - 1;
    return s;
  }
  static bool Narrow(IdCoding c) { return c == IdCoding::kNarrow || c == IdCoding::kNarrowParts; }
  static bool WithParts(IdCoding c) {
    return c == IdCoding::kNarrowParts || c == IdCoding::kSlimParts;
  }
  // A record's bytes before its weight, and with it.
  static size_t IdsBytes(IdCoding c) {
    if (c == IdCoding::kSlimParts) return kSlimRecord;
    return 2 * (Narrow(c) ? size_t{4} : size_t{8}) + (c == IdCoding::kNarrowParts ? 0 : 4);
  }
  size_t RecordBytes(IdCoding c) const { return IdsBytes(c) + (weights ? 8 : 0); }
  // An end's 24 bits of a kSlimParts record.
  static uint64_t SlimEnd(const char* rec, int end) {
    return (LoadSlim(rec) >> (kSlimBits * end)) & ((uint64_t{1} << kSlimBits) - 1);
  }
  // The ID of end `end` (0 the source, 1 the target) as the record spells it.
  uint64_t KeyAt(IdCoding c, const char* rec, int end) const {
    if (c == IdCoding::kSlimParts) return SlimEnd(rec, end) & slim_mask;
    if (Narrow(c)) {
      uint32_t v;
      std::memcpy(&v, rec + 4 * end, 4);
      return c == IdCoding::kNarrowParts ? v & id_mask : uint64_t{v};
    }
    uint64_t v;
    std::memcpy(&v, rec + 8 * end, 8);
    return v;
  }
  // The partition of the end of a record that the receiver does not own (its own if it owns
  // both).
  uint32_t OtherOf(IdCoding c, const char* rec) const {
    if (c == IdCoding::kSlimParts) {
      return OtherPartition(static_cast<uint32_t>(SlimEnd(rec, 0) >> slim_shift),
                            static_cast<uint32_t>(SlimEnd(rec, 1) >> slim_shift), self, parts);
    }
    if (c != IdCoding::kNarrowParts) {
      uint32_t other;
      std::memcpy(&other, rec + 2 * (Narrow(c) ? 4 : 8), 4);
      return other;
    }
    uint32_t ids[2];
    std::memcpy(ids, rec, 8);
    return OtherPartition(static_cast<uint32_t>(uint64_t{ids[0]} >> part_shift),
                          static_cast<uint32_t>(uint64_t{ids[1]} >> part_shift), self, parts);
  }
};

class EdgeReceiver {
 public:
  EdgeReceiver(const LoadFrame& frame, Received& got, bsp::PartitionLoadStats& stats)
      : frame_(frame),
        got_(got),
        stats_(stats),
        shape_(RecordShape::For(frame.rank, frame.size, frame.keep_weights())) {}

  // Files the edges of a round's last step under their senders. (Each batch: the records'
  // coding, a kSlimBased batch's base, then the records; the caller frees them after.)
  absl::Status Take(const std::vector<std::string_view>& batches);

 private:
  // Each batch's coding, and where its records start.
  absl::Status ReadHeads(const std::vector<std::string_view>& batches);
  // Records of tagged IDs (or a mix): each end interned in the table, one by one.
  absl::Status TakeTagged(const std::vector<std::string_view>& batches);
  // Each batch's count of fixed-size records, and the stats' figures of them.
  absl::Status CountRecords(const std::vector<std::string_view>& batches);
  // The largest ID received and, while raw from a base, the least.
  struct Extremes {
    uint64_t max_id, min_id;
  };
  Extremes FindExtremes(const std::vector<std::string_view>& batches) const;
  // Receiving raw: each end kept as its position, its partition noted.
  absl::Status TakeRaw(const std::vector<std::string_view>& batches);
  // Each end looked up in the vertex table; the ends it does not know added after.
  absl::Status TakeThroughTable(const std::vector<std::string_view>& batches);

  // Calls f with sender p's coding as a constant, so that each loop over its records is compiled
  // for that coding.
  template <class F>
  void WithCoding(uint32_t p, F&& f) const {
    switch (coding_[p]) {
      case IdCoding::kNarrow:
        return f(std::integral_constant<IdCoding, IdCoding::kNarrow>{});
      case IdCoding::kWide:
        return f(std::integral_constant<IdCoding, IdCoding::kWide>{});
      case IdCoding::kNarrowParts:
        return f(std::integral_constant<IdCoding, IdCoding::kNarrowParts>{});
      case IdCoding::kSlimParts:
        return f(std::integral_constant<IdCoding, IdCoding::kSlimParts>{});
      case IdCoding::kSlimBased:  // (read as kSlimParts: ReadHeads)
      case IdCoding::kTagged:
        break;
    }
  }

  const LoadFrame& frame_;
  Received& got_;
  bsp::PartitionLoadStats& stats_;
  const RecordShape shape_;
  // Per sender: the records' coding, the bytes before them (a kSlimBased batch's base too), what
  // their IDs are less (a kSlimBased batch's base, else 0), and how many there are. A kSlimBased
  // batch is read as kSlimParts from its records.
  std::vector<IdCoding> coding_;
  std::vector<size_t> head_;
  std::vector<uint64_t> base_of_;
  std::vector<size_t> records_;
};

}  // namespace lockstep::load::partitioned
