#pragma once

// What a master or a worker exposes to Prometheus (docs/design.md §12): a few counters and gauges
// the process updates as it goes, rendered in Prometheus' text format, and a plain HTTP server
// that serves them on /metrics from the process's start.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace lockstep::dbsp {

// The phases whose time lockstep_phase_seconds_total counts.
enum class JobPhase { kLoad, kCompute, kCheckpoint, kOutput, kCount };

struct Metrics {
  // The running (or last) job's superstep and its active vertices (the master: of the whole job;
  // a worker: its own).
  std::atomic<uint64_t> superstep{0};
  std::atomic<uint64_t> active_vertices{0};
  // Messages sent, and bytes sent to other processes (a worker: to its peers; the master: relayed).
  std::atomic<uint64_t> messages{0};
  std::atomic<uint64_t> bytes_sent{0};
  // The master: workers connected (in its pool or in a job).
  std::atomic<uint64_t> workers{0};
  // Jobs ended, by outcome.
  std::atomic<uint64_t> jobs_completed{0};
  std::atomic<uint64_t> jobs_failed{0};
  // Checkpoints taken, and attempts restarted after a lost worker (the master).
  std::atomic<uint64_t> checkpoints{0};
  std::atomic<uint64_t> restarts{0};
  // Microseconds spent in each phase.
  std::atomic<uint64_t> phase_us[static_cast<int>(JobPhase::kCount)] = {};

  void AddPhase(JobPhase p, double seconds) {
    phase_us[static_cast<int>(p)] += static_cast<uint64_t>(seconds * 1e6);
  }
  // Prometheus' text exposition format (version 0.0.4). `role` is "master" or "worker";
  // lockstep_workers only for the master.
  std::string Render(const std::string& role) const;
};

// A plain HTTP server for /metrics (and /healthz): always plain text, even when gRPC uses TLS,
// as Prometheus scrapes it. One connection at a time, each bounded in size and time, so that a
// slow or hostile client holds it at most a few seconds.
class MetricsServer {
 public:
  // Listens on `address` (HOST:PORT; port 0 picks a free one) and answers GET /metrics with
  // `render()`.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& address,
                                                              std::function<std::string()> render);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  int port() const;

 private:
  struct Impl;
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::dbsp
