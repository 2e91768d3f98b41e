#pragma once

// What other partitions relayed (docs/design.md §5.5): batches held from their arrival, on any
// thread, until the superstep that delivers them, then decoded in sender order into a sink, the
// message strategy (strategy.h), which takes them as messages for local vertices (programs that
// send) or as published values of remote vertices (broadcasts). A message addressed by position
// costs an array read; only those addressed by UUID (SendTo, or a peer that did not connect) are
// looked up.
//
// The sink provides:
//   Message, kPublishes             what it takes (a batch of the other kind is refused)
//   kDecodesRunsInPlace             whether AcceptRun may take a batch of every value of a list
//                                   that is a run of the remote table
//   Accept(target, Message&&)       a message for local vertex `target`, or the value of remote
//                                   vertex `target`
//   AcceptRun(first, count, bytes, from)  every value of remote vertices first... in order
//   TargetOfId(id, from)            what Accept takes for a UUID, or an error naming it

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/engine/peers.h"
#include "lockstep/bsp/relay_positions.h"
#include "lockstep/bsp/relayer.h"

namespace lockstep::bsp {

class RelayInbox {
 public:
  // Safe from any thread.
  void Add(RelayBatch batch) {
    std::lock_guard<std::mutex> lock(mu_);
    batches_.push_back(std::move(batch));
  }

  // The batches sent before `superstep`, by sending partition and piece. A faster peer's batches
  // of this very superstep may already be here; they stay for the next one.
  std::vector<RelayBatch> Take(uint64_t superstep) {
    std::vector<RelayBatch> batches;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto later =
          std::stable_partition(batches_.begin(), batches_.end(),
                                [&](const RelayBatch& b) { return b.superstep < superstep; });
      batches.assign(std::make_move_iterator(batches_.begin()), std::make_move_iterator(later));
      batches_.erase(batches_.begin(), later);
    }
    if (batches.empty()) return batches;
    std::stable_sort(batches.begin(), batches.end(), [](const RelayBatch& a, const RelayBatch& b) {
      return a.from_partition != b.from_partition ? a.from_partition < b.from_partition
                                                  : a.sequence < b.sequence;
    });
    return batches;
  }

 private:
  std::mutex mu_;
  std::vector<RelayBatch> batches_;
};

// The messages of a batch addressed by position in the list agreed with its sender, taken from
// the front of `bytes`.
template <class Sink>
absl::Status DecodePositioned(Sink& sink, const RelayBatch& batch, const Peers& peers,
                              uint32_t self, std::string_view& bytes) {
  using Message = typename Sink::Message;
  constexpr const char* kWhat = Sink::kPublishes ? "value" : "message";
  const uint32_t from = batch.from_partition;
  if (!peers.connected() || from >= peers.mirror().size() || from == self) {
    return absl::FailedPreconditionError(absl::StrCat(
        "partition ", from, " relayed a batch by position, but partition ", self,
        peers.connected() ? " has no such peer" : " has not set up positions with it"));
  }
  const std::vector<uint32_t>& mirror = peers.mirror()[from];
  if constexpr (Sink::kDecodesRunsInPlace) {
    // Every value of the list, and the list is a run of the remote table (each partition's remotes
    // are in the order their owner lists them): decoded in place, in order. (Bytes after 'all'
    // take the general path, which names them.)
    if (batch.coding == PositionCoding::kAll && batch.positions.empty() && !mirror.empty() &&
        mirror.back() - mirror.front() + 1 == mirror.size()) {
      return sink.AcceptRun(mirror.front(), mirror.size(), bytes, from);
    }
  }
  return ForEachPosition(batch.coding, batch.positions, static_cast<uint32_t>(mirror.size()), from,
                         [&](uint32_t position) -> absl::Status {
                           Message m;
                           if (!Codec<Message>::Decode(bytes, m)) {
                             return absl::DataLossError(absl::StrCat(
                                 "cannot decode a ", kWhat, " relayed from partition ", from));
                           }
                           sink.Accept(mirror[position], std::move(m));
                           return absl::OkStatus();
                         });
}

// Decodes Take's batches into `sink`; `self` is this partition.
template <class Sink>
absl::Status DecodeRelayed(Sink& sink, const std::vector<RelayBatch>& batches, const Peers& peers,
                           uint32_t self) {
  using Message = typename Sink::Message;
  constexpr const char* kWhat = Sink::kPublishes ? "value" : "message";
  for (const RelayBatch& batch : batches) {
    const uint32_t from = batch.from_partition;
    std::string_view bytes = batch.payload;
    if (batch.published != Sink::kPublishes) {
      return absl::InvalidArgumentError(
          absl::StrCat("partition ", from, " relayed a batch of the wrong kind (",
                       batch.published ? "published values" : "messages", ")"));
    }
    if (batch.coding != PositionCoding::kNone || !batch.positions.empty()) {
      if (auto st = DecodePositioned(sink, batch, peers, self, bytes); !st.ok()) return st;
    }
    for (const VertexId& id : batch.ids) {
      Message m;
      if (!Codec<Message>::Decode(bytes, m)) {
        return absl::DataLossError(
            absl::StrCat("cannot decode a ", kWhat, " relayed from partition ", from));
      }
      auto target = sink.TargetOfId(id, from);
      if (!target.ok()) return target.status();
      sink.Accept(*target, std::move(m));
    }
    if (!bytes.empty()) {
      return absl::DataLossError(
          absl::StrCat("trailing bytes in a batch relayed from partition ", from));
    }
  }
  return absl::OkStatus();
}

}  // namespace lockstep::bsp
