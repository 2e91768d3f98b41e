#include "lockstep/dbsp/master.h"

#include <algorithm>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <tuple>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "job/checkpoint_choice.h"
#include "job/job_record.h"
#include "job/master_job.h"
#include "job/output_dir.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/text.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/dbsp/health.h"
#include "spdlog/spdlog.h"
#include "transport/grpc_options.h"
#include "transport/master_server.h"
#include "transport/peer.h"
#include "transport/wire.h"

namespace lockstep::dbsp {
namespace {

using Clock = std::chrono::steady_clock;
using protocol::Barrier;

// How long a finished stream waits for its worker to hang up before cutting it off.
constexpr auto kHangUpGrace = std::chrono::seconds(5);

// A job's key: random bytes that admit a peer's batch to this job and no other.
// A random (v4) UUID; the generator is shared and not thread-safe.
boost::uuids::uuid RandomUuid() {
  static std::mutex mu;
  static boost::uuids::random_generator gen;
  std::lock_guard<std::mutex> lock(mu);
  return gen();
}

std::string NewJobKey() {
  const boost::uuids::uuid u = RandomUuid();
  static_assert(sizeof(u.data) == transport::kJobKeyBytes);
  return std::string(reinterpret_cast<const char*>(u.data), sizeof(u.data));
}

std::string NewJobId() { return boost::uuids::to_string(RandomUuid()); }

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Ends every reserved worker's stream once the worker has hung up (it does once it has read the
// end of its job); one that has not within the grace is cut off.
void CloseStreams(std::vector<std::shared_ptr<transport::WorkerSession>>& workers,
                  const grpc::Status& status) {
  for (auto& w : workers) w->Close(status);
  const auto deadline = Clock::now() + kHangUpGrace;
  for (auto& w : workers) {
    if (!w->WaitHungUp(deadline)) w->ForceClose();
  }
  for (auto& w : workers) w->Detach();
}

// One attempt of a job: what it is given, and what it says of itself when it ends.
struct Attempt {
  const JobSpec& spec;
  const std::atomic<bool>& cancel;
  const bsp::JobDetails& details;  // the attempt's own: attempt, restore_from, resume_superstep
  const std::optional<job::JobOutput>& output;
  const std::optional<std::map<std::string, std::string>>& staged;  // or a sink's staging (§10)
  const job::CheckpointPlan& checkpoints;
  const std::string& log_prefix;
  bool last_attempt = false;
  Clock::time_point job_started;
  Clock::time_point recovery_from;  // when the attempt before failed
  // Each restart so far (_SUCCESS); the last one led to this attempt.
  nlohmann::json& restarts;
  job::JobRecordFile* record = nullptr;      // the job's record, if it checkpoints (§7.7)
  const job::Lease* master_lease = nullptr;  // the lease on it: lost, the attempt publishes nothing
  // Out:
  uint32_t workers = 0;
  bool published = false;
  bool retrying = false;            // it failed, and the next attempt may go on
  bool checkpoint_refused = false;  // it failed restoring its checkpoint: the next passes it over
  Clock::time_point failed_at;
  std::optional<Clock::time_point> first_step_at;
};

absl::Status RunAttempt(transport::MasterServer& server, Attempt& run, const PoolOptions& pool,
                        JobResult& result);

// What is known of the restart that led to `run` once it has ended or published: its workers and
// the time from the failure to its first superstep.
void NoteRestart(const Attempt& run) {
  if (run.restarts.empty()) return;  // the first attempt
  run.restarts.back()["workers"] = run.workers;
  if (run.first_step_at) {
    run.restarts.back()["recovery_seconds"] =
        std::chrono::duration<double>(*run.first_step_at - run.recovery_from).count();
  }
}

// The reason of a restart after the master's (in _SUCCESS and the record).
constexpr char kMasterRestarted[] = "the master restarted";

// A job as its record keeps it (§7.7): what decides its answer and where it goes, compared with a
// command line's, and how it is run, which a master resuming it without one goes on with.
nlohmann::json JobOfSpec(const JobSpec& spec) {
  const bsp::JobDetails& d = spec.details;
  std::error_code ec;
  // A graph or an output that is not a file (a database, §10) is named as given.
  const bool graph_file = d.graph.options.empty();
  std::map<std::string, std::string> options = d.graph.options;
  for (const std::string& key : spec.ephemeral_graph_options) options.erase(key);
  nlohmann::json job = {
      {"app", d.app},
      {"params", d.params},
      {"graph",
       {{"path", graph_file ? std::filesystem::absolute(d.graph.path, ec).string() : d.graph.path},
        {"format", d.graph.format},
        {"undirected", d.graph.undirected}}},
      {"output", spec.sink ? d.output : std::filesystem::absolute(d.output, ec).string()},
      {"save_parts", d.save_parts},
      {"max_supersteps", d.max_supersteps}};
  if (!options.empty()) job["graph"]["options"] = options;
  if (!d.output_options.empty()) job["output_options"] = d.output_options;
  return job;
}
nlohmann::json RunOfSpec(const JobSpec& spec) {
  return {{"min_workers", spec.pool.min_workers},
          {"max_workers", spec.pool.max_workers},
          {"acquire_timeout_ms", spec.pool.acquire_timeout.count()},
          {"last_call_ms", spec.pool.last_call.count()},
          {"peer_timeout_ms", spec.peer_timeout.count()},
          {"relay_direct", spec.relay_direct},
          {"max_batch_bytes", spec.max_batch_bytes},
          {"checkpoint_every", spec.checkpoint_every},
          {"checkpoint_interval_ms", spec.checkpoint_interval.count()},
          {"checkpoint_keep", spec.checkpoint_keep},
          {"max_restarts", spec.max_restarts},
          {"recovery_timeout_ms", spec.recovery_timeout.count()},
          {"straggler_timeout_ms", spec.straggler_timeout.count()},
          {"replace_stragglers", spec.replace_stragglers},
          {"every_ms", spec.every.count()},
          {"trace_vertices", spec.details.trace_vertices}};
}
// The spec a record holds, for a master given only the checkpoint directory.
absl::StatusOr<JobSpec> SpecOfRecord(const job::JobRecord& r, const std::string& checkpoint_dir,
                                     const catalogue::AppRegistry& apps) {
  JobSpec spec;
  try {
    const nlohmann::json& j = r.job;
    const nlohmann::json& run = r.run;
    bsp::JobDetails& d = spec.details;
    d.app = j.at("app").get<std::string>();
    d.params = j.at("params").get<std::map<std::string, std::string>>();
    d.graph.path = j.at("graph").at("path").get<std::string>();
    d.graph.format = j.at("graph").at("format").get<std::string>();
    d.graph.undirected = j.at("graph").at("undirected").get<bool>();
    if (j.at("graph").contains("options")) {
      d.graph.options = j.at("graph").at("options").get<std::map<std::string, std::string>>();
    }
    d.output = j.at("output").get<std::string>();
    if (j.contains("output_options")) {
      d.output_options = j.at("output_options").get<std::map<std::string, std::string>>();
    }
    d.save_parts = j.at("save_parts").get<std::string>();
    d.max_supersteps = j.at("max_supersteps").get<uint64_t>();
    using ms = std::chrono::milliseconds;
    spec.pool.min_workers = run.at("min_workers").get<uint32_t>();
    spec.pool.max_workers = run.at("max_workers").get<uint32_t>();
    spec.pool.acquire_timeout = ms(run.at("acquire_timeout_ms").get<int64_t>());
    spec.pool.last_call = ms(run.at("last_call_ms").get<int64_t>());
    spec.peer_timeout = ms(run.at("peer_timeout_ms").get<int64_t>());
    spec.relay_direct = run.at("relay_direct").get<bool>();
    spec.max_batch_bytes = run.at("max_batch_bytes").get<uint64_t>();
    spec.checkpoint_every = run.at("checkpoint_every").get<uint64_t>();
    spec.checkpoint_interval = ms(run.at("checkpoint_interval_ms").get<int64_t>());
    spec.checkpoint_keep = run.at("checkpoint_keep").get<uint32_t>();
    spec.max_restarts = run.at("max_restarts").get<uint32_t>();
    spec.recovery_timeout = ms(run.at("recovery_timeout_ms").get<int64_t>());
    spec.straggler_timeout = ms(run.at("straggler_timeout_ms").get<int64_t>());
    spec.replace_stragglers = run.at("replace_stragglers").get<bool>();
    spec.every = ms(run.at("every_ms").get<int64_t>());
    spec.details.trace_vertices =
        run.value("trace_vertices", std::vector<std::string>());  // not in older records
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(
        absl::StrCat("job record ", job::JobRecordPath(checkpoint_dir + "/" + r.job_id),
                     " lacks a field or has one of the wrong type: ", e.what()));
  }
  spec.app = apps.Find(spec.details.app);
  if (spec.app == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("job ", r.job_id, " in ", checkpoint_dir,
                                                      " is of app '", spec.details.app,
                                                      "', which this build lacks"));
  }
  if (spec.checkpoint_every == 0 && spec.checkpoint_interval.count() == 0) {
    return absl::DataLossError(absl::StrCat("job record of job ", r.job_id, " in ", checkpoint_dir,
                                            " has no checkpoint interval"));
  }
  spec.checkpoint_dir = checkpoint_dir;
  spec.resume_job = r.job_id;
  return spec;
}

// How two jobs' records differ: "params.damping: recorded 0.85, given 0.5; ...".
std::string JobDifferences(const nlohmann::json& recorded, const nlohmann::json& given,
                           const std::string& prefix = "") {
  std::vector<std::string> out;
  std::vector<std::string> keys;
  for (const auto& [k, v] : recorded.items()) keys.push_back(k);
  for (const auto& [k, v] : given.items()) {
    if (!recorded.contains(k)) keys.push_back(k);
  }
  for (const std::string& k : keys) {
    const nlohmann::json a = recorded.value(k, nlohmann::json()),
                         b = given.value(k, nlohmann::json());
    if (a == b) continue;
    if (a.is_object() && b.is_object()) {
      out.push_back(JobDifferences(a, b, prefix + k + "."));
    } else {
      out.push_back(absl::StrCat(prefix, k, ": recorded ", a.dump(), ", given ", b.dump()));
    }
  }
  return absl::StrJoin(out, "; ");
}

// "pagerank on GRAPH to OUT", for errors naming a job.
std::string DescribeJob(const nlohmann::json& job) {
  return absl::StrCat(
      job.value("app", std::string("?")), " on ",
      job.contains("graph") ? job["graph"].value("path", std::string("?")) : std::string("?"),
      " to ", job.value("output", std::string("?")));
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
  const auto started = Clock::now();
  // Bad input fails at once, not after the workers have been waited for: the output location,
  // and the app's parameters (the master's own empty-graph start checks them).
  if (!spec.sink) {
    if (auto st = job::CheckOutput(spec.details.output); !st.ok()) return st;
  }
  const bool resuming = !spec.resume_job.empty();
  const std::string job_id = resuming ? spec.resume_job : NewJobId();
  {
    bsp::JobDetails probe = spec.details;
    probe.job_id = job_id;
    probe.coordinator = true;
    auto executor = spec.app->make_runner(nullptr)->StartJob(probe, bsp::LocalExecutorFactory());
    if (!executor.ok()) return executor.status();
  }
  const std::string log_prefix = absl::StrCat("job ", job_id, ": ");
  // For `lockstep status`: the job's bound on its supersteps, an iteration count's (which takes
  // one superstep more) if the job has one.
  uint64_t bound = spec.details.max_supersteps;
  if (auto it = spec.details.params.find("max-iterations"); it != spec.details.params.end()) {
    uint64_t iterations = 0;
    if (absl::SimpleAtoi(it->second, &iterations)) bound = std::min(bound, iterations + 1);
  }
  server_->status().Begin(job_id, spec.app->name, bound);
  const absl::Cleanup ended = [this] { server_->status().End(); };
  bsp::JobDetails details = spec.details;
  details.job_id = job_id;
  details.created_at_unix_ms = NowUnixMs();

  // The job's checkpoints, its record and the lease of the master that drives it (§7.7), removed
  // when the job ends, whichever way.
  const std::string checkpoint_root =
      spec.checkpoint_every > 0 || spec.checkpoint_interval.count() > 0
          ? absl::StrCat(spec.checkpoint_dir, "/", job_id)
          : "";
  // Declared first, destroyed last: the lease is held until the directory is gone.
  std::unique_ptr<job::Lease> master_lease;
  struct RemoveCheckpoints {
    std::string dir;
    const std::unique_ptr<job::Lease>& lease;
    ~RemoveCheckpoints() {
      if (dir.empty()) return;
      if (lease && lease->lost()) {
        // Another master may drive the job now: its directory is not this one's to remove.
        spdlog::warn("the lease of checkpoint directory {} was lost: left as it is", dir);
        return;
      }
      // The record first, while the lease is held: no later master takes an ended job for an
      // unfinished one, however long the rest takes to go.
      std::error_code ec;
      std::filesystem::remove(job::JobRecordPath(dir), ec);
      std::filesystem::remove_all(dir, ec);
      if (ec) spdlog::warn("cannot remove checkpoint directory {}: {}", dir, ec.message());
    }
  } remove_checkpoints{"", master_lease};
  std::optional<job::JobRecordFile> record;
  uint32_t first_attempt = 0;
  nlohmann::json attempts = nlohmann::json::array();  // what each attempt after a failure resumed
  uint32_t workers_before = 0;
  if (!checkpoint_root.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(checkpoint_root, ec);
    if (ec) {
      return absl::FailedPreconditionError(
          absl::StrCat("--checkpoint-dir: cannot make ", checkpoint_root, ": ", ec.message()));
    }
    // A new job's directory goes with it from here; a resumed job's only once it runs again (a
    // set-up error must not throw away the state another master could still resume).
    if (!resuming) remove_checkpoints.dir = checkpoint_root;
    auto lease = job::Lease::TryAcquire(job::JobLeasePath(checkpoint_root));
    if (!lease.ok()) {
      if (!resuming) remove_checkpoints.dir.clear();  // another master's directory
      return absl::AlreadyExistsError(absl::StrCat("job ", job_id, " in --checkpoint-dir ",
                                                   spec.checkpoint_dir, ": ",
                                                   lease.status().message()));
    }
    master_lease = *std::move(lease);
    job::JobRecord r;
    if (resuming) {
      auto read = job::ReadJobRecord(checkpoint_root);
      if (!read.ok()) return read.status();
      r = *std::move(read);
      details.created_at_unix_ms = r.created_at_unix_ms;
      first_attempt = r.attempt + 1;
      workers_before = r.workers;
      attempts = r.restarts;
    } else {
      r.job_id = job_id;
      r.created_at_unix_ms = details.created_at_unix_ms;
    }
    // What a later master compares a command line with, and goes on with (§7.7).
    r.job = JobOfSpec(spec);
    r.run = RunOfSpec(spec);
    record.emplace(checkpoint_root, std::move(r));
    if (auto st = record->Update([](job::JobRecord&) {}); !st.ok()) return st;
  }

  // The job's output and its lease outlive its attempts; each attempt after the first takes a
  // fresh staging directory.
  auto staging_name = [&](uint32_t attempt) {
    return attempt == 0 ? job_id : absl::StrCat(job_id, "-", attempt + 1);
  };
  std::unique_ptr<job::Lease> lease;
  std::optional<job::JobOutput> output;
  // A sink that is not a directory: the attempt's staging place (§10).
  std::optional<std::map<std::string, std::string>> staged;
  auto prepare = [&](uint32_t attempt) -> absl::Status {
    if (spec.sink) {
      auto made = spec.sink->prepare(staging_name(attempt));
      if (!made.ok()) return made.status();
      staged = *std::move(made);
      return absl::OkStatus();
    }
    auto prepared = job::PrepareOutput(details.output, staging_name(attempt), lease);
    if (!prepared.ok()) return prepared.status();
    output = *prepared;
    return absl::OkStatus();
  };
  auto discard = [&] {
    if (output) job::DiscardOutput(*output);
    if (staged) spec.sink->discard(*staged);
    if (lease) lease->Release();
    output.reset();
    staged.reset();
  };
  if (auto st = prepare(first_attempt); !st.ok()) return st;
  if (record) remove_checkpoints.dir = checkpoint_root;
  job::CheckpointPlan checkpoints;
  auto end_job = [&](absl::Status reason) -> absl::Status {
    discard();
    if (record && cancel.load()) {
      // A master stopped (SIGTERM: a pod evicted, a node drained) leaves its job, record and
      // checkpoints to the next master on the same checkpoint directory (§7.7).
      remove_checkpoints.dir.clear();
      spdlog::warn("{}left unfinished in {}: a master started with --checkpoint-dir {} resumes it",
                   log_prefix, checkpoint_root, spec.checkpoint_dir);
    }
    // Logged once the job's staging directory is gone.
    spdlog::error("{}aborted: {}", log_prefix, std::string(reason.message()));
    return reason;
  };

  JobResult result;
  result.job_id = job_id;
  std::vector<std::string> reasons;
  Clock::time_point failed_at = started;
  job::ResumePoint resume;  // the checkpoint the next attempt starts from
  job::CheckpointChoice choice(checkpoint_root, details.app, job_id, log_prefix);
  // A graph read from a snapshot that lived with another master: its checkpoints are of a graph
  // this master cannot read again, so the job starts over on a snapshot of its own (§10).
  bool new_snapshot = false;
  for (const std::string& key : spec.ephemeral_graph_options) {
    new_snapshot = new_snapshot || details.graph.options.contains(key);
  }
  if (resuming && new_snapshot) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(checkpoint_root, ec)) {
      if (entry.path().filename().string().starts_with("attempt-")) {
        std::filesystem::remove_all(entry.path(), ec);
      }
    }
    spdlog::warn(
        "resuming job {} from the start on a new snapshot of its graph: the snapshot it "
        "read ended with the master that exported it",
        job_id);
  }
  if (resuming) {
    // Written by another master, perhaps long ago: each candidate is read whole before it is
    // taken (§7.7), the newest intact one wins.
    resume = choice.Choose(/*verify=*/true);
    attempts.push_back({{"attempt", first_attempt + 1},
                        {"after", kMasterRestarted},
                        {"workers_before", workers_before},
                        {"restored_superstep", resume.superstep}});
    spdlog::info("resuming job {} from {}", job_id,
                 resume.superstep == 0
                     ? std::string("the start")
                     : absl::StrCat("checkpoint at superstep ", resume.superstep));
  }
  // --max-restarts counts the restarts after a lost worker, not a master's restarts.
  uint32_t restarts_used = 0;
  for (const nlohmann::json& r : attempts) {
    if (r.value("after", std::string()) != kMasterRestarted) ++restarts_used;
  }
  for (uint32_t attempt = first_attempt;; ++attempt) {
    if (master_lease && master_lease->lost()) {
      // Another master may drive the job now: no attempt more, no record written, nothing removed.
      return end_job(
          absl::AlreadyExistsError("the lease on the job's checkpoint directory was lost: another "
                                   "master may drive the job"));
    }
    details.attempt = attempt;
    details.restore_from.clear();
    details.resume_superstep = 0;
    if (!checkpoint_root.empty()) {
      // Each attempt writes its checkpoints apart: a worker of a failed attempt that still writes
      // cannot put a file where a later attempt's checkpoint is.
      checkpoints = {
          absl::StrCat(checkpoint_root, "/attempt-", attempt + 1),
          spec.checkpoint_every,
          spec.checkpoint_keep,
          details.app,
          job_id,
          spec.checkpoint_interval,
          [&record](uint64_t superstep) {
            auto st = record->Update([superstep](job::JobRecord& r) { r.checkpoint = superstep; });
            if (!st.ok()) spdlog::warn("{}", std::string(st.message()));
          }};
      details.checkpoint_dir = checkpoints.dir;
      auto st = record->Update([&](job::JobRecord& r) {
        r.attempt = attempt;
        r.checkpoint = resume.superstep;
        r.restarts = attempts;
      });
      if (!st.ok()) return end_job(st);
    }
    PoolOptions pool = spec.pool;
    if (attempt > 0) {
      // Spares and the survivors first, up to the cap (or the last attempt's size), then up to
      // --recovery-timeout for more; at least one.
      pool.min_workers = 1;
      pool.max_workers = spec.pool.max_workers > 0 ? spec.pool.max_workers : workers_before;
      pool.last_call = spec.recovery_timeout;
      details.restore_from = resume.dir;
      details.resume_superstep = resume.superstep;
    }
    const bool last_attempt = restarts_used >= spec.max_restarts;
    Attempt run{spec,       cancel,       details, output,    staged,  checkpoints,
                log_prefix, last_attempt, started, failed_at, attempts};
    run.record = record ? &*record : nullptr;
    run.master_lease = master_lease.get();
    const absl::Status st = RunAttempt(*server_, run, pool, result);
    if (st.ok() && run.published) {
      // Published: the record goes at once, so that no later master resumes the job.
      if (record) {
        std::error_code ec;
        std::filesystem::remove(job::JobRecordPath(checkpoint_root), ec);
      }
      output.reset();
      staged.reset();  // published: nothing staged is left
      if (lease) lease->Release();
      result.attempts = attempt + 1;
      spdlog::info("{}completed: {} vertices, {} supersteps, {:.3f} s{}; published {}", log_prefix,
                   result.vertices, result.supersteps, result.seconds,
                   attempt == 0 ? "" : absl::StrCat(" (", attempt + 1, " attempts)"),
                   details.output);
      return result;
    }
    NoteRestart(run);
    reasons.push_back(absl::StrCat("attempt ", attempt + 1, ": ", st.message()));
    // A checkpoint the workers could not restore is passed over, not counted as a restart: each
    // one is refused once, so this ends (at the start, from which nothing is restored).
    const bool refused = run.checkpoint_refused && !details.restore_from.empty();
    if (refused) choice.Refuse(details.restore_from, st);
    if (!(refused || (run.retrying && !last_attempt)) || cancel.load()) {
      return end_job(reasons.size() == 1 ? st
                                         : absl::Status(st.code(), absl::StrJoin(reasons, "; ")));
    }
    failed_at = run.failed_at;
    workers_before = run.workers;
    if (!refused) ++restarts_used;
    // A fresh staging directory: a worker of the failed attempt still writing its part cannot
    // put it among the next attempt's.
    discard();
    if (auto prepared = prepare(attempt + 1); !prepared.ok()) return end_job(prepared);
    // The next attempt resumes from here (the failed attempt's manifest writer has ended).
    if (!checkpoint_root.empty()) resume = choice.Choose(/*verify=*/false);
    const uint64_t from = resume.superstep;
    attempts.push_back({{"attempt", attempt + 2},
                        {"after", std::string(st.message())},
                        {"workers_before", run.workers},
                        {"restored_superstep", from}});
    spdlog::warn("{}attempt {} failed: {}; recovering {} (attempt {}; {})", log_prefix, attempt + 1,
                 std::string(st.message()),
                 from == 0 ? std::string("from the start")
                           : absl::StrCat("from the checkpoint at superstep ", from),
                 attempt + 2,
                 refused
                     ? std::string("its checkpoint passed over, not a restart")
                     : absl::StrCat("restart ", restarts_used, " of at most ", spec.max_restarts));
  }
}

