#include "partitioned/assembly.h"

#include <utility>
#include <vector>

#include "partitioned/leave_raw.h"
#include "partitioned/orient.h"
#include "partitioned/page_mover.h"
#include "partitioned/raw_ids.h"
#include "partitioned/records.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"
#include "text/parse.h"

namespace lockstep::load::partitioned {
namespace {

using bsp::GraphInput;
using bsp::PartEdges;
using bsp::PartVertices;
using text::kNoIndex;

// Sorts a part's edges (numbered by table entry; `global` gives each entry's global index) by
// (source, target, weight) in global-index order: the part's share of the order LoadGraph sorts a
// whole table's edges in.
void SortPartEdges(PartEdges& edges, std::vector<double>& weights,
                   const std::vector<uint32_t>& global, uint32_t n) {
  const size_t m = edges.size();
  std::vector<std::pair<uint64_t, uint32_t>> order(m);
  tbb::parallel_for(size_t{0}, m, [&](size_t e) {
    order[e] = {uint64_t{global[edges.src(e)]} << 32 | global[edges.dst(e)],
                static_cast<uint32_t>(e)};
  });
  tbb::parallel_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return !weights.empty() && weights[a.second] < weights[b.second];
  });
  PartEdges sorted(m, n);
  sorted.symmetric = edges.symmetric;
  std::vector<double> sorted_weights(weights.size());
  tbb::parallel_for(size_t{0}, m, [&](size_t i) {
    const uint32_t e = order[i].second;
    sorted.Set(i, edges.src(e), edges.dst(e));
    if (!weights.empty()) sorted_weights[i] = weights[e];
  });
  edges = std::move(sorted);
  weights = std::move(sorted_weights);
}

// The vertices in table order (the edges' numbers), the owned ones listed in global-index order:
// no pass over the edges to renumber them. Takes the table's UUIDs and the ranks.
PartVertices PackedVertices(VertexTable& table, Ranks& ranks, uint64_t num_global) {
  PartVertices pv;
  const uint32_t n = table.size();
  std::vector<std::pair<uint32_t, uint32_t>> owned;  // (rank, entry)
  for (uint32_t v = 0; v < n; ++v) {
    if (table.owned[v]) owned.emplace_back(ranks.rank_of[v], v);
  }
  tbb::parallel_sort(owned.begin(), owned.end());
  pv.local_order.resize(owned.size());
  pv.owned_names.resize(owned.size());
  tbb::parallel_for(size_t{0}, owned.size(), [&](size_t i) {
    pv.local_order[i] = owned[i].second;
    pv.owned_names[i] = NameOf(table.KeyAt(owned[i].second));
  });
  owned = {};
  pv.uuids = std::move(table.uuid);
  pv.global = std::move(ranks.rank_of);
  pv.num_global = num_global;
  pv.remote_ends_only = true;
  return pv;
}

// The received edges as they are (table entries), packed sender by sender, each sender's blocks
// returned once copied.
PartEdges PackEdges(std::vector<EdgesFrom>& from, size_t m, uint32_t n, bool symmetric,
                    bsp::PartitionLoadStats& stats) {
  PartEdges edges = PartEdges::Mapped(m, n, n);
  edges.symmetric = symmetric;
  size_t at = 0;
  PageMover mover(edges, {0});
  for (EdgesFrom& e : from) {
    e.src.DrainWith(
        e.dst,
        [&](const uint32_t* s, const uint32_t* d, size_t count) {
          tbb::parallel_for(size_t{0}, count, [&](size_t i) { edges.Set(at + i, s[i], d[i]); });
          at += count;
          mover.Wrote(0, at);
        },
        [&](void* block, size_t bytes) { mover.Give(block, bytes); });
  }
  stats.bytes_moved += mover.moved();
  return edges;
}

// The packed assembly (PartitionLoadOptions::packed_edges) of `result`, whose input is set; `m`:
// the received edges.
absl::Status AssemblePacked(const LoadFrame& frame, const InputPlan& plan, Received& got,
                            Ranks& ranks, size_t m, bool orient, PartitionInput& result,
                            bsp::PartitionLoadStats& stats) {
  const uint32_t n = got.table.size();
  result.packed = true;
  PartVertices& pv = result.vertices;
  pv = PackedVertices(got.table, ranks, ranks.starts[frame.size]);
  const RankedBits ids = got.table.TakeSorted();
  got.table = VertexTable();
  bool oriented = false;
  if (orient) {
    auto laid_out = OrientEdges(frame, got, pv.local_order, n, ids, stats);
    if (!laid_out.ok()) return laid_out.status();
    if (laid_out->has_value()) {
      result.edges = **std::move(laid_out);
      oriented = true;
    }
  }
  if (!oriented) {
    if (got.raw.ends) RewriteRawEnds(got, ids);
    result.edges = PackEdges(got.from, m, n, plan.symmetric, stats);
  }
  got.from.clear();
  if (plan.sorted) SortPartEdges(result.edges, result.input.weights, pv.global, n);
  return absl::OkStatus();
}

