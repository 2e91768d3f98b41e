#pragma once

// A distributed job's staging tables and their leases (docs/design.md §10, "Staging tables and
// their leases"). The master creates a staging table per attempt, the workers copy their parts
// into it (CopyIntoStage), and the master publishes it or drops it. A master that dies, or a server
// that dies under it, cannot drop it, so each staging table carries a lease: a row of
// `lockstep_leases` that its master renews. A later job, of any master, drops the staging tables
// whose lease is dead, and never one whose lease is live.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/db/postgres.h"

namespace lockstep::db {

// A lease is renewed every kStageRenewEvery, by the server's clock, and is dead when it has not
// been renewed for kStageDeadAfter since the later of its last renewal and the server's start (a
// restarted server gives every master that long to come back and renew).
inline constexpr std::chrono::seconds kStageRenewEvery{2};
inline constexpr std::chrono::seconds kStageDeadAfter{30};

class StageLease;

// The staging tables of one master's jobs, each with its lease, from the sink's `prepare` to its
// `publish` or `discard` (three separate calls). Thread-safe.
class Stages {
 public:
  Stages();
  ~Stages();  // stops renewing what is left: those leases then die by their age
  Stages(const Stages&) = delete;
  Stages& operator=(const Stages&) = delete;

  // Drops the staging tables whose lease is dead (DropDeadStages), then creates the staging table
  // `stage` for `options`' results and its lease, in one transaction; the lease is renewed until
  // the table is published or dropped. Fails if a staging table of that name exists.
  absl::Status Create(const SinkOptions& options, const std::string& stage);
  // Publishes the staging table `stage` as PublishResults does (`vertices` rows, the job's row in
  // lockstep_jobs), in one transaction that also ends its lease; fails, publishing nothing, if the
  // lease was lost (judged dead by another job, which dropped the table).
  absl::StatusOr<Publication> Publish(const SinkOptions& options, const std::string& stage,
                                      uint64_t vertices, const JobRecord& record);
  // Drops the staging table `stage` and its lease, if they exist. What it cannot drop (the server
  // gone) it logs; a later job drops it once its lease is dead.
  void Drop(const std::string& uri, const std::string& stage);

 private:
  std::unique_ptr<StageLease> Take(const std::string& stage);
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<StageLease>> leases_;
};

// Drops every staging table whose name starts with `prefix`, and its lease: the staging tables of
// a job's earlier attempts, left by a master that died (one master drives a job: §7.7).
absl::Status DropStages(const std::string& uri, const std::string& prefix);

// Drops the staging tables (`lockstep_stage_*` in the current schema) whose lease is dead, with
// their leases, and returns their names; never one whose lease is live. A staging table without a
// lease (made by a lockstep before leases) gets one, renewed now: it dies by its age.
absl::StatusOr<std::vector<std::string>> DropDeadStages(
    const std::string& uri, std::chrono::seconds dead_after = kStageDeadAfter);

}  // namespace lockstep::db