absl::StatusOr<std::optional<JobSpec>> FindUnfinishedJob(const std::string& checkpoint_dir,
                                                         const catalogue::AppRegistry& apps,
                                                         const JobSpec* given) {
  std::vector<job::JobRecord> live, dead;
  for (const std::string& dir : job::UnfinishedJobDirs(checkpoint_dir)) {
    auto r = job::ReadJobRecord(dir);
    if (r.status().code() == absl::StatusCode::kNotFound) continue;  // a job that just ended
    if (!r.ok()) return r.status();
    (job::Lease::IsDead(job::JobLeasePath(dir)) ? dead : live).push_back(*std::move(r));
  }
  std::sort(dead.begin(), dead.end(), [](const job::JobRecord& a, const job::JobRecord& b) {
    return a.created_at_unix_ms < b.created_at_unix_ms;
  });
  auto driven = [&](const job::JobRecord& r) {
    return absl::AlreadyExistsError(
        absl::StrCat("job ", r.job_id, " (", DescribeJob(r.job), ") in --checkpoint-dir ",
                     checkpoint_dir, " is driven by a live master (its lease ",
                     job::JobLeasePath(checkpoint_dir + "/" + r.job_id),
                     " is renewed); a second master does not drive it"));
  };
  if (given == nullptr) {
    if (!dead.empty()) return SpecOfRecord(dead.front(), checkpoint_dir, apps);
    if (!live.empty()) return driven(live.front());
    return absl::NotFoundError(absl::StrCat(
        "--checkpoint-dir ", checkpoint_dir,
        " holds no unfinished job to resume; give --app and the job's flags to start one"));
  }
  const nlohmann::json mine = JobOfSpec(*given);
  for (const job::JobRecord& r : live) {
    if (r.job == mine) return driven(r);
  }
  for (const job::JobRecord& r : dead) {
    if (r.job == mine) {
      JobSpec spec = *given;
      spec.resume_job = r.job_id;
      return spec;
    }
  }
  for (const job::JobRecord& r : dead) {
    if (r.job != mine) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--checkpoint-dir ", checkpoint_dir, " holds unfinished job ", r.job_id, " (",
          DescribeJob(r.job), "), which is not the job on this command line (",
          JobDifferences(r.job, mine), "): resume it with `lockstep master --checkpoint-dir ",
          checkpoint_dir, "` alone, or remove ", checkpoint_dir, "/", r.job_id, " to drop it"));
    }
  }
  return std::nullopt;
}

