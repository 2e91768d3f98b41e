// The partitioned form's names files (every vertex's external ID by global index): a worker
// reads its slice of them, and the whole-graph reader checks them against the data files.
// Private to the load library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "form/manifest.h"

namespace lockstep::load::form {

// Appends the names of indexes [from, to) of names file k (integer IDs, then the others: the
// order of global indexes).
absl::Status ReadNames(const Manifest& m, uint32_t k, uint64_t from, uint64_t to,
                       std::vector<uint64_t>& ints, std::vector<std::string>& texts);

// Checks names file k as a worker's reading of it would (its size, header and name table, the
// checksum of every block), and that it names its vertices as the data files do (`names`, by
// global index, `name_of`): the whole-graph reader takes the names from the data files, and a
// damaged names file must fail it as it fails the workers.
absl::Status CheckNamesFile(const Manifest& m, uint32_t k,
                            absl::FunctionRef<std::string_view(uint64_t)> name_of);

}  // namespace lockstep::load::form
