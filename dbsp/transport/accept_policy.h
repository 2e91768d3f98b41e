#pragma once

// Which inbound connections a process keeps (docs/design.md §11): its servers' connections
// together hold at most a share of its open-file limit, leaving the rest to its own files and
// outbound dials; of that share, connections that have not yet made an admitted call (a silent
// or half-open peer, a client without the token) hold at most half. A connection over either
// bound is refused at once; when the unadmitted half is full, the oldest unadmitted connection
// that has had its handshake's time already is evicted to make room, so that peers which finish
// a handshake and then idle cannot keep a worker out for good.
//
// Pure bookkeeping: no sockets, no clock of its own; `AcceptGuard` (accept_guard.h) applies it
// to the accepted descriptors.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace lockstep::dbsp::transport {

struct AcceptBudget {
  size_t inbound = 0;     // connections of all the process's servers together
  size_t unadmitted = 0;  // of those, connections that have made no admitted call yet
};

// The budget for a process allowed `open_files` descriptors: an eighth (at least 64) stays for
// its own files, pipes and outbound connections; inbound connections share the rest, and
// unadmitted ones half of that.
AcceptBudget BudgetFor(uint64_t open_files);

struct AcceptCounts {
  size_t inbound = 0;
  size_t unadmitted = 0;
  uint64_t refused = 0;
  uint64_t evicted = 0;
};

class AcceptPolicy {
 public:
  using Clock = std::chrono::steady_clock;

  // `grace`: how long a connection may stay unadmitted before it may be evicted for a newcomer
  // (the handshake timeout: a peer that means to call has done so by then).
  AcceptPolicy(AcceptBudget budget, Clock::duration grace) : budget_(budget), grace_(grace) {}

  struct Verdict {
    bool keep = false;  // false: refuse the new connection (close it at once)
    int evict = -1;     // a connection to shut down to make room, or -1
  };
  // A connection from `peer` (the canonical "ipv4:ADDR:PORT" / "ipv6:[ADDR]:PORT", as gRPC names
  // peers) was accepted as descriptor `fd`.
  Verdict Accepted(int fd, std::string peer, Clock::time_point now);
  // Descriptor `fd` is being closed; false if it was not a connection of ours.
  bool Closed(int fd);
  // A call from `peer` passed admission: its connection no longer counts as unadmitted.
  void Admitted(std::string_view peer);

  AcceptCounts counts() const { return counts_; }
  const AcceptBudget& budget() const { return budget_; }
  void set_grace(Clock::duration grace) { grace_ = grace; }

 private:
  struct Connection {
    std::string peer;
    Clock::time_point since;
    bool admitted = false;
    bool evicting = false;
  };
  // The oldest unadmitted connection that may be evicted at `now`, or -1.
  int Evictable(Clock::time_point now);

  AcceptBudget budget_;
  Clock::duration grace_;
  std::unordered_map<int, Connection> connections_;
  std::unordered_map<std::string, int> by_peer_;
  // Unadmitted connections in the order they came, entries made stale by a close or an
  // admission dropped lazily (the time tells a reused descriptor from the one queued).
  std::deque<std::pair<int, Clock::time_point>> waiting_;
  AcceptCounts counts_;
};

// gRPC's peer string ("ipv4:127.0.0.1:5000", "ipv6:[::1]:5000", the brackets maybe
// percent-encoded) in the canonical form `Accepted` takes.
std::string CanonicalPeer(std::string_view grpc_peer);

}  // namespace lockstep::dbsp::transport
