#pragma once

// Loading by partition (docs/design.md §4.4): every worker of a distributed job reads a share of
// the input, sends each vertex and edge to the worker that owns it, and builds its partition of the
// graph from what it owns. No process holds or reads the whole graph, and each partition equals
// what Topology::Build gives for the whole input (the same vertices, global indexes, CSR order and
// remote table), so results do not depend on how the graph was loaded. LoadPartition
// (source.h) picks the reader: this one for text, edge lists and tables, or the partitioned
// form's (partitioned_form.h).

#include "absl/status/statusor.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/load/partition_input.h"

namespace lockstep::load {

// Collective over `exchange` (every worker calls it; worker exchange.rank() owns part rank() of
// the UUID space cut in exchange.size()). Loads `source`, an edge list, a Graphalytics graph or a
// table (not the partitioned form: LoadPartition in source.h picks), as LoadGraph does, with the
// same errors on every worker (a bad line found by any worker fails the load everywhere, naming
// the file and the line in the whole file). `in_edges`: the program needs in-edges, so each edge
// also goes to its target's owner.
absl::StatusOr<PartitionInput> LoadPartitionFromText(const bsp::GraphSource& source,
                                                     bsp::WeightUse weights,
                                                     bsp::Exchange& exchange, bool in_edges,
                                                     const PartitionLoadOptions& options = {});

}  // namespace lockstep::load
