// WritePartitionedForm: the whole graph, held by one process, written in the partitioned form.
#include <utility>
#include <vector>

#include "form/encode.h"
#include "form/form_dir.h"
#include "form/layout.h"
#include "form/manifest.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/load/partitioned_form.h"
#include "lockstep/partition/range.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"

namespace lockstep::load {
namespace {

using bsp::GraphInput;
using bsp::kNoVertex;
using bsp::VertexId;
using form::FileEntry;
using form::Manifest;

absl::Status CheckWritable(const GraphInput& g, uint32_t parts) {
  if (parts == 0 || parts > (uint32_t{1} << 16)) {
    return absl::InvalidArgumentError("partitioned graph: the number of parts must be 1..65536");
  }
  if (g.num_vertices() >= kNoVertex || g.num_stored_edges() >= kNoVertex) {
    return absl::OutOfRangeError("partitioned graph: more than 2^32-1 vertices or edges");
  }
  if (!g.weights.empty() && g.weights.size() != g.src.size()) {
    return absl::InvalidArgumentError("partitioned graph: weights do not match the edges");
  }
  return absl::OkStatus();
}

// What each data file holds: its vertices (sorted by UUID), its primary edges (whose source it
// holds) and its secondary ones (whose target only it holds), in input order.
struct PartsOf {
  std::vector<std::vector<uint32_t>> vertices, primary, secondary;
};

PartsOf SplitGraph(const GraphInput& g, const std::vector<VertexId>& uuid,
                   const partition::Range& split, uint32_t parts) {
  const uint32_t n = static_cast<uint32_t>(g.num_vertices());
  std::vector<uint32_t> part_of(n);
  tbb::parallel_for(uint32_t{0}, n,
                    [&](uint32_t v) { part_of[v] = split.PartitionForUnchecked(uuid[v]); });
  PartsOf p{std::vector<std::vector<uint32_t>>(parts), std::vector<std::vector<uint32_t>>(parts),
            std::vector<std::vector<uint32_t>>(parts)};
  for (uint32_t v = 0; v < n; ++v) p.vertices[part_of[v]].push_back(v);
  for (auto& vs : p.vertices) {
    tbb::parallel_sort(vs.begin(), vs.end(),
                       [&](uint32_t a, uint32_t b) { return uuid[a] < uuid[b]; });
  }
  std::vector<uint64_t> count(parts, 0), count2(parts, 0);
  for (size_t e = 0; e < g.src.size(); ++e) {
    const uint32_t a = part_of[g.src[e]], b = part_of[g.dst[e]];
    ++count[a];
    if (b != a) ++count2[b];
  }
  for (uint32_t k = 0; k < parts; ++k) {
    p.primary[k].reserve(count[k]);
    p.secondary[k].reserve(count2[k]);
  }
  for (size_t e = 0; e < g.src.size(); ++e) {
    const uint32_t a = part_of[g.src[e]], b = part_of[g.dst[e]];
    p.primary[a].push_back(static_cast<uint32_t>(e));
    if (b != a) p.secondary[b].push_back(static_cast<uint32_t>(e));
  }
  return p;
}

// Writes the data files, each part's lists freed once written, and lists them in `m`.
absl::Status WriteDataFiles(const GraphInput& g, const std::vector<VertexId>& uuid,
                            const partition::Range& split, PartsOf p, Manifest& m) {
  const uint32_t parts = static_cast<uint32_t>(p.vertices.size());
  std::vector<uint32_t> local_of(g.num_vertices(), kNoVertex);
  for (uint32_t k = 0; k < parts; ++k) {
    FileEntry f;
    f.name = form::DataFileName(k, parts);
    auto ext = split.Extents(k);
    if (!ext.ok()) return ext.status();
    f.first = ext->first;
    f.last = ext->second;
    const form::EncodeSource source{g.external_ids,     uuid,   nullptr, g.src, g.dst, g.weights,
                                    !g.weights.empty(), nullptr};
    std::string bytes = EncodeDataFile(source, m.graph_id, k, parts, p.vertices[k], p.primary[k],
                                       p.secondary[k], local_of);
    std::vector<uint32_t>().swap(p.vertices[k]);
    std::vector<uint32_t>().swap(p.primary[k]);
    std::vector<uint32_t>().swap(p.secondary[k]);
    f.size = bytes.size();
    f.crcs = form::BlockCrcs(bytes);
    if (auto st = form::WriteWhole(m.dir + "/" + f.name, bytes); !st.ok()) return st;
    m.data.push_back(std::move(f));
  }
  return absl::OkStatus();
}

// Writes the one names file and lists it in `m`.
absl::Status WriteNamesFile(const GraphInput& g, Manifest& m) {
  std::string bytes = form::EncodeNamesFile(g.external_ids, m.graph_id, 0, 1);
  FileEntry f;
  f.name = form::NamesFileName(0, 1);
  f.first_global = 0;
  f.count = g.num_vertices();
  f.size = bytes.size();
  f.crcs = form::BlockCrcs(bytes);
  if (auto st = form::WriteWhole(m.dir + "/" + f.name, bytes); !st.ok()) return st;
  m.names.push_back(std::move(f));
  return absl::OkStatus();
}

}  // namespace

absl::Status WritePartitionedForm(const GraphInput& g, const std::string& dir,
                                  const PartitionedFormOptions& options) {
  const uint32_t parts = options.shards;
  if (auto st = CheckWritable(g, parts); !st.ok()) return st;
  std::vector<std::string> old_files;
  if (auto st = form::PrepareDir(dir, old_files); !st.ok()) return st;

  Manifest m;
  m.dir = dir;
  m.graph_id = form::RandomGraphId();
  m.facts.num_vertices = g.num_vertices();
  m.facts.num_stored_edges = g.num_stored_edges();
  m.facts.symmetric = g.symmetric;
  m.facts.weighted = !g.weights.empty();
  m.facts.format = options.format.empty() ? "edgelist" : options.format;
  m.facts.properties = g.properties;

  const uint32_t n = static_cast<uint32_t>(g.num_vertices());
  std::vector<VertexId> uuid(n);
  tbb::parallel_for(uint32_t{0}, n,
                    [&](uint32_t v) { uuid[v] = bsp::VertexIdFromExternal(g.external_ids[v]); });
  auto split = partition::Range::Whole(parts);
  if (!split.ok()) return split.status();
  if (auto st = WriteDataFiles(g, uuid, *split, SplitGraph(g, uuid, *split, parts), m); !st.ok()) {
    return st;
  }
  if (auto st = WriteNamesFile(g, m); !st.ok()) return st;
  return form::CommitManifest(m, old_files);
}

}  // namespace lockstep::load
