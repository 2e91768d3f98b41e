// LoadPartitionedForm: the whole graph read from the partitioned form, as LoadGraph gives it for
// the text the form was written from.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "form/data_file.h"
#include "form/names_file.h"
#include "lockstep/load/partitioned_form.h"
#include "tbb/blocked_range.h"
#include "tbb/parallel_for.h"

namespace lockstep::load {

using bsp::GraphInput;
using bsp::GraphSource;
using bsp::WeightUse;
using form::DataFile;
using form::EdgeView;

absl::StatusOr<GraphInput> LoadPartitionedForm(const GraphSource& source, WeightUse weights) {
  auto m = form::OpenSource(source);
  if (!m.ok()) return m.status();
  const uint64_t n = m->facts.num_vertices, edges = m->facts.num_stored_edges;
  GraphInput g;
  g.external_ids.resize(n);
  g.src.resize(edges);
  g.dst.resize(edges);
  const bool weighted = m->facts.weighted && weights != WeightUse::kIgnore;
  if (weighted) g.weights.resize(edges);
  // Every vertex is in the file of its UUID, and every edge is taken from its source's file (only
  // the part of each file before its secondary edges is read): each lands at its global index or
  // its position in the input exactly once. One file is mapped at a time, and unmapped once it is
  // used, so that the peak memory is the input's and one file's, not every file's.
  uint64_t nv = 0, ne = 0;
  for (uint32_t k = 0; k < m->data.size(); ++k) {
    auto file = form::ReadDataFile(*m, k, true);
    if (!file.ok()) return file.status();
    const DataFile& d = *file;
    tbb::parallel_for(uint64_t{0}, d.h.num_vertices,
                      [&](uint64_t v) { g.external_ids[d.globals()[v]] = std::string(d.name(v)); });
    const EdgeView p = d.primary();
    const uint32_t* eg = d.end_globals();
    tbb::parallel_for(tbb::blocked_range<uint64_t>(0, p.size), [&](const auto& r) {
      for (uint64_t j = r.begin(); j < r.end(); ++j) {
        const uint32_t at = p.seq[j];
        g.src[at] = eg[p.src[j]];
        g.dst[at] = eg[p.dst[j]];
        if (weighted) g.weights[at] = p.weights[j];
      }
    });
    nv += d.h.num_vertices;
    ne += p.size;
  }
  if (nv != n || ne != edges) {
    return absl::DataLossError(absl::StrCat(m->path, ": the data files hold ", nv, " vertices and ",
                                            ne, " edges, the manifest says ", n, " and ", edges));
  }
  for (uint32_t k = 0; k < m->names.size(); ++k) {
    auto name_of = [&](uint64_t i) { return std::string_view(g.external_ids[i]); };
    if (auto st = form::CheckNamesFile(*m, k, name_of); !st.ok()) return st;
  }
  form::FinishInput(*m, weights, g);
  return g;
}

}  // namespace lockstep::load
