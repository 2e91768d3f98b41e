#pragma once

// The partitioned form of a graph (docs/design.md §4.5): the parsed graph written once as shard
// files that each cover a range of the UUID space, in a directory any number of workers can read,
// each reading only the shard files of its own partition. A job on it loads at disk speed without
// parsing, and gets exactly what loading the text gives (LoadGraph, LoadPartition), at any worker
// count.
//
// The directory holds `lockstep-parts.manifest`, written last (a directory without it is not in
// the partitioned form), the shard files it lists (one per UUID range) and names files (every
// vertex's external ID by global index). The manifest records each file's size and a CRC-32C of
// every block, and every file carries the graph's random identity: a missing, truncated, corrupt
// or foreign file is refused with an error naming it, before anything of the graph is used.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/load/input_form.h"
#include "lockstep/load/partition_input.h"

namespace lockstep::load {

// What the manifest says about the graph, without reading the shard files.
struct PartitionedFormFacts {
  uint64_t num_vertices = 0;
  uint64_t num_stored_edges = 0;
  bool symmetric = false;
  bool weighted = false;
  // The text input's format: "edgelist" or "graphalytics".
  std::string format;
  // Graphalytics only: as GraphInput::properties.
  std::map<std::string, std::string> properties;
  uint32_t num_shards = 0;
  // The shard files' bytes, all of them.
  uint64_t shard_bytes = 0;
};
absl::StatusOr<PartitionedFormFacts> ReadPartitionedFormFacts(const std::string& dir);

struct PartitionedFormOptions {
  // The number of UUID ranges (shard files). Any worker count reads any number of shards; more
  // shards let a worker of a larger job skip more of the graph.
  uint32_t shards = 8;
  // The text input's format, recorded in the manifest ("edgelist" or "graphalytics").
  std::string format = "edgelist";
};

// Writes `input` (a whole graph as LoadGraph gives it, with its weights if it has any) in the
// partitioned form in `dir`, which must be absent, empty, or hold a partitioned form (which is
// replaced: its manifest goes first, so a reader never sees a mix of the two).
absl::Status WritePartitionedForm(const bsp::GraphInput& input, const std::string& dir,
                                  const PartitionedFormOptions& options = {});

// Collective over `exchange`: writes the text graph `source` in the partitioned form in `dir`
// (shared by all workers) without any process holding the whole graph. Each worker loads its
// partition (LoadPartitionFromText, with in-edges), learns each of its edges' positions in the
// input from the worker whose share of the text holds it, and writes the shard file of its UUID
// range and the names file of its range of global indexes; worker 0 prepares the directory first
// and writes the manifest once every file is written. The same error on every worker. The shards
// are exchange.size() ranges, and read like those of WritePartitionedForm.
absl::Status WritePartitionedFormDistributed(const bsp::GraphSource& source,
                                             bsp::Exchange& exchange, const std::string& dir);

// The whole graph, as LoadGraph gives it for the text the form was written from.
absl::StatusOr<bsp::GraphInput> LoadPartitionedForm(const bsp::GraphSource& source,
                                                    bsp::WeightUse weights);

// The whole graph's CSRs read row by row from the form, with in-edges if `in_edges_if` says so
// for the graph's symmetry (as bsp::NeedsInEdges<P>(symmetric) does): what
// Topology::Build gives for one part of LoadPartitionedForm's input, without the edge list that
// build holds beside the CSR (one data file is read at a time), and the CSR edges' weights in
// the CSR's order (none if `weights` ignores them or the graph has none). Local mode's load.
struct WholeFormRows {
  bsp::WholeRows rows;
  std::vector<double> out_weights, in_weights;
  std::map<std::string, std::string> properties;
};
absl::StatusOr<WholeFormRows> LoadWholeRows(const bsp::GraphSource& source, bsp::WeightUse weights,
                                            absl::FunctionRef<bool(bool symmetric)> in_edges_if);

// Worker `rank` of `workers`' partition, as LoadPartition gives it for the text: reads only the
// shard files whose ranges overlap partition `rank` of Range::Whole(workers), and the worker's
// slice of the names. Not collective (RankNames' ranges are fixed: worker p holds the names of
// global indexes [p*N/workers, (p+1)*N/workers)).
absl::StatusOr<PartitionInput> ReadPartitionedForm(const bsp::GraphSource& source,
                                                   bsp::WeightUse weights, uint32_t workers,
                                                   uint32_t rank, bool in_edges);

// Collective: ReadPartitionedForm for exchange.rank() of exchange.size(), with the same error on
// every worker (a file only one worker reads fails them all alike).
absl::StatusOr<PartitionInput> LoadPartitionFromForm(const bsp::GraphSource& source,
                                                     bsp::WeightUse weights,
                                                     bsp::Exchange& exchange, bool in_edges);

}  // namespace lockstep::load
