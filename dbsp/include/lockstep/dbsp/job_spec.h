#pragma once

// What a master is asked to run and what it reports (docs/design.md §5, §7): the job's spec, the
// pool's bounds, a superstep's progress, a job's result and status. Apart from the Master
// (master.h) so that the job layer, which the Master uses, does not include it back.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/catalogue/app.h"
#include "lockstep/runner/job.h"

namespace lockstep::dbsp {

struct PoolOptions {
  uint32_t min_workers = 0;                      // 0: every connected worker, at least one
  uint32_t max_workers = 0;                      // 0: no cap
  std::chrono::milliseconds acquire_timeout{0};  // 0: wait forever
  std::chrono::milliseconds last_call{0};        // once the minimum is met, wait this long for more
};

// One superstep as the master saw it, for progress lines.
struct MasterProgress {
  std::string job_id;
  bsp::StepStats global;
  uint64_t relayed_batches = 0;  // in this superstep
  uint64_t relayed_bytes = 0;
  double seconds = 0;    // wall time of the superstep on the master, barriers included
  uint32_t attempt = 1;  // the job's attempt (docs/design.md §7.5), from 1
  // The workers that straggled in this superstep's barriers ("worker 1 (...) +2.1 s at POST(5)").
  std::vector<std::string> stragglers;
  // Each worker's name and time from the superstep's start to its entry into POST.
  std::vector<std::string> worker_names;
  std::vector<double> worker_seconds;
  // The traced vertices' lines of the superstep (--trace-vertex), sanitised, in worker order.
  std::vector<std::string> trace;
};

inline constexpr std::chrono::milliseconds kDefaultPeerTimeout{120000};

struct JobSpec {
  const catalogue::AppInfo* app = nullptr;
  // app, params, graph and max_supersteps as for a local run; output is the result directory.
  runner::JobDetails details;
  PoolOptions pool;
  // How long a worker may take to enter a barrier once it opened (the first one includes loading
  // the graph) before the job fails naming it; 0: no bound (docs/design.md §7).
  std::chrono::milliseconds peer_timeout = kDefaultPeerTimeout;
  // How supersteps' messages travel: worker to worker (direct), or through the master's streams.
  // The load's exchanges always go worker to worker (docs/design.md §5.7).
  bool relay_direct = true;
  // The largest batch a worker sends another (0: the default, 4 MiB).
  uint64_t max_batch_bytes = 0;
  std::function<void(const MasterProgress&)> progress;
  // Checkpoints (docs/design.md §7.6): every `checkpoint_every` supersteps (0: none) the workers
  // write the job's state into CHECKPOINT_DIR/<job id>, which every process must reach; the newest
  // `checkpoint_keep` stay while the job runs, and the job's directory goes when the job ends.
  std::string checkpoint_dir;
  uint64_t checkpoint_every = 0;
  // Also a checkpoint once this long has passed since the last one (0: by supersteps only).
  std::chrono::milliseconds checkpoint_interval{0};
  uint32_t checkpoint_keep = 2;
  // Recovery (docs/design.md §7.5): a worker lost or silent ends the attempt, not the job, up to
  // this many times; the next attempt takes the pool's workers (up to pool.max_workers, or as
  // many as the attempt before) waiting up to `recovery_timeout` for more, at least one, and
  // resumes from the newest complete checkpoint (or the start).
  uint32_t max_restarts = 0;
  std::chrono::milliseconds recovery_timeout{10000};
  // Stragglers (docs/design.md §7.5): a worker that has not entered a barrier this long after the
  // others (0: three times the median of their times, at least 1 s) is reported in the progress
  // lines and the log; with `replace_stragglers` it is also lost (the attempt ends, another may
  // follow without it).
  std::chrono::milliseconds straggler_timeout{0};
  bool replace_stragglers = false;
  // The service's period (`master --every`; 0: one job), recorded with a checkpointed job so that
  // a master resuming it goes on with the service.
  std::chrono::milliseconds every{0};
  // The ID of an unfinished job in checkpoint_dir to finish (FindUnfinishedJob; docs/design.md
  // §7.7); empty: a new job.
  std::string resume_job;
  // Set when the results go to a sink that is not a directory (a database table, docs/design.md
  // §10); details.work.output then names it. The master prepares a staging place per attempt, the
  // workers ship their parts there (JobWork::output_options), and the master publishes it
  // once every worker has, or discards it.
  struct Sink {
    // The staging place of the attempt named `name`: the options the workers ship with.
    std::function<absl::StatusOr<std::map<std::string, std::string>>(const std::string& name)>
        prepare;
    // Publishes what was staged, which must hold `vertices` results, with the job's record (the
    // JSON a directory's _SUCCESS holds).
    std::function<absl::Status(const std::map<std::string, std::string>& staged, uint64_t vertices,
                               const std::string& record)>
        publish;
    std::function<void(const std::map<std::string, std::string>& staged)> discard;
  };
  std::optional<Sink> sink;
  // Graph options that hold for one master only (a database snapshot its session exports, §10):
  // not kept in the job's record, and a job resumed by another master restores no checkpoint
  // taken on them but starts over from superstep 0 on its own.
  std::vector<std::string> ephemeral_graph_options;
};

// What a master started on a checkpoint directory finishes (docs/design.md §7.7). With `given` (a
// job on the command line): the unfinished job in `checkpoint_dir` that is the same job, to be
// resumed with given's settings, or nullopt (none: a new job); AlreadyExists if a live master
// drives that job; InvalidArgument if an unfinished job that no live master drives is another job
// (both named). Without: the oldest unfinished job that no live master drives, as recorded;
// NotFound if there is none, AlreadyExists if a live master drives each. RunJob also refuses
// (AlreadyExists) a job whose lease another master took meanwhile.
absl::StatusOr<std::optional<JobSpec>> FindUnfinishedJob(const std::string& checkpoint_dir,
                                                         const catalogue::AppRegistry& apps,
                                                         const JobSpec* given);

struct JobResult {
  std::string job_id;
  uint32_t workers = 0;
  uint64_t vertices = 0;
  uint64_t supersteps = 0;
  double seconds = 0;
  std::string output;  // the published job directory
  uint32_t attempts = 1;
};

// What `lockstep status` shows: where a master's running (or last) job is.
struct JobStatus {
  bool running = false;
  std::string job_id;
  std::string app;
  uint64_t superstep = 0;  // the last superstep done
  uint64_t active = 0;
  double elapsed_seconds = 0;
  double remaining_seconds = -1;  // at the mean superstep time so far; negative: unknown
  uint64_t max_supersteps = 0;
  uint32_t workers_connected = 0;
  // Each worker's name and its time from the last superstep's start to its entry into POST.
  std::vector<std::pair<std::string, double>> workers;
};

}  // namespace lockstep::dbsp
