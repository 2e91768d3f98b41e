// How the workers of a partitioned load (docs/design.md §4.4) spell vertex IDs and edges in the
// batches they exchange: the codings of a batch's IDs, the fixed-size edge records that carry
// their ends' partitions, and the lead of an edge round's batch. Private to the load library.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lockstep/bsp/bytes.h"
#include "text/dictionary.h"
#include "text/parse.h"

namespace lockstep::load::partitioned {

// The error of a batch a peer sent that does not read as the load's records.
absl::Status Malformed();

// How a batch of records spells its IDs: 4- or 8-byte integers, or a tag per ID (an integer's
// value, or the text of any other ID). kNarrowParts (edge records only): 4-byte integers that
// carry their end's partition in their top PartitionBits() bits instead of a partition field,
// which makes a record 8 bytes instead of 12. kSlimParts (edge records only): the same in 3
// bytes per end, a record of 6 bytes, while the IDs leave room for the partition in 24 bits
// (below 2^22 for 3 or 4 workers). kSlimBased (edge records only): kSlimParts of the IDs less a
// base, which the batch gives (8 bytes) before its records, for IDs far from 0 but close together.
enum class IdCoding : uint8_t {
  kNarrow = 0,
  kWide = 1,
  kTagged = 2,
  kNarrowParts = 3,
  kSlimParts = 4,
  kSlimBased = 5
};
constexpr auto kLastCoding = static_cast<uint8_t>(IdCoding::kSlimBased);

// The bits a partition below `partitions` takes at the top of a kNarrowParts ID.
inline uint32_t PartitionBits(uint32_t partitions) {
  return static_cast<uint32_t>(std::bit_width(std::max<uint32_t>(partitions, 1) - 1));
}

// A kNarrowParts edge record: the source's then the target's ID, each with its end's partition
// in its top bits (`shift` = 32 - PartitionBits), as a little-endian 64-bit word.
inline uint64_t NarrowPartsRecord(uint32_t src, uint32_t ps, uint32_t dst, uint32_t pd,
                                  uint32_t shift) {
  return (src | static_cast<uint32_t>(uint64_t{ps} << shift)) |
         uint64_t{dst | static_cast<uint32_t>(uint64_t{pd} << shift)} << 32;
}

// The bits of a kSlimParts end, and a record's bytes. Records are little-endian (a 6-byte record
// is written as the low bytes of an 8-byte store).
constexpr uint32_t kSlimBits = 24;
constexpr size_t kSlimRecord = 6;

// An edge list's round batch leads with its flags (a byte), the length of its announcements, and
// in the first round its sender's least ID (kNoLeast in later rounds, or for none known), each in
// 8 bytes; then the announcements and the edge records.
constexpr uint64_t kNoLeast = std::numeric_limits<uint64_t>::max();
constexpr size_t kLeastAt = 1 + sizeof(uint64_t);
constexpr size_t kRoundLead = kLeastAt + sizeof(uint64_t);
static_assert(std::endian::native == std::endian::little);

// A kSlimParts edge record: the source's then the target's ID, each with its end's partition in
// the top bits of its 24 (`shift` = 24 - PartitionBits), as a little-endian 48-bit value.
inline uint64_t SlimPartsRecord(uint32_t src, uint32_t ps, uint32_t dst, uint32_t pd,
                                uint32_t shift) {
  return (src | ps << shift) | uint64_t{dst | pd << shift} << kSlimBits;
}

// The 48-bit value of the kSlimParts record at `rec`, assembled in registers (a 6-byte copy into a
// zeroed word stalls the load that reads it back).
inline uint64_t LoadSlim(const char* rec) {
  uint32_t low;
  uint16_t high;
  std::memcpy(&low, rec, sizeof low);
  std::memcpy(&high, rec + sizeof low, sizeof high);
  return low | uint64_t{high} << 32;
}

// Of a record whose ends have partitions ps and pd, the one the receiver `self` does not own (its
// own if it owns both), or `parts` (never a partition) if it owns neither: a malformed record.
inline uint32_t OtherPartition(uint32_t ps, uint32_t pd, uint32_t self, uint32_t parts) {
  return ps == self ? pd : pd == self ? ps : parts;
}

inline IdCoding CodingOf(text::IdMode mode) {
  return mode == text::IdMode::kNarrow ? IdCoding::kNarrow
         : mode == text::IdMode::kWide ? IdCoding::kWide
                                       : IdCoding::kTagged;
}

inline void PutKey(std::string& out, IdCoding coding, const text::TextKey& k) {
  using bsp::Put;
  switch (coding) {
    case IdCoding::kNarrow:
    case IdCoding::kNarrowParts:  // never a vertex's key: its partition is not in the key
    case IdCoding::kSlimParts:
    case IdCoding::kSlimBased:
      Put(out, static_cast<uint32_t>(k.value));
      return;
    case IdCoding::kWide:
      Put(out, k.value);
      return;
    case IdCoding::kTagged:
      break;
  }
  if (k.is_int) {
    Put(out, uint8_t{0});
    Put(out, k.value);
  } else {
    Put(out, uint8_t{1});
    Put(out, static_cast<uint32_t>(k.text.size()));
    out.append(k.text);
  }
}

inline bool GetKey(bsp::ByteReader& in, IdCoding coding, text::TextKey& k) {
  k = text::TextKey{true, 0, {}};
  if (coding == IdCoding::kNarrow) {
    uint32_t v;
    if (!in.Get(v)) return false;
    k.value = v;
    return true;
  }
  if (coding == IdCoding::kWide) return in.Get(k.value);
  if (coding == IdCoding::kNarrowParts || coding == IdCoding::kSlimParts ||
      coding == IdCoding::kSlimBased) {
    return false;  // edge records only, read as records
  }
  uint8_t tag;
  if (!in.Get(tag)) return false;
  if (tag == 0) return in.Get(k.value);
  uint32_t n;
  k.is_int = false;
  return tag == 1 && in.Get(n) && in.GetBytes(n, k.text);
}

inline bool GetCoding(bsp::ByteReader& in, IdCoding& coding) {
  uint8_t c;
  if (!in.Get(c) || c > kLastCoding) return false;
  coding = static_cast<IdCoding>(c);
  return true;
}

// A partition's flag, in a sender's lookups, for an ID its owner does not list (a Graphalytics
// graph's edge naming an unlisted vertex).
constexpr uint32_t kUnlistedBit = 0x80000000u;

// absl's maps hash absl::string_view, which need not be std::string_view.
inline absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// An ID as the input spells it.
std::string NameOf(const text::TextKey& k);

}  // namespace lockstep::load::partitioned
