#pragma once

// A job's ID and its key: random (v4) UUIDs.

#include <string>

namespace lockstep::dbsp::job {

// The job's ID, as text ("3f2c...-...").
std::string NewJobId();
// The job's key: random bytes (transport::kJobKeyBytes) that admit a peer's batch to this job and
// no other.
std::string NewJobKey();

}  // namespace lockstep::dbsp::job
