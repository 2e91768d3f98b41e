#pragma once

// Where a superstep's non-local messages go (docs/design.md §5.5): one batch per destination
// partition, handed to the relayer (bsp/relayer.h) after compute, cut into numbered pieces when
// it is over the byte bound. Once connected (peers.h), messages along edges are addressed by their
// position in the remote table's slice of the destination partition, sorted by it, and a
// broadcast's values by their position in the boundary list for that partition; until then, and
// for messages sent to an ID, by UUID.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/engine/block.h"
#include "lockstep/bsp/relay_positions.h"
#include "lockstep/bsp/relayer.h"
#include "lockstep/bsp/topology.h"

namespace lockstep::bsp {

class RelayOut {
 public:
  // The relayer for non-local messages (none in local mode).
  void SetRelayer(Relayer* relayer) { relayer_ = relayer; }
  bool has_relayer() const { return relayer_ != nullptr; }
  // StepEngine::SetMaxBatchBytes; 0: one batch per partition.
  void SetMaxBatchBytes(uint64_t bytes) { max_batch_bytes_ = bytes; }

  static RelayBatch NewBatch(uint64_t superstep, bool published, uint32_t from, uint32_t to) {
    RelayBatch batch;
    batch.superstep = superstep;
    batch.published = published;
    batch.from_partition = from;
    batch.to_partition = to;
    return batch;
  }

  // Hands over a batch of `messages` messages (or values); `list_size` is the length of the list
  // of positions agreed with its destination, for cutting it into pieces.
  template <class Message>
  absl::Status Send(RelayBatch batch, uint64_t messages, uint32_t list_size) {
    relayed_messages_ += messages;
    relayed_bytes_ += batch.content_bytes();
    if (max_batch_bytes_ == 0 || batch.content_bytes() <= max_batch_bytes_) {
      return relayer_->Relay(std::move(batch));
    }
    return SendInPieces<Message>(std::move(batch), list_size);
  }

  // What went since the last call (StepStats::relayed_messages, relayed_bytes).
  uint64_t TakeMessages() { return std::exchange(relayed_messages_, 0); }
  uint64_t TakeBytes() { return std::exchange(relayed_bytes_, 0); }

 private:
  // Cuts a batch that exceeds the bound into numbered pieces of at most about max_batch_bytes_
  // each, positional messages first and then those by ID, as the receiver reads them. Runs once
  // per superstep and destination, only for a batch over the bound; it walks the messages once
  // with their codec to find where each ends.
  template <class Message>
  absl::Status SendInPieces(RelayBatch batch, uint32_t size) {
    std::string_view payload = batch.payload;
    auto next_message = [&]() -> absl::StatusOr<std::string_view> {
      const std::string_view before = payload;
      Message m;
      if (!Codec<Message>::Decode(payload, m)) {
        return absl::InternalError("a relay batch's own message does not decode");
      }
      return before.substr(0, before.size() - payload.size());
    };
    RelayBatch piece;
    std::optional<PositionWriter> writer;
    uint32_t sequence = 0;
    auto start = [&] {
      piece = NewBatch(batch.superstep, batch.published, batch.from_partition, batch.to_partition);
      piece.sequence = sequence++;
      writer.emplace(piece.positions);
    };
    auto full = [&](size_t more) {
      const bool empty = writer->count() == 0 && piece.ids.empty();
      return !empty &&
             piece.positions.size() + 16 * piece.ids.size() + piece.payload.size() + more >
                 max_batch_bytes_;
    };
    auto send = [&]() -> absl::Status {
      piece.coding = writer->Finish(size);
      return relayer_->Relay(std::move(piece));
    };
    start();
    auto st = ForEachPosition(batch.coding, batch.positions, size, batch.from_partition,
                              [&](uint32_t position) -> absl::Status {
                                auto m = next_message();
                                if (!m.ok()) return m.status();
                                if (full(m->size() + 2)) {
                                  if (auto sent = send(); !sent.ok()) return sent;
                                  start();
                                }
                                writer->Add(position);
                                piece.payload.append(*m);
                                return absl::OkStatus();
                              });
    if (!st.ok()) return st;
    for (const VertexId& id : batch.ids) {
      auto m = next_message();
      if (!m.ok()) return m.status();
      if (full(m->size() + 16)) {
        if (auto sent = send(); !sent.ok()) return sent;
        start();
      }
      piece.ids.push_back(id);
      piece.payload.append(*m);
    }
    return send();
  }

