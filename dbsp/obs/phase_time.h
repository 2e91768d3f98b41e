#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>

namespace lockstep::dbsp {

// Wall time spent in one phase of a distributed job (encode, send, forward, decode, barrier ...),
// summed over the job and logged at its end. One clock read per batch or barrier at each end of
// the phase, never per message; relaxed atomics, because the reading thread is not the adding one.
class PhaseTime {
 public:
  using Clock = std::chrono::steady_clock;

  void Add(Clock::duration d) {
    ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(),
                  std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
  }
  double seconds() const { return static_cast<double>(ns_.load(std::memory_order_relaxed)) * 1e-9; }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

  // Adds the time from its construction to its destruction.
  class Scope {
   public:
    explicit Scope(PhaseTime& phase) : phase_(phase), start_(Clock::now()) {}
    ~Scope() { phase_.Add(Clock::now() - start_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PhaseTime& phase_;
    Clock::time_point start_;
  };

 private:
  std::atomic<int64_t> ns_{0};
  std::atomic<uint64_t> count_{0};
};

// The run delay of the thread that made it: how long that thread has been runnable but waiting
// for a core, in all (Linux: the second field of /proc/thread-self/schedstat, which the kernel
// keeps in nanoseconds). One pread per reading; 0 where the kernel does not say.
class RunDelay {
 public:
  RunDelay() : fd_(::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}
  ~RunDelay() {
    if (fd_ >= 0) ::close(fd_);
  }
  RunDelay(const RunDelay&) = delete;
  RunDelay& operator=(const RunDelay&) = delete;

  double seconds() const {
    if (fd_ < 0) return 0;
    char text[96];
    const ssize_t n = ::pread(fd_, text, sizeof(text), 0);
    if (n <= 0) return 0;
    const char* end = text + n;
    uint64_t on_cpu = 0, waiting = 0;
    auto r = std::from_chars(text, end, on_cpu);
    if (r.ec != std::errc() || r.ptr == end) return 0;
    r = std::from_chars(r.ptr + 1, end, waiting);
    return r.ec == std::errc() ? static_cast<double>(waiting) * 1e-9 : 0;
  }

 private:
  int fd_;
};

}  // namespace lockstep::dbsp
