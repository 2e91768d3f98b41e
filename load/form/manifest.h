// The manifest of the partitioned form (lockstep-parts.manifest): the graph's facts and every
// file with its size and a CRC-32C per block, written last and checked before any field of it is
// believed. Private to the load library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "form/layout.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/load/partitioned_form.h"

namespace lockstep::load::form {

struct FileEntry {
  std::string name;
  bsp::VertexId first{}, last{};         // data files: the UUID range
  uint64_t first_global = 0, count = 0;  // names files: the global indexes [first, first + count)
  uint64_t size = 0;
  std::vector<uint32_t> crcs;  // one per block
};

struct Manifest {
  std::string path;
  std::string dir;
  uint64_t graph_id = 0;
  uint64_t block_bytes = kBlockBytes;
  PartitionedFormFacts facts;
  std::vector<FileEntry> data;
  std::vector<FileEntry> names;  // in global-index order, covering [0, vertices)
};

std::string ManifestPath(const std::string& dir);
std::string EncodeManifest(const Manifest& m);
// The manifest of the partitioned form in `dir`, checked whole: its checksum, its lines, and
// that its files cut the UUID space and the global indexes as a writer does.
absl::StatusOr<Manifest> ReadManifest(const std::string& dir);

}  // namespace lockstep::load::form
