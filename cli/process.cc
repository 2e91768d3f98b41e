#include "process.h"

#include <sys/resource.h>

#include <algorithm>
#include <csignal>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
#endif

#include "absl/synchronization/mutex.h"
#include "spdlog/spdlog.h"

namespace lockstep::cli {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

}  // namespace

std::atomic<bool>& StopRequested() { return g_stop; }

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

void RaiseFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, rlim_t{1} << 20);
  if (::setrlimit(RLIMIT_NOFILE, &limit) == 0) {
    spdlog::debug("open files: up to {} (was {})", limit.rlim_cur, before);
  }
}

void TuneWorkerMalloc() {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  // One malloc arena for the whole worker: with one per thread, what the gRPC threads and the job
  // thread free stays resident in separate heaps. A lower peak RSS per worker at the same CPU
  // (bench/README.md; docs/design.md §4).
  mallopt(M_ARENA_MAX, 1);
  // Freed memory stays in the heap for the next round to reuse: the load's rounds allocate and
  // free buffers of the same few MB each round, which glibc's dynamic thresholds would otherwise
  // hand back to the kernel (trimming the heap's top, or mapping a buffer afresh) only for the next
  // round to fault its pages in again. Up to 32 MB from the heap (glibc's largest dynamic
  // threshold), and no trimming on free: ReturnFreedMemory() gives the free memory back between
  // phases, before each peak.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

void SkipLockOrderChecks() { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); }

}  // namespace lockstep::cli