// The vertices in global-index order, and the edges renumbered to match in a GraphInput's arrays.
void AssembleInOrder(const InputPlan& plan, Received& got, Ranks& ranks, uint64_t num_global,
                     size_t m, PartitionInput& result) {
  GraphInput& g = result.input;
  const VertexTable& table = got.table;
  const uint32_t n = table.size();
  // Sorted as (rank, entry) pairs: a comparison through rank_of would read it at random.
  std::vector<uint32_t> order(n);
  {
    std::vector<std::pair<uint32_t, uint32_t>> by_rank(n);
    for (uint32_t v = 0; v < n; ++v) by_rank[v] = {ranks.rank_of[v], v};
    tbb::parallel_sort(by_rank.begin(), by_rank.end());
    for (uint32_t i = 0; i < n; ++i) order[i] = by_rank[i].second;
  }
  std::vector<uint32_t> pos(n);
  for (uint32_t i = 0; i < n; ++i) pos[order[i]] = i;
  // The owned vertices' names, in the same order (the remote ones need none).
  std::vector<uint32_t> owned_rank(n, kNoIndex);
  uint32_t owned = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (table.owned[order[i]]) owned_rank[i] = owned++;
  }
  result.vertices.owned_names.resize(owned);
  result.vertices.uuids.resize(n);
  result.vertices.global.resize(n);
  result.vertices.num_global = num_global;
  tbb::parallel_for(uint32_t{0}, n, [&](uint32_t i) {
    const uint32_t v = order[i];
    if (owned_rank[i] != kNoIndex) {
      result.vertices.owned_names[owned_rank[i]] = NameOf(table.KeyAt(v));
    }
    result.vertices.uuids[i] = table.uuid[v];
    result.vertices.global[i] = ranks.rank_of[v];
  });
  order = {};
  owned_rank = {};
  // The vertex table goes before the edge arrays are laid out, where an assembly peaks.
  got.table = VertexTable();
  ranks.rank_of = {};
  // One array at a time, each sender's part freed once copied: the received edges and the laid
  // out ones are never both held whole.
  auto lay_out = [&](Blocks<uint32_t> EdgesFrom::*ends, std::vector<uint32_t>& into) {
    into.resize(m);
    size_t at = 0;
    for (EdgesFrom& e : got.from) {
      (e.*ends).Drain([&](const uint32_t* from, size_t count) {
        tbb::parallel_for(size_t{0}, count, [&](size_t i) { into[at + i] = pos[from[i]]; });
        at += count;
      });
    }
  };
  lay_out(&EdgesFrom::src, g.src);
  lay_out(&EdgesFrom::dst, g.dst);
  got.from.clear();
  // The vertices are in global-index order here: the edges sort as LoadGraph sorts them.
  if (plan.sorted) text::SortStoredEdges(g);
  if (plan.symmetric) bsp::MakeSymmetric(g);
}

}  // namespace

absl::StatusOr<PartitionInput> Assemble(const LoadFrame& frame, const InputPlan& plan,
                                        Received& got, Ranks& ranks, bool weighted,
                                        bsp::PartitionLoadStats& stats) {
  PartitionInput result;
  GraphInput& g = result.input;
  const uint32_t n = got.table.size();
  size_t m = 0;
  for (const EdgesFrom& e : got.from) m += e.src.size();
  if (m >= kNoIndex) return absl::OutOfRangeError("more than 2^32-1 edges are not supported");
  g.directed = !plan.symmetric;
  g.properties = plan.properties;
  if (weighted) {
    g.weights.reserve(m);
    for (EdgesFrom& e : got.from) {
      e.weights.Drain(
          [&](const double* w, size_t count) { g.weights.insert(g.weights.end(), w, w + count); });
    }
  }
  stats.vertices_known = n;
  stats.edges_received = m;
  // A symmetric part's edges go oriented (PartEdges): not for a table's edges (sorted after),
  // weights (laid out per stored edge), or in-edges of a part with a self-loop (a rule left from
  // when the in-CSR was a rotation of the out-CSR; a symmetric part's in-edges are now its
  // out-edges, Topology::in_shared). The orientation reads ends left raw as they are; any other
  // layout wants table entries.
  const bool orient = frame.options.packed_edges && plan.symmetric && !plan.sorted && !weighted;
  if (got.raw.ends && !orient) RewriteRawEnds(got, got.table.sorted());
  if (frame.options.packed_edges) {
    if (auto st = AssemblePacked(frame, plan, got, ranks, m, orient, result, stats); !st.ok()) {
      return st;
    }
  } else {
    AssembleInOrder(plan, got, ranks, ranks.starts[frame.size], m, result);
  }
  result.names = RankNames(ranks.starts, frame.rank, std::move(ranks.names_ints),
                           std::move(ranks.names_texts));
  result.stats = stats;
  return result;
}

}  // namespace lockstep::load::partitioned
