#pragma once

// The job a master drives, from its command line (--app and the job's flags) or from the record of
// the unfinished job its --checkpoint-dir holds (docs/design.md §7.7).
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "job_flags.h"
#include "lockstep/catalogue/app.h"
#include "lockstep/dbsp/master.h"
#include "lockstep/dbsp/security.h"

namespace lockstep::cli {

// `lockstep master`'s own flags, beside the job's (JobFlags).
struct MasterFlags {
  std::string listen;
  std::string app;
  std::string port_file;
  uint32_t min_workers = 0;
  uint32_t max_workers = 0;
  std::string acquire_timeout = "0";
  std::string last_call = "0";
  std::string every;
  std::string peer_timeout = "120s";
  std::string relay = "direct";
  uint64_t max_batch_bytes = 4 << 20;
  std::string save_parts;
  std::string checkpoint_dir;
  uint64_t checkpoint_every = 0;
  std::string checkpoint_interval = "0";
  uint32_t checkpoint_keep = 2;
  uint32_t max_restarts = 0;
  std::string recovery_timeout = "10s";
  std::string straggler_timeout = "0";
  bool replace_stragglers = false;
  dbsp::SecurityFlags security;
  dbsp::ConnectionLimits limits;
  std::string handshake_timeout = "10s";
  int metrics_port = -1;
};

// The job to drive: with --app, the one on the command line, or the same job unfinished in
// --checkpoint-dir to resume; without, the unfinished job there as recorded (then `given`, the
// names of the flags given, may hold only those that go with a resumption). Or the exit code of
// why there is none.
std::variant<int, dbsp::JobSpec> ResolveMasterJob(const catalogue::AppRegistry& apps,
                                                  const MasterFlags& m, JobFlags flags,
                                                  const std::vector<std::string>& given);

// A refusal to drive a job: another master drives it (kExitDriven), or the directory holds another
// job or none (a configuration error).
int RefuseJob(const absl::Status& status);

}  // namespace lockstep::cli
