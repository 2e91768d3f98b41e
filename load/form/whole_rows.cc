// LoadWholeRows: the whole graph's CSRs read row by row from the partitioned form, with no edge
// list beside them (bsp::WholeRows).
//
// Every row of vertex v comes from the data file of v's UUID: its stored edges out of v (F) are
// among that file's primary edges, and those into v (R) among its primary and secondary edges, each
// list in input order (so R is their merge by input position). Topology::Build's rows for one part
// are then, with loops stored once:
//   directed:  out = F's targets, in = R's sources
//   symmetric: out = F's, then R's but loops; in-edges are the out-edges (Topology::in_shared)
// A first pass over the primary edges counts F, R and the loops of every vertex (the offsets), a
// second lays each file's rows out. One file is read at a time (not its UUIDs), so the peak is the
// CSR's and one file's.
#include <algorithm>
#include <atomic>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "form/data_file.h"
#include "form/names_file.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/load/partitioned_form.h"
#include "tbb/blocked_range.h"
#include "tbb/parallel_for.h"
#include "tbb/task_arena.h"

namespace lockstep::load {
namespace {

using bsp::GraphSource;
using bsp::WeightUse;
using form::DataFile;
using form::EdgeView;
using form::FileEntry;
using form::Manifest;

constexpr uint32_t kNoFile = UINT32_MAX;

// The counts of the first pass, by global index.
struct Counts {
  std::vector<uint32_t> file;   // the data file holding the vertex
  std::vector<uint32_t> out;    // |F|, loops included
  std::vector<uint32_t> in;     // |R|, loops included
  std::vector<uint32_t> loops;  // symmetric only
};

void Increment(std::vector<uint32_t>& count, uint32_t v) {
  std::atomic_ref<uint32_t>(count[v]).fetch_add(1, std::memory_order_relaxed);
}

// Pass 1: every vertex's file and name length, and its edges' counts.
absl::Status Count(const Manifest& m, bool symmetric, Counts& c, std::vector<uint64_t>& name_end) {
  const uint64_t n = m.facts.num_vertices;
  c.file.assign(n, kNoFile);
  c.out.assign(n, 0);
  c.in.assign(n, 0);
  if (symmetric) c.loops.assign(n, 0);
  name_end.assign(n, 0);
  uint64_t nv = 0, ne = 0;
  for (uint32_t k = 0; k < m.data.size(); ++k) {
    auto file = form::ReadDataFile(m, k, true);
    if (!file.ok()) return file.status();
    const DataFile& d = *file;
    std::atomic<bool> twice{false};
    tbb::parallel_for(uint64_t{0}, d.h.num_vertices, [&](uint64_t i) {
      const uint32_t g = d.globals()[i];
      if (std::atomic_ref<uint32_t>(c.file[g]).exchange(k) != kNoFile) {
        twice.store(true);
      } else {
        name_end[g] = d.name(i).size();
      }
    });
    if (twice.load()) {
      return absl::DataLossError(absl::StrCat(d.path, ": a vertex another data file holds too"));
    }
    const EdgeView p = d.primary();
    const uint32_t* eg = d.end_globals();
    tbb::parallel_for(tbb::blocked_range<uint64_t>(0, p.size), [&](const auto& r) {
      for (uint64_t j = r.begin(); j < r.end(); ++j) {
        const uint32_t s = eg[p.src[j]], t = eg[p.dst[j]];
        Increment(c.out, s);
        Increment(c.in, t);
        if (symmetric && s == t) Increment(c.loops, s);
      }
    });
    nv += d.h.num_vertices;
    ne += p.size;
  }
  if (nv != n || ne != m.facts.num_stored_edges) {
    return absl::DataLossError(absl::StrCat(m.path, ": the data files hold ", nv, " vertices and ",
                                            ne, " edges, the manifest says ", n, " and ",
                                            m.facts.num_stored_edges));
  }
  std::partial_sum(name_end.begin(), name_end.end(), name_end.begin());
  return absl::OkStatus();
}

// One CSR being laid out: its rows and, per vertex, how many of each part are placed. A row is
// its first part then its second (a symmetric out row: F, then R but loops); `first_size` gives
// the first part's size (null: the whole row).
struct Csr {
  std::vector<uint64_t>* offsets;
  std::vector<uint32_t>* ends;
  std::vector<double>* weights;  // null: none
  const std::vector<uint32_t>* first_size;
  std::vector<uint32_t> first_placed, second_placed;

