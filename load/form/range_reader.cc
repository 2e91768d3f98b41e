// ReadPartitionedForm and LoadPartitionFromForm: a worker's partition read from the partitioned
// form, from the data files whose UUID ranges overlap its own and its slice of the names.
//
// An edge whose ends lie in two files is in both, primary in its source's. A range reader takes
// the primary copies, and a secondary copy only when its source's file is not among those it
// reads; those files cover one contiguous UUID range U, so "source outside U" picks each edge
// once. The lists, each in input order, are merged by input position.
#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "form/data_file.h"
#include "form/names_file.h"
#include "lockstep/bsp/collectives.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/load/partitioned_form.h"
#include "lockstep/partition/range.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"

namespace lockstep::load {
namespace {

using bsp::GraphInput;
using bsp::kNoVertex;
using bsp::PartVertices;
using bsp::VertexId;
using form::DataFile;
using form::EdgeView;
using form::Manifest;

// The worker's UUID range, and U, the range of the files it reads.
struct Ranges {
  VertexId lo, hi;
  VertexId u_first, u_last;
  bool Owns(const VertexId& id) const { return !(id < lo) && !(hi < id); }
  bool InU(const VertexId& id) const { return !(id < u_first) && !(u_last < id); }
};

// Per file: the owned vertices [vb, ve), the edges taken from each list (in input order) and the
// ends they use, then those ends' positions among the worker's vertices.
struct Taken {
  uint64_t vb = 0, ve = 0;
  std::vector<uint32_t> edges[2];  // primary, secondary
  std::vector<uint8_t> end_used;
  std::vector<uint32_t> end_pos;
};

Taken TakeFrom(const DataFile& d, const Ranges& r, bool both_ends) {
  Taken t;
  const VertexId* begin = d.uuids();
  const VertexId* end = begin + d.h.num_vertices;
  t.vb = std::lower_bound(begin, end, r.lo) - begin;
  t.ve = std::upper_bound(begin, end, r.hi) - begin;
  const uint64_t e = d.h.num_ends;
  std::vector<uint8_t> flags(e);  // bit 0: owned; bit 1: in U
  for (uint64_t x = 0; x < e; ++x) {
    const VertexId& id = d.end_uuids()[x];
    flags[x] = (r.Owns(id) ? 1 : 0) | (r.InU(id) ? 2 : 0);
  }
  t.end_used.assign(e, 0);
  for (int list = 0; list < 2; ++list) {
    const EdgeView v = list == 0 ? d.primary() : d.secondary();
    for (uint64_t j = 0; j < v.size; ++j) {
      const uint8_t s = flags[v.src[j]], t_flags = flags[v.dst[j]];
      if (!((s & 1) || (both_ends && (t_flags & 1)))) continue;
      // A secondary edge's source is in another file: the copy there is taken if this worker
      // reads that file.
      if (list == 1 && (s & 2)) continue;
      t.edges[list].push_back(static_cast<uint32_t>(j));
      t.end_used[v.src[j]] = 1;
      t.end_used[v.dst[j]] = 1;
    }
  }
  return t;
}

// The vertices: owned ones and the remote ends of the edges, by global index.
PartVertices VerticesOf(const std::vector<DataFile>& files, const std::vector<Taken>& taken,
                        const Ranges& r, uint64_t num_global) {
  struct Entry {
    uint32_t global;
    uint32_t file;
    uint64_t index;  // in the file's vertices if owned, else in its ends table
    bool owned;
  };
  std::vector<Entry> entries;
  for (uint32_t i = 0; i < files.size(); ++i) {
    const DataFile& d = files[i];
    for (uint64_t v = taken[i].vb; v < taken[i].ve; ++v) {
      entries.push_back({d.globals()[v], i, v, true});
    }
    for (uint64_t x = 0; x < taken[i].end_used.size(); ++x) {
      if (taken[i].end_used[x] != 0 && !r.Owns(d.end_uuids()[x])) {
        entries.push_back({d.end_globals()[x], i, x, false});
      }
    }
  }
  tbb::parallel_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.global, a.owned) < std::tie(b.global, b.owned);
  });
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [](const Entry& a, const Entry& b) { return a.global == b.global; }),
                entries.end());
  PartVertices pv;
  pv.num_global = num_global;
  pv.uuids.reserve(entries.size());
  pv.global.reserve(entries.size());
  for (const Entry& en : entries) {
    const DataFile& d = files[en.file];
    pv.global.push_back(en.global);
    if (en.owned) {
      pv.uuids.push_back(d.uuids()[en.index]);
      pv.owned_names.emplace_back(d.name(en.index));
    } else {
      pv.uuids.push_back(d.end_uuids()[en.index]);
    }
  }
  return pv;
}

// Each file's used ends to their positions among the vertices (`global`, sorted).
void PlaceEnds(const std::vector<DataFile>& files, const std::vector<uint32_t>& global,
               std::vector<Taken>& taken) {
  tbb::parallel_for(size_t{0}, files.size(), [&](size_t i) {
    const DataFile& d = files[i];
    Taken& t = taken[i];
    t.end_pos.assign(t.end_used.size(), kNoVertex);
    for (uint64_t x = 0; x < t.end_used.size(); ++x) {
      if (t.end_used[x] == 0) continue;
      auto it = std::lower_bound(global.begin(), global.end(), d.end_globals()[x]);
      if (it != global.end() && *it == d.end_globals()[x]) {
        t.end_pos[x] = static_cast<uint32_t>(it - global.begin());
      }
    }
  });
}

