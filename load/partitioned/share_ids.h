// The IDs a worker's share of an input has met, on the sending side of a partitioned load
// (docs/design.md §4.4): each hashed to its UUID once per share, which gives its owner. Private to
// the load library.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lockstep/bsp/oom_safe.h"
#include "lockstep/bsp/vertex_id.h"
#include "partitioned/records.h"
#include "text/dictionary.h"
#include "text/parse.h"

namespace lockstep::load::partitioned {

// The partition of each ID this worker's share has met (sender side), so that each is hashed to
// its UUID once per share; a partition may carry kUnlistedBit. Integer IDs below a bound are held
// in a direct table of 8-bit entries (an array indexed by the ID: a load looks up both ends of
// every edge of every round here, at random, so a byte rather than two keeps twice the IDs in L2);
// the bound grows with the IDs met, at most 8 entries per ID held, so a sparse ID space, or more
// than 126 workers, falls back to the hash map. The table starts at or below the smallest ID the
// direct rounds have met (at 0 if that is below 2^20): a dense ID space far from 0 is covered.
class ShareIds {
 public:
  explicit ShareIds(uint32_t partitions)
      : partitions_(partitions), direct_ok_(partitions < kPending) {}

  // A round's IDs through a dictionary of the round: the partition of each (with kUnlistedBit for
  // an ID its owner does not list), and the ones this share had not met, hashed now, with their
  // UUIDs. The share then holds them.
  struct Met {
    std::vector<uint32_t> part;   // by the dictionary's index
    std::vector<uint32_t> fresh;  // the dictionary's indexes of the new IDs
    std::vector<bsp::VertexId> uuids;
  };
  Met Meet(const text::Dictionary& dict);
  // The same for a round of integer IDs that the direct table covers, without a dictionary of the
  // round: nothing (having done nothing) if the table cannot cover them; else the IDs this share
  // had not met, in increasing order, with their UUIDs and partitions (which the table then
  // holds). `max_id`: the round's largest ID (MaxIntegerId).
  struct MetDirect {
    std::vector<uint64_t> fresh;
    std::vector<uint32_t> part;
    std::vector<bsp::VertexId> uuids;
  };
  std::optional<MetDirect> MeetDirect(const text::ParsedFile& file, uint64_t max_id);

  std::optional<uint32_t> Find(const text::TextKey& k) const {
    if (k.is_int) {
      if (InDirect(k.value) && direct_[k.value - lo_] != kAbsent) {
        return Decode(direct_[k.value - lo_]);
      }
      if (ints_.empty()) return std::nullopt;
      auto it = ints_.find(k.value);
      return it == ints_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
    }
    auto it = texts_.find(Absl(k.text));
    return it == texts_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
  }
  // Adds an ID not held yet with its partition.
  void Add(const text::TextKey& k, uint32_t partition) {
    if (!k.is_int) {
      bsp::GrowOrAbandon(texts_, [&] { return texts_.emplace(std::string(k.text), partition); });
      return;
    }
    ++held_;
    const uint64_t bound = direct_ok_ ? std::max<uint64_t>(uint64_t{1} << 20, 8 * held_) : 0;
    if (k.value >= lo_ && k.value - lo_ >= direct_.size() && k.value - lo_ < bound) {
      direct_.resize(
          std::min<uint64_t>(bound, std::max<uint64_t>(k.value - lo_ + 1, 2 * direct_.size())),
          kAbsent);
    }
    if (InDirect(k.value)) {
      direct_[k.value - lo_] = static_cast<uint8_t>(partition);
      hi_ = std::max(hi_, k.value);
    } else {
      bsp::GrowOrAbandon(ints_, [&] { return ints_.emplace(k.value, partition); });
    }
  }
  // Sets kUnlistedBit on a held ID.
  void MarkUnlisted(const text::TextKey& k) {
    if (k.is_int && InDirect(k.value) && direct_[k.value - lo_] != kAbsent) {
      direct_[k.value - lo_] |= kUnlisted8;
    } else if (k.is_int) {
      ints_.at(k.value) |= kUnlistedBit;
    } else {
      texts_.find(Absl(k.text))->second |= kUnlistedBit;
    }
  }

