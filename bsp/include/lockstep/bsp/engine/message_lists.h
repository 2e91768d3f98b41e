#pragma once

// The message strategy of a program that sends messages without a combiner: each vertex receives
// every message sent to it, in a fixed order (sending blocks in order, then relayed batches in
// sender order). A sent message goes into its block's bin of its target (push_base.h); delivery is
// a counting sort by target into one array, one task per bin, each bin owning a contiguous range
// of targets and of the array; a vertex's messages are a position and a count in it. Messages to
// remote vertices are relayed in sending order.

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "lockstep/bsp/engine/push_base.h"
#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/graph.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

template <class P>
class MessageLists : public PushBase<P, MessageLists<P>> {
  using Base = PushBase<P, MessageLists<P>>;

 public:
  using typename Base::Block;
  using typename Base::EdgeValue;
  using typename Base::Message;
  // Per vertex its position, count and cursor; per edge an outgoing message, its slot and its
  // place in the inbox.
  static constexpr PeakBytes kPeakBytes{.per_vertex = 24, .per_edge = 2 * sizeof(Message) + 4};

  MessageLists(P program, Graph<EdgeValue> graph) : Base(std::move(program), std::move(graph)) {
    const uint32_t n = this->topology().num_local();
    inbox_begin_.assign(n, 0);
    inbox_count_.assign(n, 0);
    inbox_cursor_.assign(n, 0);
  }

  // Vertex v's messages of this superstep.
  std::span<const Message> MessagesOf(size_t /*block*/, uint32_t v) const {
    return {inbox_.data() + inbox_begin_[v], inbox_count_[v]};
  }
  // After v ran: its count back to 0, so deliveries need not clear every vertex's.
  void Consume(uint32_t v) { inbox_count_[v] = 0; }

  // Last superstep's messages (the blocks' bins, relayed ones in the last) into the inbox.
  void Deliver() {
    const uint32_t num_bins = this->num_bins_;
    std::vector<uint64_t> bin_base(num_bins + 1, 0);
    for (uint32_t bin = 0; bin < num_bins; ++bin) {
      uint64_t total = 0;
      for (const auto& buf : this->blocks_) total += buf.bins[bin].size();
      bin_base[bin + 1] = bin_base[bin] + total;
    }
    inbox_.resize(bin_base.back());
    bin_targets_.resize(num_bins);
    tbb::parallel_for(uint32_t{0}, num_bins,
                      [&](uint32_t bin) { DeliverBin(bin, bin_base[bin], bin_base[bin + 1]); });
  }

  // The relay's grouping (push_base.h): a stable counting sort by remote index, so that a
  // vertex's messages keep their sending order.
  void GroupRemote() {
    const uint32_t num_remote = this->topology().num_remote();
    remote_end_.assign(uint64_t{num_remote} + 1, 0);
    for (size_t b = 0; b < this->num_blocks_; ++b) {
      for (const RemoteEnvelope<Message>& e : this->blocks_[b].remote) ++remote_end_[e.remote + 1];
    }
    for (uint32_t r = 0; r < num_remote; ++r) remote_end_[r + 1] += remote_end_[r];
    remote_sorted_.resize(remote_end_.back());
    for (size_t b = 0; b < this->num_blocks_; ++b) {
      for (const RemoteEnvelope<Message>& e : this->blocks_[b].remote) {
        remote_sorted_[remote_end_[e.remote]++] = &e.message;
      }
    }
  }
  template <class Add>
  void ForEachRemote(uint32_t q, Add&& add) const {
    const std::vector<uint32_t>& begin = this->topology().remote_partition_begin();
    for (uint32_t r = begin[q]; r < begin[q + 1]; ++r) {
      for (uint64_t i = r == 0 ? 0 : remote_end_[r - 1]; i < remote_end_[r]; ++i) {
        add(r, *remote_sorted_[i]);
      }
    }
  }

 private:
  // A bin with fewer than one message per this many vertices visits only its targets.
  static constexpr uint64_t kSparseBin = 8;

  // One bin's messages into inbox_[base, end): counts (every count is 0 here: a vertex that had
  // messages ran and dropped them), then first positions, then fill cursors; the bin touches only
  // its own targets [lo, hi). With few messages against the bin's width only their targets are
  // visited, in index order.
  void DeliverBin(uint32_t bin, uint64_t base, uint64_t end) {
    const uint32_t n = this->topology().num_local();
    const uint32_t lo = bin << this->bin_shift_;
    const uint32_t hi = std::min<uint64_t>(n, uint64_t{bin + 1} << this->bin_shift_);
    const uint64_t messages = end - base;
    uint64_t run = base;
    auto place = [&](uint32_t v) {
      inbox_begin_[v] = inbox_cursor_[v] = run;
      run += inbox_count_[v];
      this->WakeShared(v);  // a bin narrower than 64 vertices shares words
    };
    if (messages * kSparseBin < hi - lo) {
      std::vector<uint32_t>& targets = bin_targets_[bin];
      targets.clear();
      for (const Block& buf : this->blocks_) {
        for (const LocalEnvelope<Message>& e : buf.bins[bin]) {
          if (inbox_count_[e.target]++ == 0) targets.push_back(e.target);
        }
      }
      std::sort(targets.begin(), targets.end());
      for (uint32_t v : targets) place(v);
    } else {
      for (const Block& buf : this->blocks_) {
        for (const LocalEnvelope<Message>& e : buf.bins[bin]) ++inbox_count_[e.target];
      }
      for (uint32_t v = lo; v < hi; ++v) {
        if (inbox_count_[v] > 0) place(v);
      }
    }
    for (Block& buf : this->blocks_) {
      for (LocalEnvelope<Message>& e : buf.bins[bin]) {
        inbox_[inbox_cursor_[e.target]++] = std::move(e.message);
      }
      buf.bins[bin].clear();
    }
  }

  // Vertex v's messages are inbox_[inbox_begin_[v]...] (inbox_count_[v] of them, 0 once it ran);
  // the fill cursors; per bin, the targets of a sparse delivery, reused across supersteps.
  std::vector<Message> inbox_;
  std::vector<uint64_t> inbox_begin_;
  std::vector<uint64_t> inbox_count_;
  std::vector<uint64_t> inbox_cursor_;
  std::vector<std::vector<uint32_t>> bin_targets_;
  // This superstep's messages to remote vertices by remote index (remote r's end at
  // remote_end_[r] after the sort), for the relay.
  std::vector<uint64_t> remote_end_;
  std::vector<const Message*> remote_sorted_;
};

}  // namespace lockstep::bsp
