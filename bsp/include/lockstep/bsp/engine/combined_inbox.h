#pragma once

// The message strategy of a program that sends messages under a combiner (HasCombiner, not a
// broadcast): each vertex has at most one message, combined as it is delivered. A sent message
// goes into its block's bin of its target (push_base.h); delivery combines the bins into the
// inbox, one task per bin and blocks in order (propagation blocking: each task writes one
// cache-friendly range of the inbox), and wakes the targets. Messages to the same remote vertex
// are combined before they are relayed. A program whose messages add up in place (AddsInPlace,
// program.h) adds a local one into its target's sum as it is sent, with no envelope; the
// delivery moves the sums into the inbox, then combines the relayed messages' bins.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "lockstep/bsp/engine/push_base.h"
#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/program.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

template <class P>
class CombinedInbox : public PushBase<P, CombinedInbox<P>> {
  using Base = PushBase<P, CombinedInbox<P>>;

 public:
  using typename Base::EdgeValue;
  using typename Base::Message;
  // The combined inbox (and AddsInPlace's sums), and per edge an outgoing message and its slot
  // (AddsInPlace: only those to remote vertices, counted as any).
  static constexpr PeakBytes kPeakBytes{
      .per_vertex = (sizeof(Message) + 1) * (AddsInPlace<P>() ? 2 : 1),
      .per_edge = sizeof(Message) + 4};

  CombinedInbox(P program, Graph<EdgeValue> graph) : Base(std::move(program), std::move(graph)) {
    const uint32_t n = this->topology().num_local();
    inbox_.resize(n);
    has_message_.assign(n, 0);
    if constexpr (kAddsInPlace) {
      sums_.assign(n, 0);
      has_sum_.assign(n, 0);
    }
  }

  // A message along an edge: added into a local target's sum in place (AddsInPlace), else binned
  // (push_base.h).
  void Send(typename Base::Block& buf, uint32_t slot, const Message& m) {
    if constexpr (kAddsInPlace) {
      if (slot < this->topology().num_local()) {
        ++buf.sent;
        std::atomic_ref<Message>(sums_[slot]).fetch_add(m, std::memory_order_relaxed);
        std::atomic_ref<uint8_t> has(has_sum_[slot]);
        if (has.load(std::memory_order_relaxed) == 0) has.store(1, std::memory_order_relaxed);
        return;
      }
    }
    Base::Send(buf, slot, m);
  }

  // Vertex v's combined message of this superstep, if it has one.
  std::span<const Message> MessagesOf(size_t /*block*/, uint32_t v) const {
    return has_message_[v] ? std::span<const Message>(&inbox_[v], 1) : std::span<const Message>();
  }
  // After v ran: its message is gone, so deliveries need not clear every vertex's.
  void Consume(uint32_t v) { has_message_[v] = 0; }
  // Last superstep's messages (the blocks' bins, relayed ones in the last) into the inbox.
  void Deliver() {
    if constexpr (kAddsInPlace) TakeSums();
    this->CombineBins(inbox_, has_message_);
  }

  // The relay's grouping (push_base.h): one message per remote target, combined in block order.
  void GroupRemote() {
    const uint32_t num_remote = this->topology().num_remote();
    remote_combined_.resize(num_remote);
    remote_has_.assign(num_remote, 0);
    for (size_t b = 0; b < this->num_blocks_; ++b) {
      for (const RemoteEnvelope<Message>& e : this->blocks_[b].remote) {
        if (remote_has_[e.remote]) {
          P::Combine(remote_combined_[e.remote], e.message);
        } else {
          remote_combined_[e.remote] = e.message;
          remote_has_[e.remote] = 1;
        }
      }
    }
  }
  template <class Add>
  void ForEachRemote(uint32_t q, Add&& add) const {
    const std::vector<uint32_t>& begin = this->topology().remote_partition_begin();
    for (uint32_t r = begin[q]; r < begin[q + 1]; ++r) {
      if (remote_has_[r]) add(r, remote_combined_[r]);
    }
  }

 private:
  static constexpr bool kAddsInPlace = AddsInPlace<P>();

  // The sums added in place become the inbox's messages (every vertex's was consumed), and wake
  // their targets; a range of whole 64-vertex words per task, so each owns its words of awake_.
  void TakeSums() {
    const uint64_t n = this->topology().num_local();
    constexpr uint64_t kRange = 1 << 14;
    tbb::parallel_for(uint64_t{0}, (n + kRange - 1) / kRange, [&](uint64_t r) {
      for (uint32_t v = static_cast<uint32_t>(r * kRange); v < std::min(n, (r + 1) * kRange); ++v) {
        if (has_sum_[v] == 0) continue;
        inbox_[v] = std::exchange(sums_[v], 0);
        has_sum_[v] = 0;
        has_message_[v] = 1;
        this->Wake(v);
      }
    });
  }

  std::vector<Message> inbox_;
  std::vector<uint8_t> has_message_;
  // AddsInPlace: this superstep's sums of messages to local vertices, and which have one.
  std::vector<Message> sums_;
  std::vector<uint8_t> has_sum_;
  // This superstep's messages to remote vertices, combined by remote index.
  std::vector<Message> remote_combined_;
  std::vector<uint8_t> remote_has_;
};

}  // namespace lockstep::bsp
