#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/dbsp/coordinator.h"
#include "lockstep/v1/jobqueue.pb.h"

namespace lockstep::dbsp {

// A worker's way into the master's barriers: sends an entry, waits for the release of that type.
class BarrierClient {
 public:
  virtual ~BarrierClient() = default;
  virtual absl::StatusOr<v1::Step> Enter(v1::Step entry) = 0;
};

// Executor factories that wrap the user's callbacks with the master's barriers, so one program
// runs unchanged in both modes (DESIGN.md §3, §4). Per superstep s:
//   PRE(s)               every process waits for all workers, then runs pre_step(s)
//   POST(s)              workers send their aggregator deltas and counts; the master merges the
//                        deltas into its values and sends them back; every process then holds the
//                        same global values and runs post_step with the global counts
//   POST_KEEP_RUNNING(s) the master decides with keep_running (or the default rule) over the
//                        global counts; every worker follows that decision
//
// `on_engine` lets the worker install its relayer and take the engine's incoming-relay side.
bsp::ExecutorFactory WorkerExecutorFactory(BarrierClient& barrier,
                                           std::function<void(bsp::StepEngine&)> on_engine,
                                           bsp::ExecutorOptions options);

struct MasterProgress {
  bsp::StepStats global;
  uint64_t relayed_batches = 0;  // in this superstep
  uint64_t relayed_bytes = 0;
  double seconds = 0;  // wall time of the superstep on the master, barriers included
};

bsp::ExecutorFactory MasterExecutorFactory(JobCoordinator& coordinator,
                                           std::function<void(const MasterProgress&)> progress,
                                           bsp::ExecutorOptions options);

}  // namespace lockstep::dbsp
