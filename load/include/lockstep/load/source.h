#pragma once

// Where a graph is read from, resolved in one place (docs/design.md §4.2). A GraphSource names one
// of four input forms: a table (its text comes through GraphSource::text, which the command line
// attaches: no database client is linked here), the partitioned form (a directory holding its
// manifest), a Graphalytics graph (a .properties file naming a vertex and an edge file), or an
// edge list (a file, or a directory of files read as one). The loaders below ask FormOf
// (input_form.h) and hand the source to that form's reader; a new input form gets an InputForm, a
// reader, and a case in each of them.

#include <cstdint>

#include "absl/status/statusor.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/load/input_form.h"
#include "lockstep/load/partition_input.h"

namespace lockstep::load {

// The whole graph, whatever its form.
absl::StatusOr<bsp::GraphInput> LoadGraph(const bsp::GraphSource& source, bsp::WeightUse weights);

// Collective over `exchange`: this worker's partition of the graph, whatever its form
// (LoadPartitionFromText, LoadPartitionFromForm), with the same error on every worker.
absl::StatusOr<PartitionInput> LoadPartition(const bsp::GraphSource& source, bsp::WeightUse weights,
                                             bsp::Exchange& exchange, bool in_edges,
                                             const PartitionLoadOptions& options = {});

// Roughly the bytes LoadGraph needs at its peak for `source`, from the sizes of its files (0 if
// they cannot be read): for out-of-memory errors.
uint64_t EstimateLoadBytes(const bsp::GraphSource& source);

}  // namespace lockstep::load
