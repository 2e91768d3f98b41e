#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

// How a relay batch names the destinations of its first messages: by position in a list that the
// two partitions agreed on when the job started (StepEngine::ConnectPeers), never by UUID.
// Positions are non-decreasing; each coding spends what it needs and no more.
enum class PositionCoding : uint8_t {
  kNone = 0,    // no message is addressed by position
  kDeltas = 1,  // LEB128 varints: the first position, then each one minus the one before
                // (0 repeats a position: several messages for one vertex, without a combiner)
  kBitmap = 2,  // one bit per position of the list, least significant first: (size + 7) / 8 bytes
  kAll = 3,     // every position of the list once, in order; no bytes at all
};

// Messages of one superstep from one partition to another, already combined if the program has a
// combiner. `payload` holds them back to back, encoded with the message type's Codec: first one
// per position of `positions` (in position order), then one per entry of `ids`.
//
// A position is an index into a list agreed at set-up: for messages, the sender's remote vertices
// owned by the receiver (its remote table's slice for that partition, in global-index order); for a
// broadcast program's published values (`published`), the sender's vertices with an out-neighbour
// in the receiving partition (in index order). `ids` are UUIDs for what has no agreed position: a
// message sent with Context::SendTo, or anything from an engine that was not connected.
struct RelayBatch {
  uint64_t superstep = 0;
  bool published = false;
  uint32_t from_partition = 0;
  uint32_t to_partition = 0;
  PositionCoding coding = PositionCoding::kNone;
  std::string positions;
  std::vector<VertexId> ids;
  std::string payload;
  // The piece's number when a superstep's traffic to one partition is cut into several batches
  // (StepEngine::SetMaxBatchBytes); the receiver delivers them in this order.
  uint32_t sequence = 0;

  // The bytes a batch carries besides its header: positions, 16 per ID, and the payload.
  uint64_t content_bytes() const { return positions.size() + 16 * ids.size() + payload.size(); }
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
