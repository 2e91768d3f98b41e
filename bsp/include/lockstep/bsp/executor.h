#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/aggregator.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/relayer.h"

namespace lockstep::bsp {

// What one superstep did. In distributed mode the wrapped callbacks see global sums.
struct StepStats {
  uint64_t superstep = 0;
  uint64_t active = 0;    // vertices that ran compute
  uint64_t messages = 0;  // messages sent (local and remote), delivered next superstep
  uint64_t unhalted = 0;  // vertices that did not vote to halt
  double seconds = 0;     // compute, delivery and relay time of this process
  // Of `seconds`: encoding the batches for other partitions, and decoding theirs (distributed
  // mode; one clock read pair each per superstep).
  double relay_encode_seconds = 0;
  double relay_decode_seconds = 0;
  // What this process relayed to other partitions: messages (a broadcast program's published
  // values) and the bytes of their batches besides the headers (RelayBatch::content_bytes).
  uint64_t relayed_messages = 0;
  uint64_t relayed_bytes = 0;
};

// Without a keep-running callback a job goes on while a vertex is awake or a message is pending.
inline bool DefaultKeepRunning(const StepStats& s) { return s.unhalted + s.messages > 0; }

// The engine as an executor (and the distributed layer) sees it: no types of the vertex program.
class StepEngine {
 public:
  virtual ~StepEngine() = default;
  virtual absl::StatusOr<StepStats> RunSuperstep(uint64_t superstep,
                                                 const std::atomic<bool>& cancel) = 0;
  virtual AggregatorRegistry& aggregators() = 0;
  // Installs the relayer for non-local messages (none in local mode).
  virtual void SetRelayer(Relayer* relayer) = 0;
  // Cuts a superstep's batch for one partition into pieces of at most about this many bytes (one
  // message always fits, however large); 0, the default: one batch per partition.
  virtual void SetMaxBatchBytes(uint64_t bytes) { (void)bytes; }
  // Accepts a batch relayed from another partition; safe from any thread. Its messages are
  // delivered at the start of the next superstep.
  virtual absl::Status AcceptRelayed(RelayBatch batch) = 0;
  // Collective, once per job before the first superstep, in distributed mode: agrees with every
  // other process on the lists that relay batches address by position instead of by UUID
  // (docs/design.md §5.5). Fails, naming both partitions, if a peer names a vertex that this
  // partition does not have. An engine that never connects relays by UUID.
  virtual absl::Status ConnectPeers(Exchange& exchange) = 0;
  virtual uint64_t num_local_vertices() const = 0;
  // Checkpoints (docs/design.md §7.6). At the boundary before superstep `next` (every message of
  // superstep next - 1 held here, the aggregators global): appends this partition's state to
  // `out`. Not collective; the engine goes on as if it had not been asked.
  // The partition's checkpoint index (its vertices' UUIDs and out-degrees, bsp/checkpoint.h),
  // whose CRC-32C its state files name. It does not change within a job.
  virtual std::string CheckpointIndex(const CheckpointHeader& header) const {
    (void)header;
    return {};
  }
  virtual absl::Status WriteCheckpoint(uint64_t next, CheckpointWriter& out) {
    (void)next;
    (void)out;
    return absl::UnimplementedError("this engine does not checkpoint");
  }
  // On an engine that has run no superstep (connected, if it will be): takes its vertices' state,
  // its remote in-neighbours' published values and the aggregators from a whole checkpoint of any
  // split, read a file at a time (a program that reads no published values reads only the files
  // whose ranges meet its own), to run superstep source.header().superstep next. A checkpoint
  // that does not hold every local vertex, holds one twice, or holds one of this partition's
  // range that the graph lacks, is refused; the engine is then unusable.
  virtual absl::Status RestoreCheckpoint(const CheckpointSource& source) {
    (void)source;
    return absl::UnimplementedError("this engine does not restore checkpoints");
  }
  // Roughly the bytes this engine needs at its peak (graph, state, a busy superstep's messages),
  // for out-of-memory errors; 0 if unknown.
  virtual uint64_t EstimatedPeakBytes() const { return 0; }
  // The trace lines of the last superstep (Engine::SetTrace, bsp/trace.h), taken once: one per
  // traced vertex of this partition, in the order they were named.
  virtual std::vector<std::string> TakeTrace() { return {}; }
};

// The user's callbacks, all optional, called in this order around every superstep s:
// pre_step(s), compute, post_step(stats), keep_running(stats).
struct Callbacks {
  std::function<absl::Status(uint64_t superstep)> pre_step;
  std::function<absl::Status(const StepStats&)> post_step;
  std::function<absl::StatusOr<bool>(const StepStats&)> keep_running;
};

struct ExecutorOptions {
  uint64_t max_supersteps = 10000;
  // Called after every superstep with that process's stats (progress lines).
  std::function<void(const StepStats&)> progress;
  // Called after every superstep with each of its trace lines (StepEngine::TakeTrace), before
  // `progress`; unset, the lines are left to the caller (a distributed worker sends them on).
  std::function<void(const std::string&)> trace;
};

class Executor {
 public:
  Executor(StepEngine& engine, Callbacks callbacks, ExecutorOptions options = {});

  // Runs until the keep-running callback (or the default rule) says stop. Reaching
  // max_supersteps first is an error that says so.
  absl::Status RunToCompletion();
  // Runs at most n supersteps more; stopping at n is not an error.
  absl::Status RunSteps(uint64_t n);
  // Thread-safe: the current superstep finishes its block, then the run returns Cancelled.
  void Cancel() { cancel_.store(true); }

  // Goes on at `superstep` (an engine restored from a checkpoint taken before it).
  void ResumeAt(uint64_t superstep) { next_superstep_ = superstep; }
  // The number of supersteps run so far.
  uint64_t supersteps() const { return next_superstep_; }
  bool stopped() const { return stopped_; }
  StepEngine& engine() { return engine_; }

 private:
  // Runs one superstep with its callbacks; returns whether to keep running. Running out of memory
  // is an error of the job (OutOfMemoryError), not of the process.
  absl::StatusOr<bool> Step();
  absl::StatusOr<bool> StepOrThrow();

  StepEngine& engine_;
  Callbacks callbacks_;
  ExecutorOptions options_;
  std::atomic<bool> cancel_{false};
  uint64_t next_superstep_ = 0;
  bool stopped_ = false;
};

// Builds an executor over an engine from the user's callbacks. The distributed layer substitutes a
// factory that wraps every callback with a barrier; that is how one program runs both ways.
using ExecutorFactory =
    std::function<absl::StatusOr<std::unique_ptr<Executor>>(StepEngine&, Callbacks)>;

ExecutorFactory LocalExecutorFactory(ExecutorOptions options = {});

// The error of a job that ran out of memory (std::bad_alloc) while building `what`:
// "out of memory while building <what> (needed about N MiB)", N from `needed_bytes` (an estimate;
// left out if 0). The job fails with it; the process lives on to say so (or serve the next job).
absl::Status OutOfMemoryError(std::string_view what, uint64_t needed_bytes);
// The error of a job whose step threw some other exception (e.g. a thread that could not start):
// "failed while building <what>: <the exception's text>".
absl::Status FailedWhileBuilding(std::string_view what, const std::exception& e);

}  // namespace lockstep::bsp