namespace {

absl::Status RunAttempt(transport::MasterServer& server, Attempt& run, const PoolOptions& pool,
                        JobResult& result) {
  const JobSpec& spec = run.spec;
  const std::atomic<bool>& cancel = run.cancel;
  const std::string& log_prefix = run.log_prefix;
  const auto started = Clock::now();
  auto reserved = server.pool().Reserve(
      {pool.min_workers, pool.max_workers, pool.acquire_timeout, pool.last_call}, cancel);
  if (!reserved.ok()) return reserved.status();
  std::vector<std::shared_ptr<transport::WorkerSession>>& workers = *reserved;
  const uint32_t n = static_cast<uint32_t>(workers.size());
  run.workers = n;
  result.workers = n;
  if (run.record != nullptr) {
    // Not fatal: a later master would only reserve another count of workers.
    if (auto st = run.record->Update([n](job::JobRecord& r) { r.workers = n; }); !st.ok()) {
      spdlog::warn("{}{}", log_prefix, std::string(st.message()));
    }
  }
  bsp::JobDetails details = run.details;
  details.worker_count = n;

  std::vector<transport::WorkerStream*> streams;
  std::vector<std::string> names;
  for (uint32_t i = 0; i < n; ++i) {
    streams.push_back(workers[i].get());
    names.push_back(
        absl::StrCat("worker ", i, " (", bsp::SanitizeForLog(workers[i]->peer(), 128), ")"));
  }
  job::MasterJob job(streams, names, spec.peer_timeout);
  // A worker lost (vanished, unreachable, silent) ends only this attempt when another may follow.
  const bool may_retry = !run.last_attempt;
  job.SetRetryAllowed(may_retry);
  job.SetStragglers(spec.straggler_timeout, spec.replace_stragglers);
  if (details.attempt == 0) {
    spdlog::info("{}{} on {} worker{}", log_prefix, details.app, n, n == 1 ? "" : "s");
  } else {
    spdlog::info("{}attempt {} on {} worker{}, from {}", log_prefix, details.attempt + 1, n,
                 n == 1 ? "" : "s",
                 details.restore_from.empty()
                     ? std::string("the start")
                     : absl::StrCat("the checkpoint at superstep ", details.resume_superstep));
  }

  // Whatever ends the attempt, every reserved worker is released and told why.
  auto fail = [&](absl::Status reason) -> absl::Status {
    job.Abort(reason);
    const absl::Status final = job.status();
    run.retrying = may_retry && job.lost_worker();
    run.checkpoint_refused = job.checkpoint_refused();
    run.failed_at = Clock::now();
    // Workers that did not enter a barrier in time are not writing anything: no grace for them.
    for (uint32_t w : job.late()) workers[w]->ForceClose();
    // A worker may still be writing its part (complete-job) or checkpoint: each hangs up once it
    // has read the abort; one that does not is cut off after the grace.
    CloseStreams(workers, grpc::Status(grpc::StatusCode::ABORTED, std::string(final.message())));
    return final;
  };
  for (uint32_t i = 0; i < n; ++i) workers[i]->Attach(&job, i);
  // Whatever leaves this function (an exception included), no stream may still point at `job`.
  struct Unbind {
    std::vector<std::shared_ptr<transport::WorkerSession>>& workers;
    ~Unbind() {
      for (auto& w : workers) {
        if (!w->hung_up()) w->ForceClose();
        w->Detach();
      }
    }
  } unbind{workers};

  // A watcher turns cancellation (SIGTERM) into an abort that wakes every wait.
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      if (cancel.load()) {
        job.Abort(absl::CancelledError("master is shutting down (job cancelled)"));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  struct Join {
    std::atomic<bool>& done;
    std::thread& t;
    ~Join() {
      done.store(true);
      t.join();
    }
  } join{done, watcher};

  auto split = partition::Range::Whole(n);
  if (!split.ok()) return fail(split.status());
  // The data plane: every worker must say where its peers reach it.
  std::vector<std::string> peer_addresses;
  for (uint32_t i = 0; i < n; ++i) {
    if (workers[i]->peer_address().empty()) {
      return fail(absl::FailedPreconditionError(
          absl::StrCat(names[i], " did not say where the other workers reach it (",
                       transport::kPeerAddressKey, "): a worker of another version?")));
    }
    peer_addresses.push_back(workers[i]->peer_address());
  }
  const std::string job_key = NewJobKey();
  job.SetRelayDirect(spec.relay_direct);
  // The traced vertices by the worker whose range holds them, whose lines about them it takes.
  std::vector<std::vector<std::string>> traced(n);
  for (const std::string& id : details.trace_vertices) {
    auto owner = split->PartitionFor(bsp::VertexIdFromExternal(id));
    if (!owner.ok() || *owner >= n) continue;
    std::vector<std::string>& ids = traced[*owner];
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  job.SetTraced(std::move(traced));

  // The master runs the same program on an empty graph: callbacks and global aggregators.
  std::unique_ptr<bsp::JobRunner> runner = spec.app->make_runner(nullptr);
  bsp::JobDetails mine = details;
  mine.coordinator = true;
  mine.restore_from.clear();
  bsp::ExecutorOptions options;
  options.max_supersteps = details.max_supersteps;
  auto progress = [&run, &spec, &server](const MasterProgress& p) {
    if (!run.first_step_at) run.first_step_at = Clock::now();
    server.status().Step(p);
    if (!spec.progress) return;
    MasterProgress line = p;
    line.attempt = run.details.attempt + 1;
    line.job_id = run.details.job_id;
    spec.progress(line);
  };
  auto executor =
      runner->StartJob(mine, job::MasterExecutorFactory(job, progress, options, run.checkpoints));
  if (!executor.ok()) {
    return fail(absl::Status(executor.status().code(),
                             absl::StrCat("unable to start the job on the master: ",
                                          std::string(executor.status().message()))));
  }
  if (!details.restore_from.empty()) {
    // The master holds no vertices: its aggregators come from the manifest.
    auto manifest = bsp::ReadCheckpointManifest(details.restore_from);
    if (!manifest.ok()) {
      job.AbortCheckpointRefused(manifest.status());
      return fail(manifest.status());
    }
    for (const auto& [name, value] : manifest->aggregators) {
      bsp::AggregatorBase* agg = (*executor)->engine().aggregators().Find(name);
      absl::Status st = agg == nullptr
                            ? absl::DataLossError(absl::StrCat("checkpoint ", details.restore_from,
                                                               " has aggregator '", name,
                                                               "', which the program lacks"))
                            : agg->SetEncodedValue(value);
      if (!st.ok()) return fail(st);
    }
    (*executor)->ResumeAt(details.resume_superstep);
  }
  std::vector<v1::JobDetails> assignments;
  for (uint32_t i = 0; i < n; ++i) {
    transport::Assignment a;
    a.details = details;
    a.details.worker_index = i;
    auto extents = split->Extents(i);
    a.details.range_first = extents->first;
    a.details.range_last = extents->second;
    if (run.staged) {
      // details.output names the sink; the staging place goes with its options.
      for (const auto& [k, v] : *run.staged) a.details.output_options[k] = v;
    } else {
      a.details.output = run.output->staging + "/" + job::PartName(i);
    }
    a.peer_timeout = spec.peer_timeout;
    a.peer_addresses = peer_addresses;
    a.job_key = job_key;
    a.relay_direct = spec.relay_direct;
    a.max_batch_bytes =
        spec.max_batch_bytes > 0 ? spec.max_batch_bytes : transport::kDefaultMaxBatchBytes;
    assignments.push_back(transport::ToWire(a));
  }
  if (auto st = job.Assign(std::move(assignments)); !st.ok()) return fail(st);

  std::vector<std::pair<double, uint64_t>> writes_before;
  for (auto& w : workers) writes_before.emplace_back(w->writes().seconds(), w->writes().count());
  const auto compute_start = Clock::now();
  if (auto st = (*executor)->RunToCompletion(); !st.ok()) {
    runner->AbortJob(mine);
    return fail(st);
  }
  const double compute_s = SecondsSince(compute_start);
  {
    // Where the supersteps' time went on the master (each worker logs its own split).
    double write_s = 0;
    uint64_t writes = 0;
    for (uint32_t i = 0; i < n; ++i) {
      write_s += workers[i]->writes().seconds() - writes_before[i].first;
      writes += workers[i]->writes().count() - writes_before[i].second;
    }
    // In direct mode the batches and bytes are the peers' traffic as the workers report it: none
    // of it crossed the master.
    const std::string relayed =
        spec.relay_direct
            ? absl::StrFormat("peer to peer (%d batches, %d bytes, none through the master)",
                              job.relayed_batches(), job.relayed_bytes())
            : absl::StrFormat("relay forward %.3f s (%d batches, %d bytes)",
                              job.forwarding().seconds(), job.relayed_batches(),
                              job.relayed_bytes());
    spdlog::info(
        "{}time split: compute {:.3f} s = workers' start {:.3f} s + barrier waits {:.3f} s ({}) + "
        "the master's own supersteps; alongside: {}, stream writes {:.3f} s ({}, all workers)",
        log_prefix, compute_s, job.start_wait().seconds(), job.barrier_waits().seconds(),
        job.barrier_waits().count(), relayed, write_s, writes);
  }
  result.supersteps = (*executor)->supersteps();

  // The phases after the supersteps, in the table's order: wait for every worker, do the
  // phase's work, release.
  double persist_s = 0;
  auto persist_start = Clock::now();
  std::vector<protocol::Step> parts;
  result.vertices = 0;
  for (protocol::Position at = job.position(); at.barrier != Barrier::kDone; at = job.position()) {
    auto entries = job.WaitAll(at);
    if (!entries.ok()) return fail(entries.status());
    switch (at.barrier) {
      case Barrier::kExecutedGraph:
        for (const protocol::Step& e : *entries) result.vertices += e.vertices;
        persist_start = Clock::now();
        break;
      case Barrier::kPersistedResults: {
        persist_s = SecondsSince(persist_start);
        // Every part must hold what its worker said it wrote before anything is published.
        uint64_t written = 0;
        for (uint32_t i = 0; i < n; ++i) {
          const protocol::Step& e = (*entries)[i];
          // A sink's staging is checked as it is published.
          if (run.output) {
            if (auto st = job::VerifyPart(run.output->staging + "/" + job::PartName(i), e.part);
                !st.ok()) {
              return fail(absl::DataLossError(absl::StrCat(names[i], ": ", st.message())));
            }
          }
          written += e.part.vertices;
        }
        if (written != result.vertices) {
          return fail(absl::DataLossError(absl::StrCat(
              "the parts hold ", written, " vertices; the workers have ", result.vertices)));
        }
        parts = *entries;
        break;
      }
      case Barrier::kCompletedJob: {
        if (run.master_lease != nullptr && run.master_lease->lost()) {
          return fail(absl::AlreadyExistsError(
              "the lease on the job's checkpoint directory was lost: another master may drive "
              "the job, so this one publishes nothing"));
        }
        result.seconds = SecondsSince(run.job_started);
        nlohmann::json success = {
            {"job_id", result.job_id},
            {"app", details.app},
            {"params", details.params},
            {"graph", details.graph.path},
            {"created_at_unix_ms", details.created_at_unix_ms},
            {"workers", n},
            {"vertices", result.vertices},
            {"supersteps", result.supersteps},
            {"attempts", details.attempt + 1},
            {"timings_seconds",
             {{"total", result.seconds},
              {"attempt", SecondsSince(started)},
              {"compute", compute_s},
              {"persist", persist_s}}},
        };
        NoteRestart(run);
        if (!run.restarts.empty()) success["restarts"] = run.restarts;
        nlohmann::json listed = nlohmann::json::array();
        for (uint32_t i = 0; i < n; ++i) {
          listed.push_back({{"name", job::PartName(i)},
                            {"vertices", parts[i].part.vertices},
                            {"bytes", parts[i].part.bytes},
                            {"crc32c", parts[i].part.crc32c}});
        }
        success["parts"] = listed;
        if (run.staged) {
          if (auto st = spec.sink->publish(*run.staged, result.vertices, success.dump());
              !st.ok()) {
            return fail(st);
          }
          result.output = details.output;
        } else {
          if (auto st = job::PublishOutput(*run.output, success.dump(2) + "\n"); !st.ok()) {
            return fail(st);
          }
          result.output = run.output->final;
        }
        run.published = true;
        // Publishing is the commit point: a worker that fails or hangs up from here on cannot
        // undo a complete, published result.
        if (auto st = job.ReleaseAll(protocol::Step{}); !st.ok()) {
          spdlog::warn("{}published, but not every worker heard so: {}", log_prefix,
                       std::string(st.message()));
        }
        CloseStreams(workers, grpc::Status::OK);
        return absl::OkStatus();
      }
      default:
        return fail(absl::InternalError(
            absl::StrCat("the job is at ", protocol::Describe(at), " after its supersteps")));
    }
    if (auto st = job.ReleaseAll(protocol::Step{}); !st.ok()) return fail(st);
  }
  return fail(absl::InternalError("the job ended without publishing"));
}

}  // namespace

}  // namespace lockstep::dbsp
