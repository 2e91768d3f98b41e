#pragma once

// The unit of the engine's parallelism. Vertices run in fixed blocks of indexes (state.h), each
// with its own outgoing buffers, bucketed by destination range ("bin"), and its own counters, so
// that delivery and merging visit blocks in index order: results are bit-identical at any thread
// count, with no lock or atomic per message (docs/design.md §3.5).

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

// A message for local vertex `target`, in its sender's block's bin of the target.
template <class Message>
struct LocalEnvelope {
  uint32_t target;
  Message message;
};

// A message along an edge to a remote vertex: `remote` indexes the topology's remote table.
template <class Message>
struct RemoteEnvelope {
  uint32_t remote;
  Message message;
};

// A message sent by ID (Context::SendTo) to a vertex of another partition.
template <class Message>
struct IdEnvelope {
  VertexId target;
  uint32_t partition;
  Message message;
};

// Outgoing messages and counters of one block of vertices for one superstep. An engine's last
// block holds what other partitions relayed, and a restored checkpoint's messages. A message
// strategy keeps its own per-block state beside these (a broadcast's publishers, say).
template <class Message>
struct BlockBuffers {
  std::vector<std::vector<LocalEnvelope<Message>>> bins;
  std::vector<RemoteEnvelope<Message>> remote;
  std::vector<IdEnvelope<Message>> by_id;
  uint64_t active = 0;    // vertices that ran
  uint64_t unhalted = 0;  // of which did not vote to halt
  uint64_t sent = 0;      // messages (a broadcast's value counts once per edge)
  absl::Status error;

  void Fail(absl::Status st) {
    if (error.ok()) error = std::move(st);
  }
};

}  // namespace lockstep::bsp
