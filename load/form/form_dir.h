// The directory of a partitioned form, as writers change it: files written whole and synced
// before the manifest names them, the manifest replaced first and written last (docs/design.md
// §4). Private to the load library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "form/manifest.h"

namespace lockstep::load::form {

// Writes `data` to a new file `path`, synced before it returns.
absl::Status WriteWhole(const std::string& path, std::string_view data);

// Makes `dir` ready for a partitioned graph: new, empty, or holding only this writer's files (a
// partitioned graph being replaced, or what an interrupted writer left), whose names go to
// `old_files` and whose manifest is removed first.
absl::Status PrepareDir(const std::string& dir, std::vector<std::string>& old_files);

// Writes the manifest, whole or not at all (a temporary file renamed into place), then removes
// the files of a replaced graph that this one does not use.
absl::Status CommitManifest(const Manifest& m, const std::vector<std::string>& old_files);

// A new graph's random identity, which every one of its files carries.
uint64_t RandomGraphId();

}  // namespace lockstep::load::form
