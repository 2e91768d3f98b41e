// The byte layout of the partitioned form's files (partitioned_form.h, docs/design.md §4.5).
//
// A data file covers part k of Range::Whole(K) and holds, after a fixed header, first what a
// reader of the whole graph needs:
//   its vertices' global indexes and names, in UUID order;
//   its primary edges, those whose source is in its range, in input order: input position,
//     source and target as indexes into its ends table, weight;
//   the ends table's global indexes (every vertex its edges name, by global index);
// then what only a reader of a UUID range needs: its vertices' UUIDs, its secondary edges (whose
// target only is in its range), the ends' UUIDs. The names file holds every vertex's external ID
// by global index (an offset table, then the bytes), so that a worker reads the names of its
// slice of global indexes directly.
//
// All integers are little-endian, as the header's byte-order mark checks.
//
// The files of this folder: the layout (here), the manifest (manifest.h), checked reads
// (checked_file.h), encoding (encode.h), the directory as writers change it (form_dir.h), the
// writers (local_writer.cc, distributed_writer.cc) and the readers (data_file.h, names_file.h,
// whole_reader.cc, range_reader.cc). Private to the load library.
#pragma once

#include <cstdint>
#include <string>

namespace lockstep::load::form {

constexpr char kMagic[8] = {'L', 'S', 'P', 'A', 'R', 'T', 'S', '\n'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kKindData = 1;
constexpr uint32_t kKindNames = 2;
constexpr uint32_t kByteOrder = 0x01020304;
constexpr uint64_t kBlockBytes = uint64_t{1} << 20;
constexpr char kManifestMagic[] = "lockstep-parts";
// No count read from a file may exceed this, so that sizes computed from counts cannot overflow.
constexpr uint64_t kMaxCount = uint64_t{1} << 40;

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t kind;
  uint64_t graph_id;
  uint32_t part;
  uint32_t parts;
  uint64_t num_vertices;   // data: the file's vertices; names: all
  uint64_t num_primary;    // edges whose source is in the file's range
  uint64_t num_secondary;  // edges whose target only is
  uint64_t num_ends;
  uint64_t name_bytes;
  uint32_t weighted;
  uint32_t byte_order;
};
static_assert(sizeof(FileHeader) == 80);

inline uint64_t Pad8(uint64_t x) { return (x + 7) & ~uint64_t{7}; }

// Offsets of one list of edges: sequence numbers, ends, weights.
struct EdgeLayout {
  uint64_t seq, src, dst, weights;
};

// Section offsets of a data file, from its header. What reading the whole graph needs (each
// vertex's global index and name, the edges whose source the file holds, the ends' global
// indexes) comes first, so that such a reader reads `prefix` bytes and no more.
struct DataLayout {
  uint64_t globals, name_offsets, names;
  EdgeLayout primary;
  uint64_t end_globals;
  uint64_t prefix;
  uint64_t uuids;
  EdgeLayout secondary;
  uint64_t end_uuids;
  uint64_t size;
};

DataLayout LayoutOf(const FileHeader& h);
// The size of a names file.
uint64_t NamesSize(const FileHeader& h);
// A header of this build's version and byte order, for this graph's file of `kind`.
FileHeader MakeHeader(uint64_t graph_id, uint32_t kind);

std::string DataFileName(uint32_t part, uint32_t parts);
std::string NamesFileName(uint32_t part, uint32_t parts);

}  // namespace lockstep::load::form
