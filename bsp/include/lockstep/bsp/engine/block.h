#pragma once

// The unit of the engine's parallelism. Vertices run in fixed blocks of indexes (state.h), each
// with its own outgoing buffers, bucketed by destination range ("bin"), and its own counters, so
// that delivery and merging visit blocks in index order: results are bit-identical at any thread
// count, with no lock or atomic per message (docs/design.md §3.5).

#include <cstdint>
#include <optional>
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
// block holds what other partitions relayed, and a restored checkpoint's messages.
template <class Message>
struct BlockBuffers {
  std::vector<std::vector<LocalEnvelope<Message>>> bins;
  std::vector<RemoteEnvelope<Message>> remote;
  std::vector<IdEnvelope<Message>> by_id;
  uint64_t active = 0;
  uint64_t unhalted = 0;
  uint64_t sent = 0;
  uint64_t published = 0;          // broadcast programs: vertices that published
  uint64_t published_sources = 0;  // of which with out-edges
  // Min-combined broadcasts: this block's publishers, their edges and their least value.
  std::vector<Message> gathered;  // gathers: the current vertex's values
  std::vector<uint32_t> frontier;
  uint64_t frontier_edges = 0;
  std::optional<Message> least;
  absl::Status error;

  void Fail(absl::Status st) {
    if (error.ok()) error = std::move(st);
  }
};

}  // namespace lockstep::bsp
