#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/relayer.h"
#include "lockstep/runner/job_runner.h"
#include "lockstep/v1/jobqueue.pb.h"
#include "protocol/protocol.h"

namespace lockstep::dbsp::transport {

// A worker's job as the master assigns it: the engine's details and the protocol's options.
struct Assignment {
  runner::JobDetails details;
  std::chrono::milliseconds peer_timeout{0};  // 0: no bound
  // The data plane (docs/design.md §5.7): where each worker's peers reach it, the job's key, and
  // whether supersteps' messages go worker to worker (direct) or through the master.
  std::vector<std::string> peer_addresses;
  std::string job_key;
  bool relay_direct = true;
  uint64_t max_batch_bytes = 0;
};

// The default byte bound of a batch between two workers (--max-batch-bytes).
inline constexpr uint64_t kDefaultMaxBatchBytes = 4 << 20;
// A job key is this many random bytes.
inline constexpr size_t kJobKeyBytes = 16;

// Conversions between the plain types of the engine and protocol and the wire.
v1::JobDetails ToWire(const Assignment& assignment);
absl::StatusOr<Assignment> FromWire(const v1::JobDetails& wire);

v1::Step ToWire(const protocol::Step& step);
absl::StatusOr<protocol::Step> FromWire(const v1::Step& wire);

v1::RelayBatch ToWire(bsp::RelayBatch&& batch);
absl::StatusOr<bsp::RelayBatch> FromWire(v1::RelayBatch&& wire);

}  // namespace lockstep::dbsp::transport
