#pragma once

// A job as one process runs it, in plain types (the distributed layer converts the wire to and
// from them), in three parts that change for different reasons: what to run (the same on every
// process of the job), where this process sits (its worker's place and links), and where it
// resumes (a new attempt of the same job changes only this).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/load_stats.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::runner {

// What to run: the same for every process of the job and every attempt.
struct JobWork {
  std::string job_id;
  int64_t created_at_unix_ms = 0;
  std::string app;
  // The app's parameters by name, already merged (defaults < Graphalytics properties < flags).
  std::map<std::string, std::string> params;
  bsp::GraphSource graph;
  // The file this process writes its results to.
  std::string output;
  // Distributed only: set when the job's results go somewhere that is not a file (a database
  // table, docs/design.md §10): where the worker ships the file it wrote (not on the wire's
  // `output`, which then names the sink).
  std::map<std::string, std::string> output_options;
  // The vertices to trace, by external ID (docs/design.md §12): the process holding each one
  // reports what it did in every superstep (StepEngine::TakeTrace).
  std::vector<std::string> trace_vertices;
  // A job that needs more supersteps than this fails and says so.
  uint64_t max_supersteps = 10000;
};

// Where this process sits in the job.
struct JobPlace {
  uint32_t worker_index = 0;
  uint32_t worker_count = 1;
  // The inclusive UUID range of this worker (worker_index of worker_count over the whole space).
  bsp::VertexId range_first{};
  bsp::VertexId range_last{};
  // The process's link to the other workers of its job (not on the wire: the distributed layer
  // sets it on every worker). Null in local mode and on the master, which load the graph whole
  // and nothing respectively; a worker with one loads its share of the input (docs/design.md §4.4).
  bsp::Exchange* exchange = nullptr;
  // The distributed master runs the same program on an empty graph, so that the callbacks and the
  // global aggregators live there too; it loads nothing.
  bool coordinator = false;
};

// Where this process's attempt of the job starts, and where it keeps its checkpoints.
struct JobResume {
  // Distributed workers only: the job's checkpoint directory (docs/design.md §7.6), shared by
  // every process; empty: no checkpoints.
  std::string checkpoint_dir;
  // Distributed only: the complete checkpoint the job resumes from (a checkpoint's directory,
  // docs/design.md §7.6; empty: superstep 0), at superstep `superstep`, in attempt `attempt`
  // (0: the first).
  std::string restore_from;
  uint64_t superstep = 0;
  uint32_t attempt = 0;
};

// Everything a process needs to run its share of a job.
struct JobDetails {
  JobWork work;
  JobPlace place;
  JobResume resume;
  // Distributed workers only: if set, they first write the graph's partitioned binary form to
  // this directory (load::WritePartitionedFormDistributed) and the job runs on it.
  std::string save_form;
  // Told what a worker's partitioned load read and kept, when it ends (not on the wire: the
  // distributed layer sets it to log the figures, which show that no process holds the graph).
  std::function<void(const bsp::PartitionLoadStats&)> on_partition_loaded;
};

}  // namespace lockstep::runner
