#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

// Messages of one superstep from one partition to another, already combined: ids[i] receives the
// i-th message encoded back to back in `payload` with the message type's Codec. For a broadcast
// program (IsBroadcast) a batch instead carries the values its sender's vertices ids[i] published
// for their out-neighbours in the receiving partition (`published`).
struct RelayBatch {
  uint64_t superstep = 0;
  bool published = false;
  uint32_t from_partition = 0;
  uint32_t to_partition = 0;
  std::vector<VertexId> ids;
  std::string payload;
};

// Receives the messages whose destination is not local, one batch per destination partition per
// superstep (never one call per message). Called from the thread that runs the superstep, after
// compute and before the post-step callback, so a relayer that queues the batch before its
// process enters the barrier keeps the ordering invariant (docs/design.md §5.5).
class Relayer {
 public:
  virtual ~Relayer() = default;
  virtual absl::Status Relay(RelayBatch batch) = 0;
};

}  // namespace lockstep::bsp
