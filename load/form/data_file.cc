#include "form/data_file.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tbb/parallel_for.h"

namespace lockstep::load::form {
namespace {

// The sections of data file `d` are checked for what a reader indexes with them, so that a file
// that is consistent with its checksums but not with itself (a writer's bug) fails instead of
// reading out of bounds.
absl::Status CheckSections(const Manifest& m, const DataFile& d, bool whole_graph,
                           bool secondary = false) {
  auto bad = [&](std::string_view what) {
    return absl::DataLossError(
        absl::StrCat(d.path, ": ", absl::string_view(what.data(), what.size())));
  };
  if ((d.h.weighted != 0) != m.facts.weighted) return bad("weights disagree with the manifest");
  const uint64_t n = d.h.num_vertices, e = d.h.num_ends;
  const uint64_t* o = d.name_offsets();
  if (o[0] != 0 || o[n] != d.h.name_bytes) return bad("bad name table");
  for (uint64_t i = 0; i < n; ++i) {
    if (o[i + 1] < o[i]) return bad("bad name table");
    if (d.globals()[i] >= m.facts.num_vertices) return bad("a global index out of range");
  }
  for (uint64_t i = 0; i < e; ++i) {
    if (d.end_globals()[i] >= m.facts.num_vertices) return bad("a global index out of range");
  }
  auto check_edges = [&](const EdgeView& v) {
    for (uint64_t j = 0; j < v.size; ++j) {
      if (v.src[j] >= e || v.dst[j] >= e || v.seq[j] >= m.facts.num_stored_edges ||
          (j > 0 && v.seq[j] <= v.seq[j - 1])) {
        return false;
      }
    }
    return true;
  };
  if (!check_edges(d.primary())) return bad("an edge out of range or out of order");
  if (secondary && !check_edges(d.secondary())) return bad("an edge out of range or out of order");
  if (whole_graph) return absl::OkStatus();
  if (!check_edges(d.secondary())) return bad("an edge out of range or out of order");
  for (uint64_t i = 0; i < n; ++i) {
    if (!d.Holds(d.uuids()[i]) || (i > 0 && !(d.uuids()[i - 1] < d.uuids()[i]))) {
      return bad("vertices out of order or out of its range");
    }
  }
  return absl::OkStatus();
}

// The file's prefix (whole_graph) or all of it, and with `secondary` (a prefix only) its
// secondary edges too, read apart into `rest`; its sections checked.
absl::StatusOr<DataFile> Read(const Manifest& m, uint32_t part, bool whole_graph, bool secondary) {
  const FileEntry& entry = m.data[part];
  CheckedFile file(m, entry);
  if (auto st = file.Open(); !st.ok()) return st;
  auto h = file.Header(kKindData, part);
  if (!h.ok()) return h.status();
  DataFile d;
  d.part = part;
  d.path = file.path();
  d.first = entry.first;
  d.last = entry.last;
  d.h = *h;
  d.l = LayoutOf(*h);
  const char* at = nullptr;
  const uint64_t bytes = whole_graph ? d.l.prefix : entry.size;
  if (auto st = file.Read(0, bytes, d.buf, at, true); !st.ok()) return st;
  if (secondary) {
    d.rest_offset = d.l.secondary.seq;
    if (auto st = file.Read(d.rest_offset, d.l.end_uuids - d.rest_offset, d.rest, d.rest_at, false);
        !st.ok()) {
      return st;
    }
  }
  if (auto st = CheckSections(m, d, whole_graph, secondary); !st.ok()) return st;
  return d;
}

}  // namespace

absl::StatusOr<DataFile> ReadDataFile(const Manifest& m, uint32_t part, bool whole_graph) {
  return Read(m, part, whole_graph, false);
}

absl::StatusOr<DataFile> ReadDataFileRows(const Manifest& m, uint32_t part) {
  return Read(m, part, true, true);
}

absl::StatusOr<std::vector<DataFile>> ReadDataFiles(const Manifest& m,
                                                    const std::vector<uint32_t>& parts,
                                                    bool whole_graph) {
  std::vector<DataFile> files(parts.size());
  std::vector<absl::Status> status(parts.size());
  tbb::parallel_for(size_t{0}, parts.size(), [&](size_t i) {
    auto d = ReadDataFile(m, parts[i], whole_graph);
    if (d.ok()) {
      files[i] = std::move(*d);
    } else {
      status[i] = d.status();
    }
  });
  for (const absl::Status& st : status) {
    if (!st.ok()) return st;
  }
  return files;
}

absl::StatusOr<Manifest> OpenSource(const bsp::GraphSource& source) {
  auto m = ReadManifest(source.path);
  if (!m.ok()) return m.status();
  if (source.undirected && !m->facts.symmetric) {
    return absl::InvalidArgumentError(
        absl::StrCat(source.path,
                     " was partitioned as a directed graph; partition the text again as "
                     "undirected to use it so"));
  }
  return m;
}

void FinishInput(const Manifest& m, bsp::WeightUse weights, bsp::GraphInput& g) {
  if (weights == bsp::WeightUse::kIgnore) std::vector<double>().swap(g.weights);
  g.directed = !m.facts.symmetric;
  g.properties = m.facts.properties;
  if (m.facts.symmetric) bsp::MakeSymmetric(g);
}

}  // namespace lockstep::load::form
