#include "job/peer_collective.h"

#include "absl/strings/str_cat.h"
#include "lockstep/dbsp/settings.h"

namespace lockstep::dbsp::job {

PeerCollective::PeerCollective(transport::PeerLinks& links, size_t piece_bytes,
                               std::chrono::milliseconds wait)
    : links_(links), piece_bytes_(std::max<size_t>(1, piece_bytes)), wait_(wait) {}

absl::StatusOr<std::vector<std::string>> PeerCollective::AllToAll(
    std::vector<std::string> outgoing) {
  const uint32_t n = size(), me = rank();
  if (outgoing.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("all-to-all: ", outgoing.size(), " parts for ", n, " workers"));
  }
  uint64_t round;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return status_;
    round = round_;
  }
  std::string own = std::move(outgoing[me]);
  if (auto st = SendAll(round, std::move(outgoing)); !st.ok()) return st;
  std::unique_lock<std::mutex> lock(mu_);
  if (auto st = WaitForRoundLocked(round, lock); !st.ok()) return st;
  std::vector<std::string> incoming = TakeRoundLocked(round);
  incoming[me] = std::move(own);
  rounds_.erase(round);
  ++round_;
  return incoming;
}

absl::Status PeerCollective::SendAll(uint64_t round, std::vector<std::string> outgoing) {
  const uint32_t n = size(), me = rank();
  // Send to the others in turn, starting after this worker, so that not everyone sends to worker
  // 0 first.
  for (uint32_t k = 1; k < n; ++k) {
    const uint32_t to = (me + k) % n;
    std::string& data = outgoing[to];
    const size_t pieces = std::max<size_t>(1, (data.size() + piece_bytes_ - 1) / piece_bytes_);
    for (size_t i = 0; i < pieces; ++i) {
      v1::PeerBatch batch;
      v1::CollectiveChunk* chunk = batch.mutable_chunk();
      chunk->set_round(round);
      chunk->set_seq(static_cast<uint32_t>(i));
      chunk->set_last(i + 1 == pieces);
      if (pieces == 1) {
        chunk->set_data(std::move(data));
      } else {
        chunk->set_data(data.substr(i * piece_bytes_, piece_bytes_));
      }
      if (auto st = links_.Send(to, std::move(batch)); !st.ok()) {
        Fail(st);
        return st;
      }
    }
    std::string().swap(data);
  }
  return absl::OkStatus();
}

std::vector<uint32_t> PeerCollective::MissingLocked(uint64_t round) const {
  std::vector<uint32_t> missing;
  const Round& r = rounds_.at(round);
  for (uint32_t p = 0; p < r.from.size(); ++p) {
    if (p != rank() && !r.from[p].complete()) missing.push_back(p);
  }
  return missing;
}

absl::Status PeerCollective::WaitForRoundLocked(uint64_t round,
                                                std::unique_lock<std::mutex>& lock) {
  rounds_[round].from.resize(size());
  auto done = [&] { return !status_.ok() || MissingLocked(round).empty(); };
  const auto started = std::chrono::steady_clock::now();
  if (on_waiting_ && !changed_.wait_for(lock, std::chrono::seconds(1), done)) {
    const std::vector<uint32_t> missing = MissingLocked(round);
    lock.unlock();
    on_waiting_(missing);
    lock.lock();
  }
  if (wait_.count() > 0) {
    if (!changed_.wait_until(lock, started + wait_, done)) {
      std::string missing;
      for (uint32_t p : MissingLocked(round)) {
        absl::StrAppend(&missing, missing.empty() ? "" : ", ", p);
      }
      status_ = absl::DeadlineExceededError(
          absl::StrCat("worker ", rank(), " waited ", wait_.count() / 1000.0,
                       " s for its share of an exchange from worker(s) ", missing, " (",
                       SettingName(Setting::kPeerTimeout), ")"));
    }
  } else {
    changed_.wait(lock, done);
  }
  return status_;
}

std::vector<std::string> PeerCollective::TakeRoundLocked(uint64_t round) {
  std::vector<std::string> incoming(size());
  Round& r = rounds_[round];
  for (uint32_t p = 0; p < incoming.size(); ++p) {
    if (p == rank()) continue;
    auto& pieces = r.from[p].pieces;
    if (pieces.size() == 1) {
      incoming[p] = std::move(pieces.begin()->second);
      continue;
    }
    size_t total = 0;
    for (const auto& [seq, piece] : pieces) total += piece.size();
    incoming[p].reserve(total);
    for (auto& [seq, piece] : pieces) {
      incoming[p] += piece;
      std::string().swap(piece);
    }
  }
  return incoming;
}

absl::Status PeerCollective::OnChunk(uint32_t from, v1::CollectiveChunk& chunk) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.ok()) return status_;
  const uint32_t n = size();
  if (from >= n || from == rank()) {
    return absl::InvalidArgumentError(absl::StrCat("an exchange piece from worker ", from));
  }
  // A peer is at most one round ahead: it cannot finish a round before this worker has sent it
  // its part of that round.
  if (chunk.round() < round_ || chunk.round() > round_ + 1) {
    return absl::InvalidArgumentError(absl::StrCat("worker ", from, " sent a piece of exchange ",
                                                   chunk.round(), " during exchange ", round_));
  }
  Round& r = rounds_[chunk.round()];
  r.from.resize(n);
  FromPeer& f = r.from[from];
  if (f.count >= 0 && chunk.seq() >= f.count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker ", from, " sent more pieces of exchange ", chunk.round(), " than it said"));
  }
  if (chunk.last()) {
    if (f.count >= 0 || f.pieces.size() > chunk.seq() ||
        (!f.pieces.empty() && f.pieces.rbegin()->first >= chunk.seq())) {
      return absl::InvalidArgumentError(
          absl::StrCat("worker ", from, " ended exchange ", chunk.round(), " twice or early"));
    }
    f.count = int64_t{chunk.seq()} + 1;
  }
  if (!f.pieces.emplace(chunk.seq(), std::move(*chunk.mutable_data())).second) {
    return absl::InvalidArgumentError(absl::StrCat("worker ", from, " sent piece ", chunk.seq(),
                                                   " of exchange ", chunk.round(), " twice"));
  }
  // The exchange waits for every peer's part whole: a piece before the last wakes nobody.
  if (f.complete()) changed_.notify_all();
  return absl::OkStatus();
}

void PeerCollective::Fail(absl::Status reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_.ok()) status_ = std::move(reason);
  changed_.notify_all();
}

}  // namespace lockstep::dbsp::job