  uint64_t FirstEnd(uint32_t v) const {
    return first_size != nullptr ? (*offsets)[v] + (*first_size)[v] : (*offsets)[v + 1];
  }
  // Places `other` (and its weight) as the next of v's edges in the first or second part; false
  // if that part is full (the file disagrees with the first pass).
  bool Put(uint32_t v, bool second, uint32_t other, double w) {
    uint32_t& placed = second ? second_placed[v] : first_placed[v];
    const uint64_t at = (second ? FirstEnd(v) : (*offsets)[v]) + placed;
    if (at >= (second ? (*offsets)[v + 1] : FirstEnd(v))) return false;
    (*ends)[at] = other;
    if (weights != nullptr) (*weights)[at] = w;
    ++placed;
    return true;
  }
};

// Pass 2, one list of a file: places edge j of `list`, if `take` accepts its vertex (its source
// if `key_src` (F), else its target (R)), in the first part of its row in `a` and, unless a loop,
// in the second part of its row in `b` (each null: none). False if a row overflows.
template <class Take>
bool Place(const EdgeView& list, uint64_t j, const uint32_t* eg, bool key_src, bool weighted,
           Csr* a, Csr* b, Take take) {
  const uint32_t v = eg[key_src ? list.src[j] : list.dst[j]];
  if (!take(v)) return true;  // the other end looked up only for a vertex taken
  const uint32_t other = eg[key_src ? list.dst[j] : list.src[j]];
  const double w = weighted ? list.weights[j] : 0;
  if (a != nullptr && !a->Put(v, false, other, w)) return false;
  return b == nullptr || v == other || b->Put(v, true, other, w);
}

// The rows being laid out, and what the first pass counted.
struct Layout {
  const Manifest& m;
  Counts& c;
  bsp::WholeRows& rows;
  Csr out, in;
  bool symmetric, in_rows, weighted;
};

// Pass 2 for data file k: its vertices' names and rows.
absl::Status PlaceFile(Layout& at, uint32_t k) {
  // A directed graph without in-edges needs no R, hence no secondary edges.
  const bool r_needed = at.symmetric || at.in_rows;
  auto file = r_needed ? form::ReadDataFileRows(at.m, k) : form::ReadDataFile(at.m, k, true);
  if (!file.ok()) return file.status();
  const DataFile& d = *file;
  const std::vector<uint64_t>& name_end = at.rows.name_end;
  tbb::parallel_for(uint64_t{0}, d.h.num_vertices, [&](uint64_t i) {
    const uint32_t g = d.globals()[i];
    const std::string_view name = d.name(i);
    const uint64_t begin = g == 0 ? 0 : name_end[g - 1];
    if (name_end[g] - begin == name.size()) name.copy(at.rows.names.data() + begin, name.size());
  });
  const EdgeView p = d.primary();
  const EdgeView q = r_needed ? d.secondary() : EdgeView{};
  const Counts& c = at.c;
  // Each task scans a whole list but lays out only the rows of its range of vertices, in order:
  // the lists are read T times, the rows written once, with no counters per task. A vertex's
  // edges are only taken from its own file: a misfiled edge leaves a row short.
  const uint64_t n = name_end.size();
  const uint32_t ranges = std::max(1, tbb::this_task_arena::max_concurrency());
  std::atomic<bool> ok{true};
  tbb::parallel_for(uint32_t{0}, (r_needed ? 2 : 1) * ranges, [&](uint32_t task) {
    const uint32_t r = task % ranges;
    const uint64_t lo = n * r / ranges, hi = n * (r + 1) / ranges;
    auto mine = [&](uint32_t v) { return v >= lo && v < hi && c.file[v] == k; };
    bool fine = true;
    if (task < ranges) {  // F: out rows' first part
      for (uint64_t j = 0; j < p.size && fine; ++j) {
        fine = Place(p, j, d.end_globals(), true, at.weighted, &at.out, nullptr, mine);
      }
    } else {  // R, both lists merged by input position: directed in rows, symmetric out's rest
      Csr* a = at.in_rows ? &at.in : nullptr;
      Csr* b = at.symmetric ? &at.out : nullptr;
      uint64_t i = 0, j = 0;
      while (fine && (i < p.size || j < q.size)) {
        const bool from_p = j == q.size || (i < p.size && p.seq[i] < q.seq[j]);
        fine = from_p ? Place(p, i++, d.end_globals(), false, at.weighted, a, b, mine)
                      : Place(q, j++, d.end_globals(), false, at.weighted, a, b, mine);
      }
    }
    if (!fine) ok.store(false);
  });
  if (!ok.load()) {
    return absl::DataLossError(
        absl::StrCat(d.path, ": its edges disagree with the other data files'"));
  }
  return absl::OkStatus();
}

// Every row full: each vertex's edges were all found in its own file.
absl::Status CheckFull(const Layout& at) {
  const std::vector<uint64_t>& off = at.rows.out_offsets;
  for (uint64_t v = 0; v + 1 < off.size(); ++v) {
    const bool full =
        at.out.first_placed[v] == at.c.out[v] &&
        (!at.symmetric || at.out.second_placed[v] == off[v + 1] - off[v] - at.c.out[v]) &&
        (!at.in_rows || at.in.first_placed[v] == at.c.in[v]);
    if (!full) {
      const FileEntry& file = at.m.data[at.c.file[v]];
      return absl::DataLossError(absl::StrCat(at.m.dir, "/", file.name, ": the edges of vertex ", v,
                                              " are not all in its data file"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<WholeFormRows> LoadWholeRows(const GraphSource& source, WeightUse weights,
                                            absl::FunctionRef<bool(bool)> in_edges_if) {
  auto m = form::OpenSource(source);
  if (!m.ok()) return m.status();
  const uint64_t n = m->facts.num_vertices;
  if (n >= bsp::kNoVertex) return absl::OutOfRangeError("too many vertices for 32-bit edge slots");
  const bool symmetric = m->facts.symmetric;
  const bool in_edges = in_edges_if(symmetric);
  const bool weighted = m->facts.weighted && weights != WeightUse::kIgnore;
  WholeFormRows out;
  bsp::WholeRows& rows = out.rows;
  rows.symmetric = symmetric;
  out.properties = m->facts.properties;
  Counts c;
  if (auto st = Count(*m, symmetric, c, rows.name_end); !st.ok()) return st;
  rows.names.resize(n == 0 ? 0 : rows.name_end.back());

  // Offsets: out rows F (+ R but loops), a directed graph's in rows R.
  auto lay_offsets = [&](std::vector<uint64_t>& offsets, const std::vector<uint32_t>& first,
                         const std::vector<uint32_t>* second) {
    offsets.assign(n + 1, 0);
    for (uint64_t v = 0; v < n; ++v) {
      offsets[v + 1] = offsets[v] + first[v] + (second != nullptr ? (*second)[v] - c.loops[v] : 0);
    }
  };
  lay_offsets(rows.out_offsets, c.out, symmetric ? &c.in : nullptr);
  if (symmetric) {  // the offsets hold what is left to check: no need for R's counts and loops
    std::vector<uint32_t>().swap(c.in);
    std::vector<uint32_t>().swap(c.loops);
  }
  rows.out_targets.resize(rows.out_offsets.back());
  if (weighted) out.out_weights.resize(rows.out_targets.size());
  rows.in_shared = in_edges && symmetric;
  const bool in_rows = in_edges && !symmetric;
  if (in_rows) {
    lay_offsets(rows.in_offsets, c.in, nullptr);
    rows.in_sources.resize(rows.in_offsets.back());
    if (weighted) out.in_weights.resize(rows.in_sources.size());
  }
  Layout at{*m,
            c,
            rows,
            {&rows.out_offsets, &rows.out_targets, weighted ? &out.out_weights : nullptr,
             symmetric ? &c.out : nullptr, std::vector<uint32_t>(n, 0),
             std::vector<uint32_t>(symmetric ? n : 0, 0)},
            {&rows.in_offsets,
             &rows.in_sources,
             weighted ? &out.in_weights : nullptr,
             nullptr,
             std::vector<uint32_t>(in_rows ? n : 0, 0),
             {}},
            symmetric,
            in_rows,
            weighted};
  for (uint32_t k = 0; k < m->data.size(); ++k) {
    if (auto st = PlaceFile(at, k); !st.ok()) return st;
  }
  if (auto st = CheckFull(at); !st.ok()) return st;
  auto name_of = [&](uint64_t g) {
    const uint64_t begin = g == 0 ? 0 : rows.name_end[g - 1];
    return std::string_view(rows.names.data() + begin, rows.name_end[g] - begin);
  };
  for (uint32_t k = 0; k < m->names.size(); ++k) {
    if (auto st = form::CheckNamesFile(*m, k, name_of); !st.ok()) return st;
  }
  bsp::ReturnFreedMemory();
  return out;
}

}  // namespace lockstep::load
