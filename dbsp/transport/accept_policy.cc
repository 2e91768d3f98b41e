#include "transport/accept_policy.h"

#include <algorithm>

namespace lockstep::dbsp::transport {

AcceptBudget BudgetFor(uint64_t open_files) {
  const uint64_t reserve = std::max<uint64_t>(64, open_files / 8);
  AcceptBudget b;
  b.inbound = open_files > reserve ? static_cast<size_t>(open_files - reserve) : 1;
  b.unadmitted = std::max<size_t>(1, b.inbound / 2);
  return b;
}

AcceptPolicy::Verdict AcceptPolicy::Accepted(int fd, std::string peer, Clock::time_point now) {
  Verdict v;
  if (connections_.size() >= budget_.inbound) {
    ++counts_.refused;
    return v;
  }
  if (counts_.unadmitted >= budget_.unadmitted) {
    v.evict = Evictable(now);
    if (v.evict < 0) {
      ++counts_.refused;
      return v;
    }
    Connection& old = connections_[v.evict];
    old.evicting = true;
    --counts_.unadmitted;
    ++counts_.evicted;
  }
  v.keep = true;
  by_peer_[peer] = fd;
  connections_[fd] = Connection{std::move(peer), now};
  waiting_.emplace_back(fd, now);
  ++counts_.unadmitted;
  counts_.inbound = connections_.size();
  return v;
}

int AcceptPolicy::Evictable(Clock::time_point now) {
  while (!waiting_.empty()) {
    const auto [fd, since] = waiting_.front();
    const auto it = connections_.find(fd);
    if (it == connections_.end() || it->second.since != since || it->second.admitted ||
        it->second.evicting) {
      waiting_.pop_front();  // closed, reused, admitted or already on its way out
      continue;
    }
    if (now - since < grace_) return -1;  // the oldest is still within its handshake's time
    waiting_.pop_front();
    return fd;
  }
  return -1;
}

bool AcceptPolicy::Closed(int fd) {
  const auto it = connections_.find(fd);
  if (it == connections_.end()) return false;
  if (!it->second.admitted && !it->second.evicting) --counts_.unadmitted;
  const auto peer = by_peer_.find(it->second.peer);
  if (peer != by_peer_.end() && peer->second == fd) by_peer_.erase(peer);
  connections_.erase(it);
  counts_.inbound = connections_.size();
  return true;
}

void AcceptPolicy::Admitted(std::string_view peer) {
  const auto p = by_peer_.find(std::string(peer));
  if (p == by_peer_.end()) return;
  Connection& c = connections_.at(p->second);
  if (c.admitted) return;
  c.admitted = true;
  if (!c.evicting) --counts_.unadmitted;
}

std::string CanonicalPeer(std::string_view grpc_peer) {
  std::string out;
  out.reserve(grpc_peer.size());
  for (size_t i = 0; i < grpc_peer.size(); ++i) {
    const std::string_view rest = grpc_peer.substr(i, 3);
    if (rest == "%5B" || rest == "%5D" || rest == "%25") {
      out += rest == "%5B" ? '[' : rest == "%5D" ? ']' : '%';
      i += 2;
    } else {
      out += grpc_peer[i];
    }
  }
  return out;
}

}  // namespace lockstep::dbsp::transport
