#include "lockstep/bsp/topology.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/bsp/radix_sort.h"
#include "stable_bucket.h"
#include "tbb/blocked_range.h"
#include "tbb/parallel_for.h"
#include "tbb/task_arena.h"

namespace lockstep::bsp {

void PartEdges::Free::operator()(uint8_t* p) const {
  if (mapped != 0) {
    ::munmap(p, mapped);
  } else {
    delete[] p;
  }
}

std::unique_ptr<uint8_t[], PartEdges::Free> PartEdges::Allocate(size_t bytes, bool mapped) {
  if (!mapped) return std::unique_ptr<uint8_t[], Free>(new uint8_t[bytes], Free{0});
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t length = (bytes + page - 1) / page * page;
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return std::unique_ptr<uint8_t[], Free>(static_cast<uint8_t*>(p), Free{length});
}

namespace {

// Sorts (leading 64 bits of a UUID, index) pairs by `less`, which orders by the leading bits
// first. UUIDs are uniform, so a counting sort by the top bits (StableBucket) leaves buckets of
// about four entries, each then sorted by `less`: a comparison sort of the whole took about 3% of
// a worker's load.
template <class Less>
void SortByLeadingBits(std::vector<std::pair<uint64_t, uint32_t>>& v, Less less) {
  const size_t n = v.size();
  if (n < 4096) {
    std::sort(v.begin(), v.end(), less);
    return;
  }
  uint32_t bits = 1;
  while (bits < 20 && (size_t{1} << (bits + 2)) <= n) ++bits;
  const uint32_t shift = 64 - bits;
  auto key = [&](size_t i) { return static_cast<uint32_t>(v[i].first >> shift); };
  StableBucket<decltype(key), uint32_t> bucket(n, uint32_t{1} << bits, key);
  std::vector<uint64_t> start;
  bucket.Count(start);
  std::vector<std::pair<uint64_t, uint32_t>> out(n);
  bucket.Scatter([&](size_t i, uint64_t pos) { out[pos] = v[i]; });
  Release(v);
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    if (start[b + 1] - start[b] > 1) {
      std::sort(out.begin() + static_cast<ptrdiff_t>(start[b]),
                out.begin() + static_cast<ptrdiff_t>(start[b + 1]), less);
    }
  }
  v.swap(out);
}

}  // namespace

namespace {

// Whether offsets (size n + 1) run from 0 to ends.size() without going back, and every end is
// below n.
bool RowsHold(const std::vector<uint64_t>& offsets, const std::vector<uint32_t>& ends, size_t n) {
  if (offsets.size() != n + 1 || offsets.front() != 0 || offsets.back() != ends.size()) {
    return false;
  }
  std::atomic<bool> ok{true};
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n), [&](const auto& r) {
    for (size_t v = r.begin(); v < r.end(); ++v) {
      if (offsets[v + 1] < offsets[v]) ok.store(false, std::memory_order_relaxed);
    }
  });
  tbb::parallel_for(tbb::blocked_range<size_t>(0, ends.size()), [&](const auto& r) {
    for (size_t e = r.begin(); e < r.end(); ++e) {
      if (ends[e] >= n) ok.store(false, std::memory_order_relaxed);
    }
  });
  return ok.load();
}

}  // namespace

absl::StatusOr<Topology> Topology::FromRows(WholeRows rows) {
  const size_t n = rows.name_end.size();
  if (n >= kNoVertex) return absl::OutOfRangeError("too many vertices for 32-bit edge slots");
  const bool in = !rows.in_offsets.empty();
  if ((n > 0 && rows.name_end.back() != rows.names.size()) ||
      !std::is_sorted(rows.name_end.begin(), rows.name_end.end()) ||
      !RowsHold(rows.out_offsets, rows.out_targets, n) ||
      (in && !RowsHold(rows.in_offsets, rows.in_sources, n)) || (!in && !rows.in_sources.empty()) ||
      (rows.in_shared && (in || !rows.symmetric))) {
    return absl::InternalError("a whole graph's rows do not hold together");
  }
  auto split = partition::Range::Whole(1);
  if (!split.ok()) return split.status();
  Topology t(std::move(*split));
  t.symmetric_ = rows.symmetric;
  t.in_shared_ = rows.in_shared;
  t.num_global_ = n;
  t.names_ = std::move(rows.names);
  t.name_end_ = std::move(rows.name_end);
  t.out_offsets_ = std::move(rows.out_offsets);
  t.out_targets_ = std::move(rows.out_targets);
  t.in_offsets_ = std::move(rows.in_offsets);
  t.in_sources_ = std::move(rows.in_sources);
  t.ids_.resize(n);
  t.global_.resize(n);
  tbb::parallel_for(uint32_t{0}, static_cast<uint32_t>(n), [&](uint32_t v) {
    t.ids_[v] = VertexIdFromExternal(t.external_id(v));
    t.global_[v] = v;
  });
  t.remote_partition_begin_.assign(2, 0);
  if (auto st = t.IndexLocals(); !st.ok()) return st;
  ReturnFreedMemory();
  return t;
}