  // The direct path of a round of integer IDs (no dictionary of the round): whether the direct
  // table can cover the round's IDs, up to `max_id`, for a round of `ends` edge ends (every
  // integer ID held so far is in it, and it stays within 8 entries per ID held or met); if so it
  // then covers them, its start moved down if the round's IDs begin below it. `min_id()` gives
  // the round's smallest ID (the largest uint64_t for none), asked only if the table does not
  // start at 0 or cannot cover the round from 0.
  template <class MinId>
  bool CoverDirect(uint64_t max_id, uint64_t ends, MinId&& min_id_of_round) {
    if (!direct_ok_ || !ints_.empty()) return false;
    const uint64_t bound = std::max<uint64_t>(uint64_t{1} << 20, 8 * (held_ + ends));
    const uint64_t min_id = lo_ == 0 && max_id < bound ? 0 : min_id_of_round();
    if (min_id > max_id) return false;
    least_ = min_id;
    uint64_t lo = min_id < (uint64_t{1} << 20) ? 0 : min_id;
    if (!direct_.empty() && lo >= lo_) lo = lo_;
    const uint64_t top = std::max(max_id, hi_);
    if (top - lo >= bound) return false;
    if (!direct_.empty() && lo < lo_) {
      // Moved down with room to spare below (as much as the table holds, within the bound), so
      // that rounds of falling IDs move it a few times, not once a round.
      lo -= std::min({lo, static_cast<uint64_t>(direct_.size()), bound - 1 - (top - lo)});
      direct_.insert(direct_.begin(), lo_ - lo, kAbsent);
    }
    lo_ = lo;
    hi_ = top;
    if (max_id - lo_ >= direct_.size()) {
      direct_.resize(
          std::min<uint64_t>(bound, std::max<uint64_t>(max_id - lo_ + 1, 2 * direct_.size())),
          kAbsent);
    }
    return true;
  }
  // Between CoverDirect and Place: true for exactly one caller per ID not held yet (callers may
  // run in parallel).
  bool Claim(uint64_t id) {
    std::atomic_ref<uint8_t> e(direct_[id - lo_]);
    uint8_t absent = kAbsent;
    return e.load(std::memory_order_relaxed) == kAbsent &&
           e.compare_exchange_strong(absent, kPending, std::memory_order_relaxed);
  }
  // Holds a claimed ID with its partition (distinct IDs may be placed in parallel).
  void Place(uint64_t id, uint32_t partition) {
    direct_[id - lo_] = static_cast<uint8_t>(partition);
  }
  void CountPlaced(size_t n) { held_ += n; }
  // The partition of a covered, held ID (with kUnlistedBit).
  uint32_t DirectAt(uint64_t id) const { return Decode(direct_[id - lo_]); }
  void PrefetchDirect(uint64_t id) const { __builtin_prefetch(direct_.data() + (id - lo_)); }
  // The direct table's entries, ID DirectStart() first: a partition below kPending, else
  // kAbsent, kPending, or a partition with kUnlisted8.
  const uint8_t* DirectTable() const { return direct_.data(); }
  uint64_t DirectStart() const { return lo_; }
  // After a round CoverDirect covered: at most its least ID (the least itself where the table
  // does not start at 0 or could not cover the round from 0, else 0).
  uint64_t RoundLeast() const { return least_; }

 private:
  static constexpr uint8_t kUnlisted8 = 0x80;
  static constexpr uint8_t kAbsent = 0xff;   // not a partition below kPending, with or without
  static constexpr uint8_t kPending = 0x7f;  // flag: claimed, its partition still coming
  static uint32_t Decode(uint8_t v) {
    return (v & ~uint32_t{kUnlisted8}) | ((v & kUnlisted8) != 0 ? kUnlistedBit : 0);
  }
  bool InDirect(uint64_t id) const { return id >= lo_ && id - lo_ < direct_.size(); }

  uint32_t partitions_;
  bool direct_ok_;
  std::vector<uint8_t> direct_;  // the entry of ID lo_ + i at i
  uint64_t lo_ = 0;
  uint64_t hi_ = 0;  // the largest ID the table covers for a round or holds
  uint64_t least_ = 0;
  uint64_t held_ = 0;
  absl::flat_hash_map<uint64_t, uint32_t> ints_;
  absl::flat_hash_map<std::string, uint32_t> texts_;
};

// The largest ID of a round of integer IDs (0 for none).
uint64_t MaxIntegerId(const text::ParsedFile& file);

}  // namespace lockstep::load::partitioned
