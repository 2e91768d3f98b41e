// Encoding the partitioned form's files (the layout is layout.h's): a data file from the whole
// graph or from a worker's part of it, a names file, and the checksums the manifest records.
// Private to the load library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/bsp/vertex_id.h"

namespace lockstep::load::form {

// What a data file is written from: the whole graph (one process) or a worker's part of it.
struct EncodeSource {
  const std::vector<std::string>& names;   // by vertex (those the file holds at least)
  const std::vector<bsp::VertexId>& uuid;  // by vertex
  const std::vector<uint32_t>* global;     // by vertex; null: a vertex's index is its global one
  const std::vector<uint32_t>& src;        // stored edges
  const std::vector<uint32_t>& dst;
  const std::vector<double>& weights;  // by edge, if `weighted`
  bool weighted;
  const std::vector<uint32_t>* position;  // by edge; null: an edge's index is its position
  uint32_t Global(uint32_t v) const { return global != nullptr ? (*global)[v] : v; }
  uint32_t Position(uint32_t e) const { return position != nullptr ? (*position)[e] : e; }
};

// Data file `part`: `vertices` (sorted by UUID), `primary` (the stored edges whose source is in
// the part) and `secondary` (those whose target only is), in input order. Vertex indexes must
// be in global-index order. `local_of`: scratch, one entry per vertex, kNoVertex in and out.
std::string EncodeDataFile(const EncodeSource& g, uint64_t graph_id, uint32_t part, uint32_t parts,
                           const std::vector<uint32_t>& vertices,
                           const std::vector<uint32_t>& primary,
                           const std::vector<uint32_t>& secondary, std::vector<uint32_t>& local_of);

// Names file `part` of `parts`: `names`, consecutive global indexes.
std::string EncodeNamesFile(const std::vector<std::string>& names, uint64_t graph_id, uint32_t part,
                            uint32_t parts);

// The CRC-32C of each of the manifest's blocks of `data`.
std::vector<uint32_t> BlockCrcs(std::string_view data);

}  // namespace lockstep::load::form
