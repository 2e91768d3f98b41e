#pragma once

// The partitioned binary form of a graph (docs/design.md §4): the parsed graph written once as
// files that each cover a range of the UUID space, in a directory any number of workers can read,
// each reading only the files of its own range. A job on it loads at disk speed without parsing,
// and gets exactly what loading the text gives (LoadGraph, LoadPartition), at any worker count.
//
// The directory holds `lockstep-parts.manifest`, written last (a directory without it is not a
// partitioned graph), the data files it lists (one per UUID range) and a names file (every
// vertex's external ID by global index). The manifest records each file's size and a CRC-32C of
// every block, and every file carries the graph's random identity: a missing, truncated, corrupt
// or foreign file is refused with an error naming it, before anything of the graph is used.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/partitioned_load.h"

namespace lockstep::bsp {

inline constexpr char kPartManifestName[] = "lockstep-parts.manifest";

// True if `path` is a directory holding a partitioned graph's manifest.
bool IsPartitionedGraph(const std::string& path);

// What the manifest says about the graph, without reading the data files.
struct PartGraphFacts {
  uint64_t num_vertices = 0;
  uint64_t num_stored_edges = 0;
  bool symmetric = false;
  bool weighted = false;
  // The text input's format: "edgelist" or "graphalytics".
  std::string format;
  // Graphalytics only: as GraphInput::properties.
  std::map<std::string, std::string> properties;
  uint32_t num_files = 0;
  // The data files' bytes, all of them.
  uint64_t data_bytes = 0;
};
absl::StatusOr<PartGraphFacts> ReadPartGraphFacts(const std::string& dir);

struct PartWriteOptions {
  // The number of UUID ranges (data files). Any worker count reads any number of files; more
  // files let a worker of a larger job skip more of the graph.
  uint32_t parts = 8;
  // The text input's format, recorded in the manifest ("edgelist" or "graphalytics").
  std::string format = "edgelist";
};

// Writes `input` (a whole graph as LoadGraph gives it, with its weights if it has any) as a
// partitioned graph in `dir`, which must be absent, empty, or hold a partitioned graph (which is
// replaced: its manifest goes first, so a reader never sees a mix of the two).
absl::Status WritePartFiles(const GraphInput& input, const std::string& dir,
                            const PartWriteOptions& options = {});

// Collective over `exchange`: writes the text graph `source` as a partitioned graph in `dir`
// (shared by all workers) without any process holding the whole graph. Each worker loads its
// part (LoadPartition, with in-edges), learns each of its edges' positions in the input from the
// worker whose share of the text holds it, and writes the data file of its UUID range and the
// names file of its range of global indexes; worker 0 prepares the directory first and writes
// the manifest once every file is written. The same error on every worker. The files are
// exchange.size() ranges, and read like those of WritePartFiles.
absl::Status WritePartFilesDistributed(const GraphSource& source, Exchange& exchange,
                                       const std::string& dir);

// The whole graph, as LoadGraph gives it for the text the files were written from.
absl::StatusOr<GraphInput> LoadPartFiles(const GraphSource& source, WeightUse weights);

// Worker `rank` of `workers`' part, as LoadPartition gives it for the text: reads only the files
// whose ranges overlap part `rank` of Range::Whole(workers), and the worker's slice of the names.
// Not collective (RankNames' ranges are fixed: worker p holds the names of global indexes
// [p*N/workers, (p+1)*N/workers)).
absl::StatusOr<PartitionInput> ReadPartFiles(const GraphSource& source, WeightUse weights,
                                             uint32_t workers, uint32_t rank, bool in_edges);

// Collective: ReadPartFiles for exchange.rank() of exchange.size(), with the same error on every
// worker (a file only one worker reads fails them all alike).
absl::StatusOr<PartitionInput> LoadPartitionFromPartFiles(const GraphSource& source,
                                                          WeightUse weights, Exchange& exchange,
                                                          bool in_edges);

}  // namespace lockstep::bsp
