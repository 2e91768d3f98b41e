#pragma once

// A job as its record keeps it (docs/design.md §7.7): what decides its answer and where it goes
// (the *job*, compared with a command line's), and how it is run (the *run*, which a master
// resuming the job without a command line goes on with); and back from a record to a spec.
// FindUnfinishedJob (lockstep/dbsp/master.h) is defined here too.

#include "lockstep/dbsp/job_spec.h"
#include "nlohmann/json.hpp"

namespace lockstep::dbsp::job {

// The reason of a restart after the master's (in _SUCCESS and the record).
inline constexpr char kMasterRestarted[] = "the master restarted";

// The job of `spec`, as its record keeps it and a command line's is compared with.
nlohmann::json JobOfSpec(const JobSpec& spec);
// How `spec` is run, as its record keeps it.
nlohmann::json RunOfSpec(const JobSpec& spec);

}  // namespace lockstep::dbsp::job
