#pragma once

// What the two strategies of programs that send messages share (combined_inbox.h,
// message_lists.h): a message along an edge goes into its block's bin of a local target or its
// list for remote ones, and one sent by ID (Context::SendTo) into its block's list by partition.
// After compute the remote ones go to other partitions (relay_out.h) grouped as the strategy
// groups them (S::GroupRemote, S::ForEachRemote: combined per target, or in sending order);
// relayed messages land in the last block's bins (relay_in.h's sink) and are delivered with the
// local ones. A checkpoint holds the messages delivered to each vertex, by destination.
// S is the strategy (CRTP).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/engine/peers.h"
#include "lockstep/bsp/engine/relay_out.h"
#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

template <class P, class S>
class PushBase : public EngineState<P> {
 public:
  using typename EngineState<P>::VertexValue;
  using typename EngineState<P>::Message;
  using typename EngineState<P>::Block;
  // Messages, not published values (relay_in.h, checkpoint.h); none held back.
  static constexpr bool kPublishes = false;
  static constexpr bool kHoldsBack = false;
  static constexpr bool kDecodesRunsInPlace = false;

  using EngineState<P>::EngineState;

  // Compute's sends (Context): along an edge (`slot` is one of the vertex's out- or in-slots), to
  // all out-neighbours, and to any vertex by ID (one that is neither local nor routable fails the
  // job).
  void Send(Block& buf, uint32_t slot, const Message& m) {
    ++buf.sent;
    const uint32_t n = this->topology().num_local();
    if (slot < n) {
      buf.bins[slot >> this->bin_shift_].push_back({slot, m});
    } else {
      buf.remote.push_back({slot - n, m});
    }
  }
  void SendToAll(Block& buf, size_t /*block*/, uint32_t v, const Message& m) {
    for (uint32_t slot : this->topology().out_slots(v)) self().Send(buf, slot, m);
  }
  void SendTo(Block& buf, uint32_t from, const VertexId& target, const Message& m) {
    const Topology& topo = this->topology();
    const uint32_t local = topo.Find(target);
    if (local != kNoVertex) {
      self().Send(buf, local, m);
      return;
    }
    auto part = topo.split().PartitionFor(target);
    if (!this->relay_out_.has_relayer() || !part.ok() || *part == topo.part()) {
      buf.Fail(absl::NotFoundError(absl::StrCat("vertex '", std::string(topo.external_id(from)),
                                                "' sent a message to vertex ", ToString(target),
                                                ", which is not in the graph")));
      return;
    }
    ++buf.sent;
    buf.by_id.push_back({target, static_cast<uint32_t>(*part), m});
  }

  // After compute: nothing is published, nothing held back.
  void EndCompute(StepStats& /*stats*/) {}

  // Hands this superstep's non-local messages to the relayer: one batch per destination
  // partition, combined per destination vertex if the program has a combiner.
  absl::Status FlushRemote(uint64_t superstep) {
    const Topology& topo = this->topology();
    const std::span<Block> blocks(this->blocks_.data(), this->num_blocks_);
    bool any = false;
    for (const Block& buf : blocks) any = any || !buf.remote.empty() || !buf.by_id.empty();
    if (!any) return absl::OkStatus();
    if (!this->relay_out_.has_relayer()) {
      for (const Block& buf : blocks) {
        if (!buf.remote.empty()) {
          return absl::FailedPreconditionError(
              absl::StrCat("a message to vertex ", ToString(topo.remote_id(buf.remote[0].remote)),
                           " cannot be delivered: it is not local and no relayer is installed"));
        }
      }
    }
    self().GroupRemote();
    std::vector<OutgoingBatch> out = EncodeMessages<Message>(
        superstep, topo, std::span<const Block>(blocks), this->peers_.connected(),
        [&](uint32_t q, auto&& add) { self().ForEachRemote(q, add); });
    for (Block& buf : blocks) {
      buf.remote.clear();
      buf.by_id.clear();
    }
    const std::vector<uint32_t>& begin = topo.remote_partition_begin();
    for (uint32_t q = 0; q < out.size(); ++q) {
      if (out[q].count == 0) continue;
      // The list agreed with q: its slice of the remote table.
      const uint32_t list_size = q + 1 < begin.size() ? begin[q + 1] - begin[q] : 0;
      auto st =
          this->relay_out_.template Send<Message>(std::move(out[q].batch), out[q].count, list_size);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  // Relayed messages (relay_in.h): for local vertices, delivered with this superstep's.
  absl::StatusOr<uint32_t> TargetOfId(const VertexId& id, uint32_t from) const {
    const Topology& topo = this->topology();
    const uint32_t v = topo.Find(id);
    if (v == kNoVertex) {
      return absl::NotFoundError(absl::StrCat("partition ", from, " relayed a message for vertex ",
                                              ToString(id), ", which partition ", topo.part(),
                                              " does not have"));
    }
    return v;
  }
  void Accept(uint32_t v, Message&& m) {
    this->blocks_.back().bins[v >> this->bin_shift_].push_back({v, std::move(m)});
  }

  // The relay's positions (peers.h): each peer's remote vertices here, by UUID.
  absl::StatusOr<absl::Status> AgreePositions(Exchange& exchange) {
    return this->peers_.AgreeByIds(exchange, this->topology());
  }

  // Checkpoint hooks (checkpoint.h): the messages delivered to each vertex, as a count and the
  // messages, and on restore into the last block's bins, to be delivered next.
  uint8_t CheckpointFlag(uint32_t v) {
    return self().MessagesOf(this->num_blocks_, v).empty() ? 0 : kCheckpointMessages;
  }
  void WriteExtra(std::string& extra) {
    for (uint32_t v = 0; v < this->topology().num_local(); ++v) {
      const std::span<const Message> messages = self().MessagesOf(this->num_blocks_, v);
      if (messages.empty()) continue;
      Codec<uint32_t>::Encode(static_cast<uint32_t>(messages.size()), extra);
      for (const Message& m : messages) Codec<Message>::Encode(m, extra);
    }
  }
  absl::Status RestoreExtra(uint8_t f, uint32_t v, const VertexId& /*id*/,
                            const VertexValue& /*value*/, const CheckpointFile& /*file*/,
                            uint64_t /*i*/, std::string_view& extra) {
    if (!(f & kCheckpointMessages)) return absl::OkStatus();
    uint32_t messages = 0;
    if (!Codec<uint32_t>::Decode(extra, messages) || messages == 0) {
      return absl::DataLossError("has a bad message count");
    }
    for (uint32_t k = 0; k < messages; ++k) {
      Message m;
      if (!Codec<Message>::Decode(extra, m)) {
        return absl::DataLossError("has a message that does not decode");
      }
      if (v != kNoVertex) Accept(v, std::move(m));
    }
    return absl::OkStatus();
  }
  void AfterRestore() {}

  // Tracing (Engine::RunTraced): every message sent is counted as it is sent.
  uint8_t BeforeTraced(uint32_t /*v*/) const { return 0; }
  uint64_t SendsNotCounted(uint32_t /*v*/, uint8_t /*before*/) const { return 0; }

 private:
  S& self() { return static_cast<S&>(*this); }
};

}  // namespace lockstep::bsp
