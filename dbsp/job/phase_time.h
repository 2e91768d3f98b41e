#pragma once

#include <atomic>
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

}  // namespace lockstep::dbsp
