#pragma once

// Collective steps built on Exchange::AllToAll, for the set-up steps of a distributed job (the
// partitioned load, the partitioned form's reader and writer, the job's start): every process of
// the job calls each in the same order.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/exchange.h"

namespace lockstep::bsp {

// Every process's `mine`, indexed by rank (this process's own among them).
absl::StatusOr<std::vector<std::string>> AllGather(Exchange& exchange, const std::string& mine);

// OK if every process's `status` is OK, else the failure of the lowest-ranked failing process,
// the same on every process (so that all fail alike). An exchange failure is returned as it is.
absl::Status AgreeOnStatus(Exchange& exchange, const absl::Status& status);

}  // namespace lockstep::bsp
