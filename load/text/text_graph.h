#pragma once

// The whole graph from its text (LoadGraph in source.h picks the form): parsed in parallel chunks
// (parse.h), with dense global indexes in ExternalIdLess order.

#include "absl/status/statusor.h"
#include "lockstep/bsp/graph_input.h"

namespace lockstep::load::text {

// An edge list: one file, or a directory's files read as one (docs/design.md §4.2).
absl::StatusOr<bsp::GraphInput> LoadEdgeList(const bsp::GraphSource& source, bsp::WeightUse use);
// A Graphalytics graph: its .properties, .v and .e files.
absl::StatusOr<bsp::GraphInput> LoadGraphalytics(const bsp::GraphSource& source,
                                                 bsp::WeightUse use);
// A graph whose text comes from a GraphTextSource (a database's tables): parsed as an edge list,
// or as a vertex and an edge list, with errors naming the table and row; its edges sorted, since
// rows have no order.
absl::StatusOr<bsp::GraphInput> LoadTable(const bsp::GraphSource& source, bsp::WeightUse use);

}  // namespace lockstep::load::text
