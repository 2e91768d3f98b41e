#include "lockstep/partition/range.h"

#include <algorithm>
#include <bit>
#include <boost/uuid/uuid_io.hpp>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace lockstep::partition {
namespace {

// __extension__ keeps -Wpedantic quiet: __int128 is a GCC/Clang extension, and the only portable
// alternative (hand-rolled two-limb arithmetic) would be more code to get wrong.
__extension__ using U128 = unsigned __int128;

constexpr size_t kUuidBytes = 16;

// The 16 big-endian bytes as an integer: two 8-byte loads, byte-swapped on a little-endian host
// (a part's lookup does this for every ID a load meets).
U128 ToU128(const Uuid& id) {
  uint64_t hi, lo;
  std::memcpy(&hi, id.data, sizeof hi);
  std::memcpy(&lo, id.data + sizeof hi, sizeof lo);
  if constexpr (std::endian::native == std::endian::little) {
    hi = __builtin_bswap64(hi);
    lo = __builtin_bswap64(lo);
  }
  return (U128{hi} << 64) | lo;
}

Uuid FromU128(U128 value) {
  Uuid id;
  for (size_t i = kUuidBytes; i-- > 0;) {
    id.data[i] = static_cast<uint8_t>(value);
    value >>= 8;
  }
  return id;
}

std::string RangeText(const Uuid& first, const Uuid& last) {
  return absl::StrCat("[", boost::uuids::to_string(first), ", ", boost::uuids::to_string(last),
                      "]");
}

}  // namespace

Uuid MinUuid() { return FromU128(0); }

Uuid MaxUuid() { return FromU128(~U128{0}); }

absl::StatusOr<Range> Range::Create(const Uuid& first, const Uuid& last, uint64_t n) {
  if (last < first) {
    return absl::InvalidArgumentError(
        absl::StrCat("partition range: first id ", boost::uuids::to_string(first),
                     " is greater than last id ", boost::uuids::to_string(last)));
  }
  if (n == 0) {
    return absl::InvalidArgumentError("partition range: number of parts must be at least 1, got 0");
  }
  if (n > kMaxParts) {
    return absl::InvalidArgumentError(absl::StrCat(
        "partition range: ", n, " parts requested, more than the supported maximum ", kMaxParts));
  }

  // The id count last - first + 1 is 2^128 for the whole space, one more than U128 holds, so work
  // from span = count - 1 instead. With span = q*n + r (r < n), count = q*n + (r + 1), hence
  // floor(count / n) is q + 1 when r + 1 == n and q otherwise.
  const U128 lo = ToU128(first);
  const U128 span = ToU128(last) - lo;
  if (U128{n} - 1 > span) {
    // count < n <= kMaxParts here, so the count fits in 64 bits for printing.
    return absl::InvalidArgumentError(
        absl::StrCat("partition range: cannot split ", RangeText(first, last), " (",
                     static_cast<uint64_t>(span + 1), " ids) into ", n,
                     " parts: each part must hold at least one id"));
  }
  // Only n == 1 over the whole space makes this 2^128, which wraps to 0; it is then multiplied by
  // p == 0 alone, so the wrap is harmless.
  const U128 width = span / n + (span % n == n - 1 ? 1 : 0);

  std::vector<Uuid> starts;
  starts.reserve(n);
  // p*w <= (n-1)*w <= count - w <= span, so first + p*w never passes last and cannot overflow.
  for (uint64_t p = 0; p < n; ++p) starts.push_back(FromU128(lo + U128{p} * width));
  return Range(std::move(starts), last);
}

absl::StatusOr<Range> Range::Whole(uint64_t n) { return Create(MinUuid(), MaxUuid(), n); }

absl::StatusOr<std::pair<Uuid, Uuid>> Range::Extents(uint64_t part) const {
  if (part >= size()) {
    return absl::OutOfRangeError(absl::StrCat("partition range: part index ", part,
                                              " is out of range for a range of ", size(),
                                              " parts (valid indices are 0 to ", size() - 1, ")"));
  }
  // Parts are non-empty, so the next start is above this one and subtracting 1 cannot wrap.
  const Uuid end = part + 1 < size() ? FromU128(ToU128(starts_[part + 1]) - 1) : last_;
  return std::make_pair(starts_[part], end);
}

absl::StatusOr<uint64_t> Range::PartitionFor(const Uuid& id) const {
  if (id < first() || last_ < id) {
    return absl::OutOfRangeError(absl::StrCat("partition range: id ", boost::uuids::to_string(id),
                                              " is outside the range ", RangeText(first(), last_)));
  }
  return PartitionForUnchecked(id);
}

uint64_t Range::PartitionForUnchecked(const Uuid& id) const {
  assert(!(id < first()) && !(last_ < id));
  // The first start above id is one past id's part; id >= starts_[0], so it is never begin().
  // Compared as integers: boost's operator< is a call to memcmp per comparison, and a load hashes
  // every ID it meets to its part here.
  const U128 key = ToU128(id);
  if (starts_.size() <= 16) {
    // A few parts (a job's workers): count the starts at or below id, with no branch to
    // mispredict on random UUIDs.
    uint64_t at_or_below = 0;
    for (const Uuid& start : starts_) at_or_below += static_cast<uint64_t>(ToU128(start) <= key);
    return at_or_below - 1;
  }
  const auto next = std::upper_bound(starts_.begin(), starts_.end(), key,
                                     [](U128 k, const Uuid& start) { return k < ToU128(start); });
  return static_cast<uint64_t>(std::distance(starts_.begin(), next)) - 1;
}

}  // namespace lockstep::partition
