#include "lockstep/dbsp/master.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "job/job_attempts.h"
#include "job/job_ids.h"
#include "job/master_attempt.h"
#include "job/output_dir.h"
#include "lockstep/bsp/text.h"
#include "lockstep/dbsp/health.h"
#include "transport/grpc_options.h"
#include "transport/master_server.h"

namespace lockstep::dbsp {
namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// For `lockstep status`: the job's bound on its supersteps, an iteration count's (which takes one
// superstep more) if its app has one.
uint64_t SuperstepBound(const JobSpec& spec) {
  const runner::JobDetails& details = spec.details;
  uint64_t bound = details.work.max_supersteps;
  const std::string& param = spec.app->iterations_param;
  if (auto it = details.work.params.find(param);
      !param.empty() && it != details.work.params.end()) {
    uint64_t iterations = 0;
    if (absl::SimpleAtoi(it->second, &iterations)) bound = std::min(bound, iterations + 1);
  }
  return bound;
}

// Bad input fails at once, not after the workers have been waited for: the output location, and
// the app's parameters (the master's own empty-graph start checks them).
absl::Status CheckJob(const JobSpec& spec, const std::string& job_id) {
  if (!spec.sink) {
    if (auto st = job::CheckOutput(spec.details.work.output); !st.ok()) return st;
  }
  runner::JobDetails probe = spec.details;
  probe.work.job_id = job_id;
  probe.place.coordinator = true;
  return spec.app->make_runner(nullptr)->StartJob(probe, bsp::LocalExecutorFactory()).status();
}

}  // namespace

Master::Master(std::unique_ptr<transport::MasterServer> server) : server_(std::move(server)) {}
Master::~Master() { Shutdown(); }

absl::StatusOr<std::unique_ptr<Master>> Master::Start(const std::string& address,
                                                      std::shared_ptr<const Security> security) {
  auto server = transport::MasterServer::Start(address, std::move(security));
  if (!server.ok()) return server.status();
  (*server)->health().Set(kMasterHealthService, true);
  return std::unique_ptr<Master>(new Master(std::move(*server)));
}

absl::StatusOr<JobStatus> QueryStatus(const std::string& address, std::chrono::milliseconds timeout,
                                      const Security& security) {
  auto stub = v1::JobQueue::NewStub(grpc::CreateCustomChannel(
      address, security.ChannelCredentials(), transport::ClientChannelArguments(security)));
  grpc::ClientContext ctx;
  security.Sign(ctx);
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::StatusReply reply;
  auto call = stub->Status(&ctx, &reply);
  call->WritesDone();
  const grpc::Status st = call->Finish();
  if (!st.ok()) {
    return absl::UnavailableError(absl::StrCat("status of the master at ",
                                               bsp::SanitizeForLog(address, 200), ": ",
                                               bsp::SanitizeForLog(st.error_message(), 400)));
  }
  JobStatus s;
  s.running = reply.running();
  s.job_id = reply.job_id();
  s.app = reply.app();
  s.superstep = reply.superstep();
  s.active = reply.active();
  s.elapsed_seconds = reply.elapsed_seconds();
  s.remaining_seconds = reply.remaining_seconds();
  s.max_supersteps = reply.max_supersteps();
  s.workers_connected = reply.workers_connected();
  for (const v1::WorkerTime& w : reply.workers()) {
    s.workers.emplace_back(w.name(), w.last_step_seconds());
  }
  return s;
}

int Master::port() const { return server_->port(); }
uint32_t Master::connected_workers() const { return server_->connected(); }

void Master::Shutdown() {
  if (!server_) return;
  server_->health().Set(kMasterHealthService, false);
  server_->Shutdown();
}

absl::StatusOr<JobResult> Master::RunJob(const JobSpec& spec, const std::atomic<bool>& cancel) {
  const auto started = std::chrono::steady_clock::now();
  const std::string job_id = spec.resume_job.empty() ? job::NewJobId() : spec.resume_job;
  if (auto st = CheckJob(spec, job_id); !st.ok()) return st;
  server_->status().Begin(job_id, spec.app->name, SuperstepBound(spec));
  const absl::Cleanup ended = [this] { server_->status().End(); };
  runner::JobDetails details = spec.details;
  details.work.job_id = job_id;
  details.work.created_at_unix_ms = NowUnixMs();
  auto job = job::JobAttempts::Open(spec, std::move(details), started, cancel,
                                    absl::StrCat("job ", job_id, ": "));
  if (!job.ok()) return job.status();
  // One attempt after the other, until one publishes or the job ends (docs/design.md §7.5).
  for (;;) {
    auto plan = (*job)->Next();
    if (!plan.ok()) return plan.status();
    const job::AttemptOutcome outcome =
        job::MasterAttempt(*server_, spec, **job, *std::move(plan), cancel).Run();
    if (outcome.status.ok() && outcome.published) return (*job)->Published(outcome);
    if (auto st = (*job)->Failed(outcome); !st.ok()) return st;
  }
}

}  // namespace lockstep::dbsp
