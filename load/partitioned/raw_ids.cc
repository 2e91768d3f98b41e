#include "partitioned/raw_ids.h"

#include <algorithm>
#include <cstring>
#include <span>

namespace lockstep::load::partitioned {

using bsp::PartitionLoadStats;

void RawIds::ChooseBase(const std::vector<std::string>& batches, PartitionLoadStats& stats) {
  uint64_t least = kNoLeast;
  for (const std::string& batch : batches) {
    uint64_t l;
    std::memcpy(&l, batch.data() + kLeastAt, sizeof l);
    least = std::min(least, l);
  }
  // IDs that begin within receiving raw's least bound keep positions equal to IDs. Else some room
  // below the least (a later round's IDs may begin a little lower), the base a whole word of the
  // bitmaps.
  constexpr uint64_t kRoom = uint64_t{1} << 16;
  id_base = least == kNoLeast || least < kBound ? 0 : (least - kRoom) & ~uint64_t{63};
  stats.id_base = id_base;
}

bool RawIds::Covers(uint64_t max_id, uint64_t seen) {
  const uint64_t at = max_id - id_base;
  if (at < part.size()) return true;
  // A byte per position below the largest, bounded by what this worker has read and received:
  // a sparse ID space goes through the table instead.
  const uint64_t bound = std::max<uint64_t>(kBound, seen);
  if (at >= bound || at >= text::kNoIndex) return false;
  part.resize(at + 1, kUnknown);
  return true;
}

template <IdCoding C>
bool TakeRawParts(uint8_t* part, uint32_t self, uint32_t parts, const char* records, size_t n,
                  uint32_t offset, EdgesFrom& to) {
  static_assert(C == IdCoding::kNarrowParts || C == IdCoding::kSlimParts);
  constexpr bool kSlim = C == IdCoding::kSlimParts;
  constexpr size_t kBytes = kSlim ? kSlimRecord : sizeof(uint64_t);
  constexpr uint32_t kEndBits = kSlim ? kSlimBits : 32;  // an end's ID and partition
  constexpr uint64_t kEndMask = (uint64_t{1} << kEndBits) - 1;
  auto load = [records](size_t i) {
    if constexpr (kSlim) {
      return LoadSlim(records + kBytes * i);
    } else {
      uint64_t record;
      std::memcpy(&record, records + kBytes * i, kBytes);
      return record;
    }
  };
  const uint32_t shift = kEndBits - std::min(PartitionBits(parts), kEndBits);
  const uint32_t mask = static_cast<uint32_t>((uint64_t{1} << shift) - 1);
  // The blocks' free room, taken when the first record needs it (none for a silent sender).
  std::span<uint32_t> src, dst;
  size_t room = 0, k = 0;
  size_t heads = 0, reverses = 0;
  uint32_t owned_loop = 0;
  constexpr size_t kAhead = 16;  // records: their bytes arrive while these are taken
  size_t fails = 0;
  for (size_t i = 0; i < n; ++i) {
    if (k == room) {
      to.src.Appended(k);
      to.dst.Appended(k);
      src = to.src.Room();
      dst = to.dst.Room();
      room = std::min(src.size(), dst.size());
      k = 0;
    }
    if (i + kAhead < n) {
      const uint64_t ahead = load(i + kAhead);
      __builtin_prefetch(part + ((static_cast<uint32_t>(ahead) & mask) + offset));
      __builtin_prefetch(part + ((static_cast<uint32_t>(ahead >> kEndBits) & mask) + offset));
    }
    const uint64_t record = load(i);
    const auto a = static_cast<uint32_t>(record & kEndMask);
    const auto b = static_cast<uint32_t>((record >> kEndBits) & kEndMask);
    const uint32_t pa = static_cast<uint32_t>(uint64_t{a} >> shift);
    const uint32_t pb = static_cast<uint32_t>(uint64_t{b} >> shift);
    const uint32_t ends[2] = {(a & mask) + offset, (b & mask) + offset};
    const uint32_t mine_a = pa == self, mine_b = pb == self;
    // At least one end this worker's, both ends' partitions real, and each end's entry agrees:
    // as RawIds::NotePartition with OtherPartition's rule, and an end owned exactly when announced
    // (its entry this worker's partition, for good), which the edge counts below assume.
    const uint32_t ok =
        (mine_a | mine_b) & static_cast<uint32_t>(pa < parts) & static_cast<uint32_t>(pb < parts) &
        RawIds::TakeEnd(part[ends[0]], pa, mine_a) & RawIds::TakeEnd(part[ends[1]], pb, mine_b);
    fails += ok ^ 1;
    src[k] = ends[0];
    dst[k] = ends[1];
    ++k;
    const uint32_t loop = ends[0] == ends[1];
    heads += mine_a;
    reverses += mine_b & (loop ^ 1);
    owned_loop |= mine_a & loop;
  }
  to.src.Appended(k);
  to.dst.Appended(k);
  if (to.counted + n == to.src.size()) {  // every edge before counted too
    to.counted += n;
    to.heads += heads;
    to.reverses += reverses;
    to.owned_loop = to.owned_loop || owned_loop != 0;
  }
  return fails == 0;
}

template bool TakeRawParts<IdCoding::kNarrowParts>(uint8_t*, uint32_t, uint32_t, const char*,
                                                   size_t, uint32_t, EdgesFrom&);
template bool TakeRawParts<IdCoding::kSlimParts>(uint8_t*, uint32_t, uint32_t, const char*, size_t,
                                                 uint32_t, EdgesFrom&);

}  // namespace lockstep::load::partitioned
