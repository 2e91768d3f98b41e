#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lockstep::bsp {

// A process's link to the other processes of a distributed job, for the collective steps that are
// not supersteps: the partitioned load (docs/design.md §4.4) and the engine's set-up. Every process
// of a job calls the same collective operations in the same order; a call returns when this
// process has received what every process sent it. Local mode has none (a null Exchange*).
//
// Bytes travel process to process (the peer plane in distributed mode, never through the master),
// cut into bounded batches by the implementation, so a caller may hand over large strings.
class Exchange {
 public:
  virtual ~Exchange() = default;
  // This process's partition, and the number of partitions (processes that hold vertices).
  virtual uint32_t rank() const = 0;
  virtual uint32_t size() const = 0;
  // Collective. outgoing.size() == size(); outgoing[q] goes to process q (outgoing[rank()] comes
  // back to this process without crossing the network). Returns incoming, where incoming[p] is
  // what process p sent to this one. Fails if a peer fails, the job is aborted, or outgoing has
  // the wrong size.
  virtual absl::StatusOr<std::vector<std::string>> AllToAll(std::vector<std::string> outgoing) = 0;
};

}  // namespace lockstep::bsp
