// A data file of the partitioned form, read and checked (all of it, or only what reading the
// whole graph needs), and what both readers share. Private to the load library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "form/checked_file.h"
#include "form/layout.h"
#include "form/manifest.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::load::form {

// One list of a data file's edges.
struct EdgeView {
  const uint32_t* seq;
  const uint32_t* src;  // into the ends table
  const uint32_t* dst;
  const double* weights;
  uint64_t size;
};

// A data file, read and checked: all of it, or only what reading the whole graph needs.
struct DataFile {
  uint32_t part = 0;
  std::string path;
  bsp::VertexId first{}, last{};
  FileHeader h{};
  DataLayout l{};
  Buffer buf;

  // ReadDataFileRows only: the secondary edges, read apart from the prefix from `rest_offset`.
  Buffer rest;
  const char* rest_at = nullptr;
  uint64_t rest_offset = UINT64_MAX;

  template <class T>
  const T* At(uint64_t offset) const {
    const char* p = offset >= rest_offset ? rest_at + (offset - rest_offset) : buf.data() + offset;
    return reinterpret_cast<const T*>(p);
  }
  const uint32_t* globals() const { return At<uint32_t>(l.globals); }
  const uint64_t* name_offsets() const { return At<uint64_t>(l.name_offsets); }
  std::string_view name(uint64_t i) const {
    const uint64_t* o = name_offsets();
    return std::string_view(buf.data() + l.names + o[i], o[i + 1] - o[i]);
  }
  EdgeView Edges(const EdgeLayout& e, uint64_t size) const {
    return {At<uint32_t>(e.seq), At<uint32_t>(e.src), At<uint32_t>(e.dst), At<double>(e.weights),
            size};
  }
  // The edges whose source the file holds, and (a whole read only) those whose target only it
  // holds, each in input order.
  EdgeView primary() const { return Edges(l.primary, h.num_primary); }
  EdgeView secondary() const { return Edges(l.secondary, h.num_secondary); }
  const uint32_t* end_globals() const { return At<uint32_t>(l.end_globals); }
  // Not in a file read for the whole graph:
  const bsp::VertexId* uuids() const { return At<bsp::VertexId>(l.uuids); }
  const bsp::VertexId* end_uuids() const { return At<bsp::VertexId>(l.end_uuids); }
  bool Holds(const bsp::VertexId& id) const { return !(id < first) && !(last < id); }
};

// Data file `part`; `whole_graph`: only what reading the whole graph needs.
absl::StatusOr<DataFile> ReadDataFile(const Manifest& m, uint32_t part, bool whole_graph);
// What laying out the whole graph's rows needs (LoadWholeRows): the prefix and the secondary
// edges, not the UUIDs.
absl::StatusOr<DataFile> ReadDataFileRows(const Manifest& m, uint32_t part);
// Reads the data files `parts` in parallel; the error is that of the first failing file.
absl::StatusOr<std::vector<DataFile>> ReadDataFiles(const Manifest& m,
                                                    const std::vector<uint32_t>& parts,
                                                    bool whole_graph);

// The manifest of `source`, a partitioned form, which it must be able to read as asked
// (undirected only if it was written so).
absl::StatusOr<Manifest> OpenSource(const bsp::GraphSource& source);
// The input's flags, properties and weights as the form's text would give them.
void FinishInput(const Manifest& m, bsp::WeightUse weights, bsp::GraphInput& g);

}  // namespace lockstep::load::form
