#pragma once

// What form a graph's input has (docs/design.md §4.2), decided in one place: the loaders of
// source.h dispatch on it, and the readers below them ask it rather than look for themselves.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "lockstep/bsp/graph_input.h"

namespace lockstep::load {

enum class InputForm { kEdgeList, kGraphalytics, kTable, kPartitioned };

// The form of `source`, in this order: a directory holding a partitioned form's manifest, a
// source with a text (a table), a Graphalytics graph (IsGraphalytics), an edge list (format
// "edgelist" or none). An unknown format is an error naming it.
absl::StatusOr<InputForm> FormOf(const bsp::GraphSource& source);

// True if the source names a Graphalytics .properties file (explicitly or by its suffix).
bool IsGraphalytics(const bsp::GraphSource& source);

// The partitioned form's manifest, written last: a directory holding it is a graph in that form.
inline constexpr char kFormManifestName[] = "lockstep-parts.manifest";

// True if `path` is a directory holding a partitioned form's manifest.
bool IsPartitionedForm(const std::string& path);

// The names the partitioned form's writers give its files: the manifest, its temporary file, the
// shard and names files. A directory of edge lists holding any is refused (a form, or what an
// interrupted writer left), and the writers replace only directories of such files.
bool IsFormFileName(std::string_view name);

}  // namespace lockstep::load