// The edges taken, merged into input order.
absl::Status MergeEdges(const std::vector<DataFile>& files, const std::vector<Taken>& taken,
                        bool weighted, GraphInput& g) {
  size_t total = 0;
  for (const Taken& t : taken) total += t.edges[0].size() + t.edges[1].size();
  g.src.resize(total);
  g.dst.resize(total);
  if (weighted) g.weights.resize(total);
  size_t out = 0;
  // Each (file, list) is a stream in input order; the streams hold no edge twice.
  using Head = std::pair<uint32_t, uint32_t>;  // (sequence number, stream = 2 * file + list)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
  std::vector<size_t> next(2 * files.size(), 0);
  auto view = [&](uint32_t stream) {
    const DataFile& d = files[stream / 2];
    return stream % 2 == 0 ? d.primary() : d.secondary();
  };
  for (uint32_t stream = 0; stream < 2 * files.size(); ++stream) {
    const std::vector<uint32_t>& edges = taken[stream / 2].edges[stream % 2];
    if (!edges.empty()) heads.push({view(stream).seq[edges[0]], stream});
  }
  while (!heads.empty()) {
    const uint32_t stream = heads.top().second;
    heads.pop();
    const Taken& t = taken[stream / 2];
    const std::vector<uint32_t>& edges = t.edges[stream % 2];
    const EdgeView v = view(stream);
    const uint32_t j = edges[next[stream]];
    const uint32_t s = t.end_pos[v.src[j]], e = t.end_pos[v.dst[j]];
    if (s == kNoVertex || e == kNoVertex) {
      return absl::DataLossError(
          absl::StrCat(files[stream / 2].path, ": an edge names an unknown vertex"));
    }
    g.src[out] = s;
    g.dst[out] = e;
    if (weighted) g.weights[out] = v.weights[j];
    ++out;
    if (++next[stream] < edges.size()) heads.push({v.seq[edges[next[stream]]], stream});
  }
  return absl::OkStatus();
}

// The names of worker `rank`'s slice of global indexes.
absl::StatusOr<RankNames> NameSlice(const Manifest& m, uint32_t workers, uint32_t rank) {
  const uint64_t n = m.facts.num_vertices;
  std::vector<uint64_t> starts(workers + 1);
  for (uint32_t p = 0; p <= workers; ++p) starts[p] = n * p / workers;
  const uint64_t a = starts[rank], b = starts[rank + 1];
  std::vector<uint64_t> ints;
  std::vector<std::string> texts;
  for (uint32_t k = 0; k < m.names.size(); ++k) {
    const form::FileEntry& entry = m.names[k];
    const uint64_t from = std::max(a, entry.first_global);
    const uint64_t to = std::min(b, entry.first_global + entry.count);
    if (from >= to) continue;
    auto st =
        form::ReadNames(m, k, from - entry.first_global, to - entry.first_global, ints, texts);
    if (!st.ok()) return st;
  }
  return RankNames(std::move(starts), rank, std::move(ints), std::move(texts));
}

}  // namespace

absl::StatusOr<PartitionInput> ReadPartitionedForm(const bsp::GraphSource& source,
                                                   bsp::WeightUse weights, uint32_t workers,
                                                   uint32_t rank, bool in_edges) {
  auto m = form::OpenSource(source);
  if (!m.ok()) return m.status();
  auto split = partition::Range::Whole(workers);
  if (!split.ok()) return split.status();
  auto range = split->Extents(rank);
  if (!range.ok()) return range.status();
  Ranges r{range->first, range->second, {}, {}};
  // The files overlapping the worker's range: a contiguous run, covering U.
  std::vector<uint32_t> parts;
  for (uint32_t k = 0; k < m->data.size(); ++k) {
    if (!(m->data[k].last < r.lo) && !(r.hi < m->data[k].first)) parts.push_back(k);
  }
  if (parts.empty()) return absl::InternalError("partitioned graph: no file covers the range");
  r.u_first = m->data[parts.front()].first;
  r.u_last = m->data[parts.back()].last;
  auto files = form::ReadDataFiles(*m, parts, false);
  if (!files.ok()) return files.status();
  const bool both_ends = in_edges || m->facts.symmetric;
  std::vector<Taken> taken(files->size());
  tbb::parallel_for(size_t{0}, files->size(),
                    [&](size_t i) { taken[i] = TakeFrom((*files)[i], r, both_ends); });
  PartitionInput result;
  result.vertices = VerticesOf(*files, taken, r, m->facts.num_vertices);
  PlaceEnds(*files, result.vertices.global, taken);
  GraphInput& g = result.input;
  const bool weighted = m->facts.weighted && weights != bsp::WeightUse::kIgnore;
  if (auto st = MergeEdges(*files, taken, weighted, g); !st.ok()) return st;
  files = std::vector<DataFile>();
  form::FinishInput(*m, weights, g);
  auto names = NameSlice(*m, workers, rank);
  if (!names.ok()) return names.status();
  result.names = *std::move(names);
  result.stats.vertices_known = result.vertices.uuids.size();
  result.stats.edges_received = g.num_stored_edges();
  return result;
}

absl::StatusOr<PartitionInput> LoadPartitionFromForm(const bsp::GraphSource& source,
                                                     bsp::WeightUse weights,
                                                     bsp::Exchange& exchange, bool in_edges) {
  auto part = ReadPartitionedForm(source, weights, exchange.size(), exchange.rank(), in_edges);
  if (auto st = bsp::AgreeOnStatus(exchange, part.status()); !st.ok()) return st;
  return part;
}

}  // namespace lockstep::load
