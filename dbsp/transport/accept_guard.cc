#include "transport/accept_guard.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "transport/log_limit.h"

#ifdef LOCKSTEP_ACCEPT_GUARD
extern "C" int __real_accept4(int fd, sockaddr* addr, socklen_t* len, int flags);
extern "C" int __real_close(int fd);
#endif

namespace lockstep::dbsp::transport {
namespace {

// "ipv4:ADDR:PORT" or "ipv6:[ADDR]:PORT" as gRPC names a peer (a v4-mapped address as IPv4).
std::string PeerName(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    return absl::StrCat("ipv4:", text, ":", ntohs(in.sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
      ::inet_ntop(AF_INET, &in6.sin6_addr.s6_addr[12], text, sizeof text);
      return absl::StrCat("ipv4:", text, ":", ntohs(in6.sin6_port));
    }
    ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    return absl::StrCat("ipv6:[", text, "]:", ntohs(in6.sin6_port));
  }
  return "";
}

class Guard {
 public:
  Guard() : policy_(BudgetFor(OpenFileLimit()), std::chrono::seconds(10)) {
    tracked_ = std::make_unique<std::atomic<bool>[]>(slots_);
    spare_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  void set_grace(std::chrono::milliseconds grace) {
    std::lock_guard<std::mutex> lock(mu_);
    policy_.set_grace(grace);
  }

  // Whether connection `fd` (accepted from `addr`) stays; one refused is closed here. Called
  // from gRPC's poller, so nothing may unwind (out of memory in the bookkeeping terminates).
  bool Keep(int fd, const sockaddr_storage& addr) noexcept {
    if (fd < 0 || static_cast<size_t>(fd) >= slots_) {
      Refuse(fd, "its descriptor is past the open-file limit the guard was sized for");
      return false;
    }
    AcceptPolicy::Verdict v;
    {
      std::lock_guard<std::mutex> lock(mu_);
      v = policy_.Accepted(fd, PeerName(addr), AcceptPolicy::Clock::now());
      if (v.keep) tracked_[fd].store(true, std::memory_order_release);
      // Still ours (its close waits for this lock): shutting it down makes gRPC read its end
      // and close it.
      if (v.evict >= 0) ::shutdown(v.evict, SHUT_RDWR);
    }
    if (!v.keep) Refuse(fd, "too many connections not yet admitted");
    return v.keep;
  }

  // Before descriptor `fd` is closed.
  void Closing(int fd) noexcept {
    if (fd < 0 || static_cast<size_t>(fd) >= slots_) return;
    if (!tracked_[fd].load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(mu_);
    tracked_[fd].store(false, std::memory_order_release);
    policy_.Closed(fd);
  }

  void Admitted(std::string_view peer) {
    const std::string canonical = CanonicalPeer(peer);
    std::lock_guard<std::mutex> lock(mu_);
    policy_.Admitted(canonical);
  }

  AcceptCounts counts() {
    std::lock_guard<std::mutex> lock(mu_);
    return policy_.counts();
  }

#ifdef LOCKSTEP_ACCEPT_GUARD
  // Out of descriptors: the reserved one makes room to take the waiting connection and close it,
  // so that the listener's queue drains. False if there was none to take.
  bool ShedOne(int listener) noexcept {
    std::lock_guard<std::mutex> lock(spare_mu_);
    if (spare_ < 0) return false;
    __real_close(spare_);
    const int fd = __real_accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) __real_close(fd);
    spare_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    Refuse(-1, "the process is out of descriptors");
    return true;
  }
#endif

 private:
  static uint64_t OpenFileLimit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1024;
    return limit.rlim_cur;
  }

  void Refuse(int fd, const char* why) {
    if (fd >= 0) {
#ifdef LOCKSTEP_ACCEPT_GUARD
      __real_close(fd);
#else
      ::close(fd);
#endif
    }
    if (auto suffix = log_.Admit()) {
      const AcceptCounts c = counts();
      spdlog::warn("refused a connection: {} ({} connections, {} not yet admitted){}", why,
                   c.inbound, c.unadmitted, *suffix);
    }
  }
  const size_t slots_ = static_cast<size_t>(OpenFileLimit());
  std::unique_ptr<std::atomic<bool>[]> tracked_;
  std::mutex mu_;
  AcceptPolicy policy_;
  std::mutex spare_mu_;
  int spare_ = -1;
  LogLimit log_;
};

// Made when the first server is configured or accepts, after the command line raised the
// open-file limit; never destroyed (closes come until the process exits). A close before then
// has nothing to count.
std::atomic<Guard*> made{nullptr};

Guard& TheGuard() {
  static Guard* guard = [] {
    auto* g = new Guard();
    made.store(g, std::memory_order_release);
    return g;
  }();
  return *guard;
}

}  // namespace

void ConfigureAcceptGuard(std::chrono::milliseconds grace) { TheGuard().set_grace(grace); }
void MarkAdmitted(std::string_view peer) { TheGuard().Admitted(peer); }
AcceptCounts CurrentAcceptCounts() { return TheGuard().counts(); }

bool AcceptGuardActive() {
#ifdef LOCKSTEP_ACCEPT_GUARD
  return true;
#else
  return false;
#endif
}

}  // namespace lockstep::dbsp::transport

#ifdef LOCKSTEP_ACCEPT_GUARD
using lockstep::dbsp::transport::TheGuard;

extern "C" int __wrap_accept4(int listener, sockaddr* addr, socklen_t* len, int flags) {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof peer;
    const int fd = __real_accept4(listener, reinterpret_cast<sockaddr*>(&peer), &peer_len, flags);
    if (fd < 0) {
      if (errno != EMFILE && errno != ENFILE) return -1;
      if (TheGuard().ShedOne(listener)) continue;
      errno = EAGAIN;  // the listener waits for the next connection instead of giving up
      return -1;
    }
    if (!TheGuard().Keep(fd, peer)) continue;
    if (addr != nullptr && len != nullptr) {
      std::memcpy(addr, &peer, std::min<size_t>(*len, peer_len));
      *len = peer_len;
    }
    return fd;
  }
}

extern "C" int __wrap_close(int fd) {
  if (auto* guard = lockstep::dbsp::transport::made.load(std::memory_order_acquire)) {
    guard->Closing(fd);
  }
  return __real_close(fd);
}
#endif
