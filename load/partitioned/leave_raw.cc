#include "partitioned/leave_raw.h"

#include <algorithm>
#include <utility>

#include "partitioned/records.h"
#include "tbb/parallel_for.h"

namespace lockstep::load::partitioned {

using bsp::PartitionLoadStats;

namespace {

// LeaveRaw, which returns the owned IDs' bitmap if `keep_owned` (at least `min_words` long).
absl::StatusOr<std::vector<uint64_t>> Leave(Received& got, uint32_t rank,
                                            PartitionLoadStats::RawEnd why,
                                            PartitionLoadStats& stats, bool keep_owned,
                                            size_t min_words) {
  RawIds& raw = got.raw;
  if (!raw.active) return std::vector<uint64_t>();
  raw.active = false;
  stats.raw_end = why;
  const size_t words = std::max((raw.part.size() + 63) / 64, min_words);
  std::vector<uint64_t> known(words), owned(words);
  const auto self = static_cast<uint8_t>(rank);
  tbb::parallel_for(size_t{0}, words, [&](size_t w) {
    uint64_t k = 0, o = 0;
    const size_t end = std::min(raw.part.size(), (w + 1) * 64);
    for (size_t v = w * 64; v < end; ++v) {  // (none past raw.part: padding)
      k |= uint64_t{raw.part[v] != RawIds::kUnknown} << (v & 63);
      o |= uint64_t{raw.part[v] == self} << (v & 63);
    }
    known[w] = k;
    owned[w] = o;
  });
  // Every owned ID came with its UUID, once: an ID that a record alone calls this worker's is
  // malformed.
  uint64_t owned_ids = 0;
  for (uint64_t w : owned) owned_ids += Popcount(w);
  if (owned_ids != raw.owned.size()) return Malformed();
  got.table.AdoptSorted(RankedBits(std::move(known)), raw.id_base, owned, raw.owned, rank,
                        [&](uint64_t v) -> uint32_t { return raw.part[v]; });
  raw.owned = {};
  raw.part = {};
  if (why == PartitionLoadStats::RawEnd::kRanking || why == PartitionLoadStats::RawEnd::kBitmaps) {
    // Every edge has come: the ends stay IDs until the assembly, which lays them out once.
    raw.ends = true;
    raw.owned_ids = keep_owned ? RankedBits(owned) : RankedBits(std::move(owned));
  } else {
    RewriteRawEnds(got, got.table.sorted());
  }
  if (!keep_owned) return std::vector<uint64_t>();
  return owned;
}

}  // namespace

absl::Status LeaveRaw(Received& got, uint32_t rank, PartitionLoadStats::RawEnd why,
                      PartitionLoadStats& stats) {
  return Leave(got, rank, why, stats, false, 0).status();
}

absl::StatusOr<std::vector<uint64_t>> LeaveRawForBitmaps(Received& got, uint32_t rank,
                                                         size_t min_words,
                                                         PartitionLoadStats& stats) {
  return Leave(got, rank, PartitionLoadStats::RawEnd::kBitmaps, stats, true, min_words);
}

void RewriteRawEnds(Received& got, const RankedBits& ids) {
  for (EdgesFrom& e : got.from) {
    for (Blocks<uint32_t>* ends : {&e.src, &e.dst}) {
      ends->Update([&](uint32_t* v, size_t n) {
        tbb::parallel_for(size_t{0}, n, [&](size_t i) { v[i] = ids.Rank(v[i]); });
      });
    }
  }
  got.raw.ends = false;
  got.raw.owned_ids = RankedBits();
}

}  // namespace lockstep::load::partitioned
