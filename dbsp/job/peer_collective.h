#pragma once

// The Exchange of a distributed job's workers (bsp/exchange.h) over the peer plane: each
// all-to-all is a round; what a worker sends another in a round travels as numbered pieces of at
// most the job's batch bound, and a round is over for a worker once it holds every piece every
// other worker sent it.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/v1/jobqueue.pb.h"
#include "transport/peer.h"

namespace lockstep::dbsp::job {

class PeerCollective final : public bsp::Exchange {
 public:
  // `wait` bounds how long a round waits for its pieces (0: no bound).
  PeerCollective(transport::PeerLinks& links, size_t piece_bytes, std::chrono::milliseconds wait);

  uint32_t rank() const override { return links_.self(); }
  uint32_t size() const override { return links_.size(); }
  absl::StatusOr<std::vector<std::string>> AllToAll(std::vector<std::string> outgoing) override;

  // A gRPC thread: a piece from worker `from`. An error refuses it (a piece of a round that is
  // over or too far ahead, a repeated or surplus piece).
  absl::Status OnChunk(uint32_t from, v1::CollectiveChunk& chunk);
  // Called (on the waiting thread, once per round) with the workers whose pieces a round still
  // lacks after a second.
  void SetWaitingListener(std::function<void(const std::vector<uint32_t>&)> listener) {
    on_waiting_ = std::move(listener);
  }
  // The job failed: a waiting round returns `reason`.
  void Fail(absl::Status reason);

 private:
  struct FromPeer {
    std::map<uint32_t, std::string> pieces;
    int64_t count = -1;  // known once the last piece arrived
    bool complete() const { return count >= 0 && pieces.size() == static_cast<size_t>(count); }
  };
  struct Round {
    std::vector<FromPeer> from;
  };

  // AllToAll's steps: send this worker's pieces of `round`; wait for every other worker's (under
  // mu_, held by `lock`); take what they sent, in worker order.
  absl::Status SendAll(uint64_t round, std::vector<std::string> outgoing);
  absl::Status WaitForRoundLocked(uint64_t round, std::unique_lock<std::mutex>& lock);
  std::vector<std::string> TakeRoundLocked(uint64_t round);
  // Under mu_: the other workers whose pieces of `round` are not all in.
  std::vector<uint32_t> MissingLocked(uint64_t round) const;

  transport::PeerLinks& links_;
  const size_t piece_bytes_;
  const std::chrono::milliseconds wait_;
  std::mutex mu_;
  std::condition_variable changed_;
  uint64_t round_ = 0;  // the round this worker is in (or will start next)
  std::map<uint64_t, Round> rounds_;
  absl::Status status_;
  std::function<void(const std::vector<uint32_t>&)> on_waiting_;
};

}  // namespace lockstep::dbsp::job
