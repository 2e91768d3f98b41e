#include "form/encode.h"

#include <algorithm>

#include "form/layout.h"
#include "lockstep/bsp/checksum.h"
#include "lockstep/bsp/topology.h"
#include "tbb/parallel_for.h"

namespace lockstep::load::form {
namespace {

using bsp::kNoVertex;

template <class T>
void Append(std::string& out, const T* data, size_t n) {
  out.append(reinterpret_cast<const char*>(data), n * sizeof(T));
}
void PadTo8(std::string& out) { out.resize(Pad8(out.size()), '\0'); }

// The ends table of a data file: every vertex its edges name, by global index (vertex indexes are
// in global-index order); `local_of` then gives each its place in it.
std::vector<uint32_t> EndsTable(const EncodeSource& g, const std::vector<uint32_t>& primary,
                                const std::vector<uint32_t>& secondary,
                                std::vector<uint32_t>& local_of) {
  std::vector<uint32_t> ends;
  for (const std::vector<uint32_t>* edges : {&primary, &secondary}) {
    for (uint32_t e : *edges) {
      for (uint32_t v : {g.src[e], g.dst[e]}) {
        if (local_of[v] == kNoVertex) {
          local_of[v] = 0;
          ends.push_back(v);
        }
      }
    }
  }
  std::sort(ends.begin(), ends.end());
  for (uint32_t i = 0; i < ends.size(); ++i) local_of[ends[i]] = i;
  return ends;
}

// One list of edges: input positions, ends (places in the ends table), weights.
void PutEdges(const EncodeSource& g, const std::vector<uint32_t>& edges,
              const std::vector<uint32_t>& local_of, std::string& out) {
  for (uint32_t e : edges) {
    const uint32_t at = g.Position(e);
    Append(out, &at, 1);
  }
  PadTo8(out);
  for (uint32_t e : edges) Append(out, &local_of[g.src[e]], 1);
  PadTo8(out);
  for (uint32_t e : edges) Append(out, &local_of[g.dst[e]], 1);
  PadTo8(out);
  if (g.weighted) {
    for (uint32_t e : edges) Append(out, &g.weights[e], 1);
  }
}

}  // namespace

std::string EncodeDataFile(const EncodeSource& g, uint64_t graph_id, uint32_t part, uint32_t parts,
                           const std::vector<uint32_t>& vertices,
                           const std::vector<uint32_t>& primary,
                           const std::vector<uint32_t>& secondary,
                           std::vector<uint32_t>& local_of) {
  const std::vector<uint32_t> ends = EndsTable(g, primary, secondary, local_of);
  FileHeader h = MakeHeader(graph_id, kKindData);
  h.part = part;
  h.parts = parts;
  h.num_vertices = vertices.size();
  h.num_primary = primary.size();
  h.num_secondary = secondary.size();
  h.num_ends = ends.size();
  h.weighted = g.weighted ? 1 : 0;
  for (uint32_t v : vertices) h.name_bytes += g.names[v].size();
  const DataLayout l = LayoutOf(h);
  std::string out;
  out.reserve(l.size);
  Append(out, &h, 1);
  for (uint32_t v : vertices) {
    const uint32_t global = g.Global(v);
    Append(out, &global, 1);
  }
  PadTo8(out);
  uint64_t offset = 0;
  Append(out, &offset, 1);
  for (uint32_t v : vertices) {
    offset += g.names[v].size();
    Append(out, &offset, 1);
  }
  for (uint32_t v : vertices) out += g.names[v];
  PadTo8(out);
  PutEdges(g, primary, local_of, out);
  for (uint32_t v : ends) {
    const uint32_t global = g.Global(v);
    Append(out, &global, 1);
  }
  PadTo8(out);
  for (uint32_t v : vertices) Append(out, &g.uuid[v], 1);
  PutEdges(g, secondary, local_of, out);
  for (uint32_t v : ends) Append(out, &g.uuid[v], 1);
  for (uint32_t v : ends) local_of[v] = kNoVertex;
  return out;
}

std::string EncodeNamesFile(const std::vector<std::string>& names, uint64_t graph_id, uint32_t part,
                            uint32_t parts) {
  FileHeader h = MakeHeader(graph_id, kKindNames);
  h.part = part;
  h.parts = parts;
  h.num_vertices = names.size();
  for (const std::string& n : names) h.name_bytes += n.size();
  std::string out;
  out.reserve(NamesSize(h));
  Append(out, &h, 1);
  uint64_t offset = 0;
  Append(out, &offset, 1);
  for (const std::string& n : names) {
    offset += n.size();
    Append(out, &offset, 1);
  }
  for (const std::string& n : names) out += n;
  return out;
}

std::vector<uint32_t> BlockCrcs(std::string_view data) {
  std::vector<uint32_t> crcs((data.size() + kBlockBytes - 1) / kBlockBytes);
  tbb::parallel_for(size_t{0}, crcs.size(), [&](size_t k) {
    const size_t from = k * kBlockBytes;
    crcs[k] = bsp::Crc32c(
        std::string_view(data.data() + from, std::min<size_t>(kBlockBytes, data.size() - from)));
  });
  return crcs;
}

}  // namespace lockstep::load::form
