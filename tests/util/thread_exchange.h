#pragma once

// An in-process Exchange for tests: N "processes" as N threads of one test, joined by a barrier.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/exchange.h"

namespace lockstep::test {

// The shared state of a group of N ThreadExchange endpoints.
class ThreadExchangeGroup {
 public:
  explicit ThreadExchangeGroup(uint32_t n) : n_(n), slots_(n, std::vector<std::string>(n)) {}

  uint32_t size() const { return n_; }

  // Collective over the group: deposits outgoing, waits for everyone, takes its incoming. Fails
  // (Aborted) instead of waiting for a process that has left (Leave).
  absl::StatusOr<std::vector<std::string>> AllToAll(uint32_t rank,
                                                    std::vector<std::string> outgoing) {
    std::unique_lock<std::mutex> lock(mu_);
    // Wait until the previous round has been fully collected (everyone in it takes its part).
    cv_.wait(lock, [&] { return !collecting_; });
    if (left_) return absl::AbortedError("a process of the exchange has left");
    for (uint32_t q = 0; q < n_; ++q) slots_[q][rank] = std::move(outgoing[q]);
    if (++arrived_ == n_) {
      collecting_ = true;
      taken_ = 0;
      cv_.notify_all();
    } else {
      const uint64_t round = round_;
      cv_.wait(lock, [&] { return (collecting_ && round_ == round) || left_; });
      if (!(collecting_ && round_ == round)) {
        return absl::AbortedError("a process of the exchange has left");
      }
    }
    std::vector<std::string> incoming = std::move(slots_[rank]);
    slots_[rank].assign(n_, std::string());
    if (++taken_ == n_) {
      arrived_ = 0;
      collecting_ = false;
      ++round_;
      cv_.notify_all();
    }
    return incoming;
  }

  // A process is done with the exchange (returned, or failed alone: a worker that finds a peer's
  // batch malformed): whoever still waits for it in a collective, or starts one, fails.
  void Leave() {
    std::lock_guard<std::mutex> lock(mu_);
    left_ = true;
    cv_.notify_all();
  }

 private:
  uint32_t n_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<std::string>> slots_;  // slots_[to][from]
  uint32_t arrived_ = 0;
  uint32_t taken_ = 0;
  bool collecting_ = false;
  bool left_ = false;
  uint64_t round_ = 0;
};

class ThreadExchange final : public bsp::Exchange {
 public:
  ThreadExchange(std::shared_ptr<ThreadExchangeGroup> group, uint32_t rank)
      : group_(std::move(group)), rank_(rank) {}
  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return group_->size(); }
  absl::StatusOr<std::vector<std::string>> AllToAll(std::vector<std::string> outgoing) override {
    if (outgoing.size() != group_->size()) {
      return absl::InvalidArgumentError("AllToAll: one string per process expected");
    }
    return group_->AllToAll(rank_, std::move(outgoing));
  }

 private:
  std::shared_ptr<ThreadExchangeGroup> group_;
  uint32_t rank_;
};

}  // namespace lockstep::test
