#pragma once

#include "absl/status/statusor.h"
#include "lockstep/bsp/job.h"
#include "lockstep/bsp/relayer.h"
#include "lockstep/v1/jobqueue.pb.h"

namespace lockstep::dbsp {

// Conversions between the engine's plain types and the wire protocol.
v1::JobDetails ToWire(const bsp::JobDetails& details);
absl::StatusOr<bsp::JobDetails> FromWire(const v1::JobDetails& wire);

v1::RelayBatch ToWire(bsp::RelayBatch&& batch);
absl::StatusOr<bsp::RelayBatch> FromWire(v1::RelayBatch&& wire);

}  // namespace lockstep::dbsp
