#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/checksum.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

struct PartitionLoadStats;  // load_stats.h

// Everything a process needs to run its part of a job, in plain types (the distributed layer
// converts it to and from the wire).
struct JobDetails {
  std::string job_id;
  int64_t created_at_unix_ms = 0;
  std::string app;
  // The app's parameters by name, already merged (defaults < Graphalytics properties < flags).
  std::map<std::string, std::string> params;
  GraphSource graph;
  // The file this process writes its results to.
  std::string output;
  // Distributed only: set when the job's results go somewhere that is not a file (a database
  // table, docs/design.md §10): where the worker ships the file it wrote (not on the wire's
  // `output`, which then names the sink).
  std::map<std::string, std::string> output_options;
  // Distributed workers only: if set, they first write the graph's partitioned binary form to
  // this directory (load::WritePartitionedFormDistributed) and the job runs on it.
  std::string save_parts;
  // Distributed workers only: the job's checkpoint directory (docs/design.md §7.6), shared by
  // every process; empty: no checkpoints.
  std::string checkpoint_dir;
  // Distributed only: the complete checkpoint the job resumes from (a checkpoint's directory,
  // docs/design.md §7.6; empty: superstep 0), at superstep `resume_superstep`, in attempt
  // `attempt` (0: the first).
  std::string restore_from;
  uint64_t resume_superstep = 0;
  uint32_t attempt = 0;
  // A job that needs more supersteps than this fails and says so.
  uint64_t max_supersteps = 10000;
  // The vertices to trace, by external ID (--trace-vertex, docs/design.md §12): the process
  // holding each one reports what it did in every superstep (StepEngine::TakeTrace).
  std::vector<std::string> trace_vertices;
  uint32_t worker_index = 0;
  uint32_t worker_count = 1;
  // The distributed master runs the same program on an empty graph, so that the callbacks and the
  // global aggregators live there too; it loads nothing.
  bool coordinator = false;
  // The inclusive UUID range of this worker (worker_index of worker_count over the whole space).
  VertexId range_first{};
  VertexId range_last{};
  // The process's link to the other workers of its job (not on the wire: the distributed layer
  // sets it on every worker). Null in local mode and on the master, which load the graph whole
  // and nothing respectively; a worker with one loads its share of the input (docs/design.md §4.4).
  Exchange* exchange = nullptr;
  // Told what a worker's partitioned load read and kept, when it ends (not on the wire: the
  // distributed layer sets it to log the figures, which show that no process holds the graph).
  std::function<void(const PartitionLoadStats&)> on_partition_loaded;
};

// What a process wrote to its output: the distributed master checks every part against it before
// publishing (docs/design.md §6).
struct OutputSummary {
  uint64_t vertices = 0;  // lines
  uint64_t bytes = 0;
  uint32_t crc32c = 0;  // CRC-32C (Castagnoli) of the bytes
};

// One app's way to run a job: load, build the executor through the given factory, persist.
class JobRunner {
 public:
  virtual ~JobRunner() = default;
  // Checks the job's parameters alone, before any graph is read, and changes nothing: a command
  // line rejects a bad value with it before starting work. The default checks nothing (StartJob
  // still does).
  virtual absl::Status CheckParams(const JobDetails&) const { return absl::OkStatus(); }
  // Loads this process's part of the graph and builds the executor with `factory`.
  virtual absl::StatusOr<std::unique_ptr<Executor>> StartJob(const JobDetails& details,
                                                             const ExecutorFactory& factory) = 0;
  // Persists the results to details.output and says what it wrote.
  virtual absl::StatusOr<OutputSummary> CompleteJob(const JobDetails& details) = 0;
  // Releases whatever the job holds; its output is not written.
  virtual void AbortJob(const JobDetails& details) = 0;
};

}  // namespace lockstep::bsp