template <class LeadingOf>
void Topology::IndexBuckets(size_t n, LeadingOf leading_of, std::vector<uint32_t>& buckets,
                            uint32_t& shift) {
  buckets.clear();
  shift = 64;
  if (n < 64) return;
  // About 8 entries per bucket: 2^bits buckets.
  uint32_t bits = 0;
  while ((uint64_t{1} << (bits + 1)) * 8 <= n) ++bits;
  shift = 64 - bits;
  buckets.assign((size_t{1} << bits) + 1, static_cast<uint32_t>(n));
  // Walking down, each bucket starts where the next entry at or above it is.
  size_t r = n;
  for (size_t b = size_t{1} << bits; b-- > 0;) {
    while (r > 0 && (leading_of(r - 1) >> shift) >= b) --r;
    buckets[b] = static_cast<uint32_t>(r);
  }
}

std::vector<uint32_t> Topology::SortedByUuid(const std::vector<VertexId>& ids) {
  const auto n = static_cast<uint32_t>(ids.size());
  // Sorted with the leading bits beside each vertex (the full UUID, then the index, break ties),
  // not through `ids`, which a comparison would read at random.
  std::vector<std::pair<uint64_t, uint32_t>> sorted(n);
  tbb::parallel_for(uint32_t{0}, n, [&](uint32_t v) { sorted[v] = {LeadingBits(ids[v]), v}; });
  SortByLeadingBits(sorted, [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if (ids[a.second] != ids[b.second]) return ids[a.second] < ids[b.second];
    return a.second < b.second;
  });
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = sorted[i].second;
  return order;
}

const Topology::RemoteIndex& Topology::LazyRemoteIndex::Get(const Topology& t) const {
  if (once_ == nullptr) {  // moved from: its table is empty too
    static const RemoteIndex kEmpty;
    return kEmpty;
  }
  std::call_once(*once_, [&] {
    // Isolated: a thread waiting for the sort's tasks takes no other task that could look up a
    // remote vertex and wait on this very call.
    tbb::this_task_arena::isolate([&] {
      index_.by_id = SortedByUuid(t.remote_ids_);
      IndexBuckets(
          index_.by_id.size(),
          [&](size_t i) { return LeadingBits(t.remote_ids_[index_.by_id[i]]); }, index_.bucket,
          index_.shift);
    });
  });
  return index_;
}

absl::Status Topology::IndexLocals() {
  const uint32_t n = num_local();
  local_by_id_ = SortedByUuid(ids_);
  const std::vector<uint32_t>& sorted = local_by_id_;
  // Two external IDs with one UUID: the first vertex in local order that repeats an earlier
  // one's UUID, named with that earlier one.
  uint32_t repeat = kNoVertex, earlier = kNoVertex;
  for (uint32_t i = 1, group = 0; i < n; ++i) {
    if (ids_[sorted[i]] != ids_[sorted[i - 1]]) {
      group = i;
      continue;
    }
    if (sorted[i] < repeat) {
      repeat = sorted[i];
      earlier = sorted[group];
    }
  }
  if (repeat != kNoVertex) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vertex IDs '", std::string(external_id(repeat)), "' and '",
        std::string(external_id(earlier)), "' map to the same UUID ", ToString(ids_[repeat])));
  }
  IndexBuckets(
      n, [&](size_t i) { return LeadingBits(ids_[local_by_id_[i]]); }, local_bucket_,
      local_bucket_shift_);
  return absl::OkStatus();
}

}  // namespace lockstep::bsp