  Relayer* relayer_ = nullptr;
  uint64_t max_batch_bytes_ = 0;
  uint64_t relayed_messages_ = 0;
  uint64_t relayed_bytes_ = 0;
};

// A batch and the number of messages (or values) in it.
struct OutgoingBatch {
  RelayBatch batch;
  uint64_t count = 0;
};

// A broadcast's batch for partition q: the values published this superstep (flag 1: a value held
// back, 2, went already) by the vertices of `boundary`, the local vertices with an out-neighbour
// in q. Every value of the list (PageRank) needs no positions, and the receiver decodes in place.
template <class Message>
OutgoingBatch EncodePublished(uint64_t superstep, const Topology& topo, uint32_t q,
                              const std::vector<uint32_t>& boundary, const Message* published,
                              const uint8_t* has_published, bool connected) {
  OutgoingBatch out{.batch =
                        RelayOut::NewBatch(superstep, true, static_cast<uint32_t>(topo.part()), q)};
  RelayBatch& batch = out.batch;
  const bool all = connected && std::all_of(boundary.begin(), boundary.end(),
                                            [&](uint32_t v) { return has_published[v] == 1; });
  if (all) {
    if constexpr (std::is_arithmetic_v<Message> && !std::is_same_v<Message, bool>) {
      // A number's codec is its bytes (codec.h): laid out straight, not appended value by value.
      batch.payload.resize(boundary.size() * sizeof(Message));
      char* at = batch.payload.data();
      for (uint32_t v : boundary) {
        std::memcpy(at, &published[v], sizeof(Message));
        at += sizeof(Message);
      }
    } else {
      for (uint32_t v : boundary) Codec<Message>::Encode(published[v], batch.payload);
    }
    out.count = boundary.size();
    batch.coding = PositionCoding::kAll;
  } else if (connected) {
    PositionWriter positions(batch.positions);
    for (uint32_t i = 0; i < boundary.size(); ++i) {
      if (has_published[boundary[i]] != 1) continue;
      positions.Add(i);
      Codec<Message>::Encode(published[boundary[i]], batch.payload);
    }
    out.count = positions.count();
    batch.coding = positions.Finish(static_cast<uint32_t>(boundary.size()));
  } else {
    for (uint32_t v : boundary) {
      if (has_published[v] != 1) continue;
      batch.ids.push_back(topo.id(v));
      Codec<Message>::Encode(published[v], batch.payload);
    }
    out.count = batch.ids.size();
  }
  return out;
}

// A program's batches of messages, one per partition: first those along edges, which
// for_each_remote(q, add) gives as add(r, message) in increasing remote index r of partition q's
// slice (hence in increasing position), by position once connected and else by UUID; then those
// sent to IDs, from the blocks in order.
template <class Message, class ForEachRemote>
std::vector<OutgoingBatch> EncodeMessages(uint64_t superstep, const Topology& topo,
                                          std::span<const BlockBuffers<Message>> blocks,
                                          bool connected, ForEachRemote&& for_each_remote) {
  const uint32_t parts = static_cast<uint32_t>(topo.split().size());
  const uint32_t self = static_cast<uint32_t>(topo.part());
  const std::vector<uint32_t>& begin = topo.remote_partition_begin();
  std::vector<OutgoingBatch> out(parts);
  for (uint32_t q = 0; q < parts; ++q) out[q].batch = RelayOut::NewBatch(superstep, false, self, q);
  for (uint32_t q = 0; q < parts; ++q) {
    if (begin[q] == begin[q + 1]) continue;
    RelayBatch& batch = out[q].batch;
    if (connected) {
      PositionWriter positions(batch.positions);
      for_each_remote(q, [&](uint32_t r, const Message& m) {
        positions.Add(r - begin[q]);
        Codec<Message>::Encode(m, batch.payload);
      });
      out[q].count = positions.count();
      batch.coding = positions.Finish(begin[q + 1] - begin[q]);
    } else {
      for_each_remote(q, [&](uint32_t r, const Message& m) {
        batch.ids.push_back(topo.remote_id(r));
        Codec<Message>::Encode(m, batch.payload);
      });
      out[q].count = batch.ids.size();
    }
  }
  for (const BlockBuffers<Message>& buf : blocks) {
    for (const IdEnvelope<Message>& e : buf.by_id) {
      out[e.partition].batch.ids.push_back(e.target);
      Codec<Message>::Encode(e.message, out[e.partition].batch.payload);
      ++out[e.partition].count;
    }
  }
  return out;
}

}  // namespace lockstep::bsp
