// The raw-ID fast path of a partitioned load (docs/design.md §4.4): while every ID a worker
// receives is an integer in a range [base, base + bound), it keeps the received edges' IDs as they
// come, less the base (positions), and a byte per position below the bound (the ID's partition,
// or kUnknown for one not met), instead of looking each up in the vertex table; the IDs are
// numbered in increasing order once all have come (LeaveRaw). The base is every worker's
// (ChooseBase), so that their bitmaps of positions merge (ranking.h, RankRaw). Private to the
// load library.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/load_stats.h"
#include "lockstep/bsp/vertex_id.h"
#include "partitioned/blocks.h"
#include "partitioned/ranked_bits.h"
#include "partitioned/records.h"

namespace lockstep::load::partitioned {

struct RawIds {
  static constexpr uint8_t kUnknown = 0xff;
  // The least bound on positions (Covers).
  static constexpr uint64_t kBound = uint64_t{1} << 22;

  // Receiving raw now.
  bool active = false;
  // Receiving raw keeps IDs less it; a sender's kSlimBased records spell them less it.
  uint64_t id_base = 0;
  // By position: the ID's partition, or kUnknown.
  std::vector<uint8_t> part;
  // The owned IDs' UUIDs, by position, as their announcements came.
  std::vector<std::pair<uint64_t, bsp::VertexId>> owned;
  // Left raw once every edge had come (LeaveRaw at the ranking): the received ends are still
  // positions, an ID's table entry is its position's rank among the positions met (the table's
  // sorted()), and these are the owned positions. The assembly lays the ends out from the IDs
  // (OrientEdges), or RewriteRawEnds.
  bool ends = false;
  RankedBits owned_ids;

  // The load's ID base, from the first round's batches (each led by its sender's least ID then,
  // or kNoLeast): the senders' least, less some room, or 0 for IDs that begin near 0. Every worker
  // gets the same batches' leads, so every worker chooses the same.
  void ChooseBase(const std::vector<std::string>& batches, bsp::PartitionLoadStats& stats);
  // Whether this worker can go on receiving raw with IDs up to `max_id` (at least id_base),
  // covering them if so. `seen`: the bytes of text read and the edge ends received so far.
  bool Covers(uint64_t max_id, uint64_t seen);

  // TakeRawParts' check of one end of partition `p` (`mine`: p is this worker's): 1 if its entry
  // is p, or unknown for another's end (which it then notes), else 0. Senders in parallel write
  // the same partition for an ID: atomic, not a race.
  static uint32_t TakeEnd(uint8_t& entry, uint32_t p, uint32_t mine) {
    std::atomic_ref<uint8_t> slot(entry);
    const uint8_t was = slot.load(std::memory_order_relaxed);
    if (was == kUnknown && mine == 0) [[unlikely]] {
      slot.store(static_cast<uint8_t>(p), std::memory_order_relaxed);
      return 1;
    }
    return static_cast<uint32_t>(was == p);
  }
  // Notes in an ID's entry that a record from partition `other` (or this worker's, `self`) names
  // it; false if the entry holds another partition. Only an announcement makes an entry this
  // worker's (an end it owns is announced to it before any record names it): false for an unknown
  // entry that a record names this worker's. Senders in parallel write the same partition for an
  // ID: atomic, not a race.
  static bool NotePartition(uint8_t& entry, uint8_t self, uint32_t other) {
    std::atomic_ref<uint8_t> slot(entry);
    const uint8_t was = slot.load(std::memory_order_relaxed);
    if (was == kUnknown) {
      if (other == self) return false;
      slot.store(static_cast<uint8_t>(other), std::memory_order_relaxed);
      return true;
    }
    return was == self || was == other;  // else two partitions for one ID
  }
};

// The common case of taking edges while raw: n records of coding C (kNarrowParts, 8 bytes, or
// kSlimParts, 6) of narrow IDs with their partitions, no weights, from one sender (run in
// parallel per sender), for worker `self` of `parts`. False if a record is malformed. Its ends
// are kept as positions: what a record spells plus `offset`, modulo 2^32. `part`: RawIds::part.
template <IdCoding C>
bool TakeRawParts(uint8_t* part, uint32_t self, uint32_t parts, const char* records, size_t n,
                  uint32_t offset, EdgesFrom& to);

}  // namespace lockstep::load::partitioned
