// LoadPartitionedForm: the whole graph read from the partitioned form, as LoadGraph gives it for
// the text the form was written from.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "form/data_file.h"
#include "form/names_file.h"
#include "lockstep/load/partitioned_form.h"
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
  std::vector<uint32_t> all(m->data.size());
  for (uint32_t k = 0; k < all.size(); ++k) all[k] = k;
  auto files = form::ReadDataFiles(*m, all, true);
  if (!files.ok()) return files.status();
  GraphInput g;
  g.external_ids.resize(n);
  g.src.resize(edges);
  g.dst.resize(edges);
  const bool weighted = m->facts.weighted && weights != WeightUse::kIgnore;
  if (weighted) g.weights.resize(edges);
  // Every vertex is in the file of its UUID, and every edge is taken from its source's file (only
  // the part of each file before its secondary edges is read):
  // each lands at its global index or its position in the input exactly once.
  std::vector<uint64_t> vertices_of(files->size(), 0), edges_of(files->size(), 0);
  tbb::parallel_for(size_t{0}, files->size(), [&](size_t i) {
    const DataFile& d = (*files)[i];
    for (uint64_t v = 0; v < d.h.num_vertices; ++v) {
      g.external_ids[d.globals()[v]] = std::string(d.name(v));
    }
    vertices_of[i] = d.h.num_vertices;
    const EdgeView p = d.primary();
    const uint32_t* eg = d.end_globals();
    for (uint64_t j = 0; j < p.size; ++j) {
      const uint32_t at = p.seq[j];
      g.src[at] = eg[p.src[j]];
      g.dst[at] = eg[p.dst[j]];
      if (weighted) g.weights[at] = p.weights[j];
    }
    const uint64_t taken = p.size;
    edges_of[i] = taken;
  });
  uint64_t nv = 0, ne = 0;
  for (size_t i = 0; i < files->size(); ++i) {
    nv += vertices_of[i];
    ne += edges_of[i];
  }
  if (nv != n || ne != edges) {
    return absl::DataLossError(absl::StrCat(m->path, ": the data files hold ", nv, " vertices and ",
                                            ne, " edges, the manifest says ", n, " and ", edges));
  }
  for (uint32_t k = 0; k < m->names.size(); ++k) {
    if (auto st = form::CheckNamesFile(*m, k, g.external_ids); !st.ok()) return st;
  }
  form::FinishInput(*m, weights, g);
  return g;
}

}  // namespace lockstep::load
