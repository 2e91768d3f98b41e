#pragma once

// The message strategy of a program that sends messages under a combiner (HasCombiner, not a
// broadcast): each vertex has at most one message, combined as it is delivered. A sent message
// goes into its block's bin of its target (push_base.h); delivery combines the bins into the
// inbox, one task per bin and blocks in order (propagation blocking: each task writes one
// cache-friendly range of the inbox), and wakes the targets. Messages to the same remote vertex
// are combined before they are relayed.

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "lockstep/bsp/engine/push_base.h"
#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/graph.h"

namespace lockstep::bsp {

template <class P>
class CombinedInbox : public PushBase<P, CombinedInbox<P>> {
  using Base = PushBase<P, CombinedInbox<P>>;

 public:
  using typename Base::EdgeValue;
  using typename Base::Message;
  // The combined inbox, and per edge an outgoing message and its slot.
  static constexpr PeakBytes kPeakBytes{.per_vertex = sizeof(Message) + 1,
                                        .per_edge = sizeof(Message) + 4};

  CombinedInbox(P program, Graph<EdgeValue> graph) : Base(std::move(program), std::move(graph)) {
    const uint32_t n = this->topology().num_local();
    inbox_.resize(n);
    has_message_.assign(n, 0);
  }

  // Vertex v's combined message of this superstep, if it has one.
  std::span<const Message> MessagesOf(size_t /*block*/, uint32_t v) const {
    return has_message_[v] ? std::span<const Message>(&inbox_[v], 1) : std::span<const Message>();
  }
  // After v ran: its message is gone, so deliveries need not clear every vertex's.
  void Consume(uint32_t v) { has_message_[v] = 0; }
  // Last superstep's messages (the blocks' bins, relayed ones in the last) into the inbox.
  void Deliver() { this->CombineBins(inbox_, has_message_); }

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
  std::vector<Message> inbox_;
  std::vector<uint8_t> has_message_;
  // This superstep's messages to remote vertices, combined by remote index.
  std::vector<Message> remote_combined_;
  std::vector<uint8_t> remote_has_;
};

}  // namespace lockstep::bsp
