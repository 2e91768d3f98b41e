#pragma once

#include <boost/uuid/uuid.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace lockstep::partition {

// A vertex's global id (docs/design.md §4.1). Boost stores the 16 bytes big-endian, so the
// byte-wise operator< that boost provides is exactly numeric order, which is the order ranges are
// cut in.
using Uuid = boost::uuids::uuid;

// 00000000-0000-0000-0000-000000000000, the lowest id.
Uuid MinUuid();
// ffffffff-ffff-ffff-ffff-ffffffffffff, the highest id; it belongs to the last part of a Whole()
// range (the original framework put it in no part at all).
Uuid MaxUuid();

// Upper bound on the number of parts: the split points take 16 bytes each, so this caps a Range at
// 256 MiB. Parts are per-worker shares, so any real job is many orders of magnitude below it; the
// cap exists so a bad `n` fails with a status instead of an allocation failure or the OOM killer.
inline constexpr uint64_t kMaxParts = uint64_t{1} << 24;

// An inclusive UUID range [first, last] cut into size() contiguous, non-empty parts of equal width
// w = floor((last - first + 1) / n); the last part also takes the remainder. Worker i owns part i.
//
// Unlike the original framework, part starts are offset by `first` (its splits ignored the start,
// which broke every range not beginning at zero) and any n works over the whole space (its splits
// failed to encode for n >= 257). Over [MinUuid, MaxUuid] lockstep's part starts equal the
// original's split points (docs/design.md §9).
//
// Immutable after Create, so it is safe to share between threads.
class Range {
 public:
  // Errors (InvalidArgument): first > last; n == 0; n > kMaxParts; n larger than the number of ids
  // in [first, last], since each part must hold at least one id. first == last with n == 1 is a
  // valid one-id range.
  static absl::StatusOr<Range> Create(const Uuid& first, const Uuid& last, uint64_t n);
  // The whole id space [MinUuid(), MaxUuid()].
  static absl::StatusOr<Range> Whole(uint64_t n);

  // Number of parts.
  uint64_t size() const { return starts_.size(); }
  const Uuid& first() const { return starts_.front(); }
  const Uuid& last() const { return last_; }

  // Inclusive bounds of part `part`; OutOfRange unless part < size().
  absl::StatusOr<std::pair<Uuid, Uuid>> Extents(uint64_t part) const;

  // The part that holds `id`; OutOfRange if id is outside [first(), last()].
  absl::StatusOr<uint64_t> PartitionFor(const Uuid& id) const;

  // As PartitionFor for an id the caller already knows is inside [first(), last()] (e.g. every id a
  // worker loaded through this Range); skips the bounds check and the status for hot loops. An id
  // outside the range gives an unspecified part (asserted in debug builds).
  uint64_t PartitionForUnchecked(const Uuid& id) const;

 private:
  Range(std::vector<Uuid> starts, const Uuid& last) : starts_(std::move(starts)), last_(last) {}

  // starts_[p] is part p's first id, strictly increasing, starts_[0] == first. Part ends are not
  // stored: part p ends one below starts_[p + 1], which keeps memory at one Uuid per part.
  std::vector<Uuid> starts_;
  Uuid last_;
};

}  // namespace lockstep::partition
