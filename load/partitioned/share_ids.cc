#include "partitioned/share_ids.h"

#include <limits>
#include <numeric>

#include "lockstep/bsp/radix_sort.h"
#include "lockstep/partition/range.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"

namespace lockstep::load::partitioned {

using bsp::VertexId;
using text::IdMode;
using text::ParsedChunk;
using text::TextKey;

ShareIds::Met ShareIds::Meet(const text::Dictionary& dict) {
  const size_t n = dict.size();
  Met met;
  std::vector<uint32_t>& part = met.part;
  std::vector<uint32_t>& fresh = met.fresh;
  part.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (const std::optional<uint32_t> known = Find(dict.KeyAt(i))) {
      part[i] = *known;
    } else {
      fresh.push_back(static_cast<uint32_t>(i));
    }
  }
  // The one SHA-1 of each ID in this share, in parallel.
  auto split = partition::Range::Whole(partitions_);
  met.uuids.assign(fresh.size(), VertexId{});
  tbb::parallel_for(size_t{0}, fresh.size(), [&](size_t j) {
    const TextKey k = dict.KeyAt(fresh[j]);
    met.uuids[j] = k.is_int ? bsp::VertexIdFromInteger(k.value) : bsp::VertexIdFromExternal(k.text);
    part[fresh[j]] = static_cast<uint32_t>(split->PartitionForUnchecked(met.uuids[j]));
  });
  for (uint32_t i : fresh) Add(dict.KeyAt(i), part[i]);
  return met;
}

uint64_t MaxIntegerId(const text::ParsedFile& file) {
  uint64_t m = 0;
  for (const ParsedChunk& ch : file.chunks) m = std::max(m, ch.max_id);
  return m;
}
std::optional<ShareIds::MetDirect> ShareIds::MeetDirect(const text::ParsedFile& file,
                                                        uint64_t max_id) {
  const size_t chunks = file.chunks.size();
  auto each_id = [&](size_t c, auto&& f) {
    const ParsedChunk& ch = file.chunks[c];
    if (file.mode == IdMode::kNarrow) {
      for (uint32_t v : ch.narrow) f(uint64_t{v});
    } else {
      for (uint64_t v : ch.wide) f(v);
    }
  };
  uint64_t ends = 0;
  for (const ParsedChunk& ch : file.chunks) ends += ch.num_ids(file.mode);
  // The round's smallest ID, a pass over its IDs, wanted only where a table from 0 does not serve.
  auto min_id = [&] {
    std::vector<uint64_t> least(chunks, std::numeric_limits<uint64_t>::max());
    tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
      each_id(c, [&](uint64_t v) { least[c] = std::min(least[c], v); });
    });
    return std::accumulate(least.begin(), least.end(), std::numeric_limits<uint64_t>::max(),
                           [](uint64_t a, uint64_t b) { return std::min(a, b); });
  };
  if (!CoverDirect(max_id, ends, min_id)) return std::nullopt;
  // Each new ID claimed by one chunk; sorted after, so that the order is the thread count's no
  // more than a dictionary's would be.
  std::vector<std::vector<uint64_t>> claimed(chunks);
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    each_id(c, [&](uint64_t v) {
      if (Claim(v)) claimed[c].push_back(v);
    });
  });
  MetDirect met;
  std::vector<uint64_t>& fresh = met.fresh;
  for (auto& v : claimed) fresh.insert(fresh.end(), v.begin(), v.end());
  claimed = {};
  if (max_id <= std::numeric_limits<uint32_t>::max()) {
    // By a radix sort of the IDs moved to the high words: no comparison.
    std::vector<uint64_t> scratch;
    for (uint64_t& v : fresh) v <<= 32;
    bsp::SortByHighWord(fresh, static_cast<uint32_t>(max_id), scratch);
    for (uint64_t& v : fresh) v >>= 32;
  } else {
    tbb::parallel_sort(fresh.begin(), fresh.end());
  }
  // The one SHA-1 of each ID in this share, in parallel.
  auto split = partition::Range::Whole(partitions_);
  met.uuids.assign(fresh.size(), VertexId{});
  met.part.assign(fresh.size(), 0);
  tbb::parallel_for(size_t{0}, fresh.size(), [&](size_t j) {
    met.uuids[j] = bsp::VertexIdFromInteger(fresh[j]);
    met.part[j] = static_cast<uint32_t>(split->PartitionForUnchecked(met.uuids[j]));
    Place(fresh[j], met.part[j]);
  });
  CountPlaced(fresh.size());
  return met;
}

}  // namespace lockstep::load::partitioned
