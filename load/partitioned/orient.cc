#include "partitioned/orient.h"

#include <algorithm>

#include "partitioned/leave_raw.h"
#include "partitioned/page_mover.h"
#include "partitioned/raw_ids.h"
#include "partitioned/records.h"

namespace lockstep::load::partitioned {
namespace {

using bsp::PartEdges;
using text::kNoIndex;

// The ends of the received edges read as IDs left raw: the owned table entries are in ID order,
// so if the local order keeps it, an owned ID's local index is its rank among the owned IDs, and
// any ID's entry its rank among all (both bitmaps in L2), with no pass to rewrite the ends first.
struct RawEnds {
  RankedBits::View owned_ids, ids;
  bool Owned(uint32_t v) const { return owned_ids.Has(v); }
  uint32_t Local(uint32_t v) const { return owned_ids.Rank(v); }
  uint32_t Entry(uint32_t v) const { return ids.Rank(v); }
  void Prefetch(uint32_t) const {}
  // An end's partition in its record said whether it is owned, as its ID's bit does now.
  static constexpr bool CountedAtTake() { return true; }
};

// The ends read as table entries: which are owned, a bit each (in L1 or L2, where the counting
// pass reads it at random), and each owned entry's local index (read only for the pairs kept).
struct TableEnds {
  const uint64_t* owned;
  const uint32_t* local;
  bool Owned(uint32_t v) const { return (owned[v >> 6] >> (v & 63)) & 1; }
  uint32_t Local(uint32_t v) const { return local[v]; }
  uint32_t Entry(uint32_t v) const { return v; }
  // The local indexes arrive while the pairs before are laid out.
  void Prefetch(uint32_t v) const { __builtin_prefetch(local + v); }
  // (An announcement after the load left raw may make an entry owned.)
  static constexpr bool CountedAtTake() { return false; }
};

// The stored edges from an owned vertex and the reverses into one, and whether one is a loop at
// an owned vertex: counted as they came (a record names its ends' partitions), else by a pass
// over them.
struct Counts {
  size_t heads = 0, reverses = 0;
  bool loop = false;
};

template <class Ends>
Counts CountOriented(const Ends& ends_in, const std::vector<EdgesFrom>& from) {
  const Ends ends = ends_in;  // pointers, kept in registers
  Counts n;
  for (const EdgesFrom& e : from) {
    if (Ends::CountedAtTake() && e.counted == e.src.size()) {
      n.heads += e.heads;
      n.reverses += e.reverses;
      n.loop = n.loop || e.owned_loop;
      continue;
    }
    e.src.VisitWith(e.dst, [&](const uint32_t* s, const uint32_t* d, size_t count) {
      uint64_t block_loop = 0;
      for (size_t i = 0; i < count; ++i) {
        const uint64_t from_owned = ends.Owned(s[i]);
        n.heads += from_owned;
        n.reverses += ends.Owned(d[i]) & (s[i] != d[i]);
        block_loop |= from_owned & (s[i] == d[i]);
      }
      n.loop = n.loop || block_loop != 0;
    });
  }
  return n;
}

// Each block's pairs in input order, the heads first, each block returned once laid out. The
// counts made as the records came hold by the rule of an owned end (TakeRawParts); still, a pair
// past them is not written, and any difference fails the load, no pair left unwritten.
template <class Ends>
absl::Status LayOut(const Ends& ends_in, std::vector<EdgesFrom>& from, const Counts& counts,
                    PartEdges& edges, bsp::PartitionLoadStats& stats) {
  const Ends ends = ends_in;  // pointers, kept in registers
  const size_t heads = counts.heads;
  const size_t total = heads + counts.reverses;
  size_t h = 0, r = heads;
  bool over = false;
  PageMover mover(edges, {0, heads});
  for (EdgesFrom& e : from) {
    e.src.DrainWith(
        e.dst,
        [&](const uint32_t* s, const uint32_t* d, size_t count) {
          size_t hi = h, ri = r;         // (kept in registers)
          constexpr size_t kAhead = 16;  // pairs
          for (size_t i = 0; i < count; ++i) {
            if (i + kAhead < count) {
              ends.Prefetch(s[i + kAhead]);
              ends.Prefetch(d[i + kAhead]);
            }
            if (ends.Owned(s[i])) {
              if (hi == heads) [[unlikely]] {
                over = true;
              } else {
                edges.Set(hi++, ends.Local(s[i]), ends.Entry(d[i]));
              }
            }
            if (ends.Owned(d[i]) && s[i] != d[i]) {
              if (ri == total) [[unlikely]] {
                over = true;
              } else {
                edges.Set(ri++, ends.Local(d[i]), ends.Entry(s[i]));
              }
            }
          }
          h = hi;
          r = ri;
          mover.Wrote(0, h);
          mover.Wrote(1, r);
        },
        [&](void* block, size_t bytes) { mover.Give(block, bytes); });
  }
  stats.bytes_moved += mover.moved();
  if (over || h != heads || r != total) return Malformed();
  return absl::OkStatus();
}

// OrientEdges for ends read through `ends` (Owned, Local, Entry and Prefetch of an end).
template <class Ends>
absl::StatusOr<std::optional<PartEdges>> OrientWith(const LoadFrame& frame, Received& got,
                                                    const Ends& ends, size_t owned, uint32_t n,
                                                    bsp::PartitionLoadStats& stats) {
  const Counts counts = CountOriented(ends, got.from);
  if (counts.loop && frame.options.in_edges_if_symmetric.value_or(frame.in_edges)) {
    return std::nullopt;
  }
  PartEdges edges = PartEdges::Mapped(counts.heads + counts.reverses, owned, n);
  edges.symmetric = true;
  edges.oriented = true;
  edges.heads = counts.heads;
  stats.oriented = true;
  if (auto st = LayOut(ends, got.from, counts, edges, stats); !st.ok()) return st;
  got.raw.ends = false;
  got.raw.owned_ids = RankedBits();
  return edges;
}

}  // namespace

absl::StatusOr<std::optional<PartEdges>> OrientEdges(const LoadFrame& frame, Received& got,
                                                     const std::vector<uint32_t>& local_order,
                                                     uint32_t n, const RankedBits& ids,
                                                     bsp::PartitionLoadStats& stats) {
  if (got.raw.ends) {
    if (std::is_sorted(local_order.begin(), local_order.end())) {
      // (Every end received raw is below both bitmaps' limit.)
      return OrientWith(frame, got, RawEnds{got.raw.owned_ids.view(), ids.view()},
                        local_order.size(), n, stats);
    }
    RewriteRawEnds(got, ids);
  }
  std::vector<uint64_t> owned((static_cast<size_t>(n) + 63) / 64, 0);
  std::vector<uint32_t> local(n, kNoIndex);
  for (uint32_t i = 0; i < local_order.size(); ++i) {
    local[local_order[i]] = i;
    owned[local_order[i] >> 6] |= uint64_t{1} << (local_order[i] & 63);
  }
  return OrientWith(frame, got, TableEnds{owned.data(), local.data()}, local_order.size(), n,
                    stats);
}

}  // namespace lockstep::load::partitioned
