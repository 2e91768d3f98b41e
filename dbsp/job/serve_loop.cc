#include "job/serve_loop.h"

#include <grpcpp/grpcpp.h>

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "job/data_roots.h"
#include "job/shipping_runner.h"
#include "job/worker_phases.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/bsp/load_stats.h"
#include "lockstep/bsp/text.h"
#include "lockstep/dbsp/settings.h"
#include "spdlog/spdlog.h"
#include "transport/grpc_options.h"

namespace lockstep::dbsp::job {
namespace {

using Clock = std::chrono::steady_clock;

// Back-pressure: a worker's outbox to the master holds at most this many bytes of payloads.
constexpr size_t kOutboxBytes = 64 << 20;
// How long a worker whose job is over waits for the master to end its stream.
constexpr auto kEndGrace = std::chrono::seconds(5);
// Back-pressure on the data plane: at most this many bytes of batches unanswered by peers.
constexpr size_t kPeerInflightBytes = 64 << 20;

// The peer server on `address`; the default, every interface over IPv6, falls back to IPv4 on a
// host without IPv6.
absl::StatusOr<std::unique_ptr<transport::PeerServer>> StartPeerServer(
    const std::string& address, const std::shared_ptr<const Security>& security) {
  auto server = transport::PeerServer::Start(address, security);
  if (!server.ok() && address == WorkerOptions().peer_listen) {
    server = transport::PeerServer::Start("0.0.0.0:0", security);
  }
  return server;
}

// Logs how a worker's share of the graph loaded, and counts the load's time.
std::function<void(const bsp::PartitionLoadStats&)> LoadReport(std::string tag, Metrics* metrics) {
  return [tag = std::move(tag), start = Clock::now(), metrics](const bsp::PartitionLoadStats& s) {
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (metrics != nullptr) metrics->AddPhase(JobPhase::kLoad, seconds);
    spdlog::info(
        "{}loaded its share: lines {} | records {} | vertices known {} | edges held {} | rounds "
        "{} | {:.3f} s",
        tag, s.lines_parsed, s.records_parsed, s.vertices_known, s.edges_received, s.rounds,
        seconds);
  };
}

}  // namespace

ServeLoop::DataPlane::DataPlane(transport::PeerChannels& channels, const transport::Assignment& a)
    : links(channels, a.peer_addresses, a.details.place.worker_index, a.job_key, kPeerInflightBytes,
            a.peer_timeout),
      collective(links, a.max_batch_bytes, 2 * a.peer_timeout) {}

ServeLoop::~ServeLoop() {
  if (watcher_.joinable()) Teardown();
}

absl::Status ServeLoop::Run() {
  auto roots = DataRoots(options_.data_roots);
  if (!roots.ok()) return roots.status();
  roots_ = *std::move(roots);
  if (roots_.empty()) {
    spdlog::warn("no {}: a job may name any path this worker can read or write",
                 SettingName(Setting::kDataRoot));
  } else {
    std::string list;
    for (const auto& r : roots_) absl::StrAppend(&list, list.empty() ? "" : ", ", r.string());
    spdlog::info("a job's paths must lie under {}", bsp::SanitizeForLog(list, 1000));
  }
  watcher_ = std::thread([this] { Watch(); });
  if (auto st = StartServices(); !st.ok()) return result_ = st;
  while (!stop_.load() && (options_.max_jobs == 0 || jobs_ < options_.max_jobs)) {
    if (!ServeStream()) break;
  }
  if (options_.max_jobs == 0) result_ = absl::OkStatus();
  return absl::Status(result_);  // a copy: the watcher may read `result_` until the teardown ends
}

void ServeLoop::Watch() {
  // A stop fails the running job, whose failure then reaches the master before the stream ends.
  bool reported = false;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (phase_ == Phase::kDone) return;
      if (phase_ == Phase::kServing) {
        // Ready while connected to the master: waiting in its pool or in a job.
        if (health_ && channel_) {
          health_->Set(!stop_.load() && channel_->GetState(false) == GRPC_CHANNEL_READY);
        }
        if (stop_.load() && running_ != nullptr) {
          running_->Fail(absl::CancelledError("the worker is shutting down (SIGTERM)"));
        }
      } else if (!reported && Clock::now() > teardown_deadline_ && options_.on_stuck_teardown) {
        reported = true;
        options_.on_stuck_teardown(result_);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ServeLoop::Teardown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (std::uncaught_exceptions() > 0) {
      result_ = absl::InternalError("the worker ended on an exception");
    }
    phase_ = Phase::kTearingDown;
    teardown_deadline_ = Clock::now() + options_.teardown_limit;
  }
  // The watcher uses health and channel no more (phase), and mu_ stays free for it.
  stub_.reset();
  channel_.reset();
  peer_channels_.Retain({});
  peer_server_.reset();
  health_.reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    phase_ = Phase::kDone;
  }
  watcher_.join();
}

absl::Status ServeLoop::StartServices() {
  if (!options_.health_address.empty()) {
    auto started =
        HealthServer::Start(options_.health_address, kWorkerHealthService, *options_.security);
    if (!started.ok()) return started.status();
    {
      std::lock_guard<std::mutex> lock(mu_);
      health_ = std::move(*started);
    }
    if (options_.health_started) options_.health_started(health_->port());
  }
  auto started = StartPeerServer(options_.peer_listen, options_.security);
  if (!started.ok()) return started.status();
  peer_server_ = std::move(*started);
  advertised_ =
      options_.advertise.empty() ? absl::StrCat(":", peer_server_->port()) : options_.advertise;
  spdlog::info("serving peers on port {} (advertised as {})", peer_server_->port(), advertised_);
  LogSecurity("worker's peer server", options_.peer_listen, *options_.security);
  auto made = grpc::CreateCustomChannel(options_.master, options_.security->ChannelCredentials(),
                                        transport::ClientChannelArguments(*options_.security));
  stub_ = v1::JobQueue::NewStub(made);
  std::lock_guard<std::mutex> lock(mu_);
  channel_ = std::move(made);
  return absl::OkStatus();
}

bool ServeLoop::ServeStream() {
  transport::MasterLink link(*stub_, kOutboxBytes);
  link.Start(advertised_, *options_.security);
  std::optional<v1::MasterPayload> first = link.AwaitFirst(stop_);
  if (!first || !first->has_job_details()) {
    const grpc::Status st = link.Finish(std::chrono::milliseconds(stop_.load() ? 0 : 1000));
    if (stop_.load()) return false;
    if (!warned_ || st.error_code() != grpc::StatusCode::UNAVAILABLE) {
      spdlog::warn("no job from master {}: {}; redialling", options_.master,
                   first ? "unexpected payload" : bsp::SanitizeForLog(st.error_message(), 1024));
      warned_ = true;
    }
    std::this_thread::sleep_for(backoff_);
    backoff_ = std::min(backoff_ * 2, std::chrono::milliseconds(2000));
    return true;
  }
  backoff_ = std::chrono::milliseconds(100);
  warned_ = false;
  const JobEnd end = ServeJob(link, first->job_details());
  if (end.status.ok()) {
    spdlog::info("{}completed; {}", end.tag, end.split);
  } else if (end.retried) {
    // The master goes on with the job in a new attempt: back to the pool, and not a job served.
    spdlog::info("{}attempt ended; the master goes on with the job", end.tag);
  } else {
    result_ = end.status;
  }
  if (!end.retried) ++jobs_;
  return true;
}

ServeLoop::JobEnd ServeLoop::ServeJob(transport::MasterLink& link, const v1::JobDetails& details) {
  auto assignment = transport::FromWire(details);
  if (assignment.ok() && options_.attach_graph) {
    if (auto st = options_.attach_graph(assignment->details.work.graph); !st.ok()) assignment = st;
  }
  JobEnd end;
  end.tag = assignment.ok() ? absl::StrCat("job ", assignment->details.work.job_id, " worker ",
                                           assignment->details.place.worker_index, ": ")
                            : "job ?: ";
  std::optional<DataPlane> plane;
  if (assignment.ok()) {
    peer_channels_.Retain(assignment->peer_addresses);
    plane.emplace(peer_channels_, *assignment);
    assignment->details.place.exchange = &plane->collective;
    assignment->details.on_partition_loaded = LoadReport(end.tag, options_.metrics);
  }
  WorkerJob job(link, assignment.ok() ? *assignment : transport::Assignment{});
  job.set_metrics(options_.metrics);
  if (assignment.ok()) WirePeers(job, link, *assignment, *plane);
  // No peer's batch reaches the job's handler once the job is over here.
  struct Unregister {
    transport::PeerServer& server;
    std::optional<DataPlane>& plane;
    ~Unregister() {
      server.Unregister();
      if (plane) plane->links.SetFailureListener(nullptr);
    }
  } unregister{*peer_server_, plane};
  // However this is left, the stream ends before `job`, its handler, goes away.
  struct EndFirst {
    transport::MasterLink& link;
    ~EndFirst() { link.Finish(std::chrono::milliseconds(0)); }
  } end_first{link};
  link.SetHandler(&job);
  SetRunning(&job);
  end.status = assignment.ok() ? RunApp(*assignment, job, end.tag) : assignment.status();
  SetRunning(nullptr);
  if (options_.metrics != nullptr) {
    ++(end.status.ok() ? options_.metrics->jobs_completed : options_.metrics->jobs_failed);
  }
  if (!end.status.ok()) {
    // A job the master aborted shows the master's reason, not the cancellation it caused.
    spdlog::error("{}failed: {}", end.tag,
                  bsp::SanitizeForLog(std::string(job.FailureOr(end.status).message()), 4096));
  }
  job.Finish(end.status);
  link.Finish(kEndGrace);  // the job's handler is called no more after this
  end.split = job.TimeSplit();
  end.retried = !end.status.ok() && job.retrying();
  // What the job freed goes back to the kernel while the worker waits for the next one (malloc
  // keeps it otherwise; cli/process.cc sets no trimming on free).
  bsp::ReturnFreedMemory();
  return end;
}

void ServeLoop::WirePeers(WorkerJob& job, transport::MasterLink& link,
                          const transport::Assignment& a, DataPlane& plane) {
  job.AttachPeers(&plane.links, &plane.collective, a.relay_direct);
  plane.links.SetFailureListener([&job](const absl::Status& why) { job.Fail(why); });
  // Held up by other workers (in the load's exchanges, or waiting for their answers to a
  // superstep's batches): the master is told whom, to tell a straggler from its victims.
  auto tell_waiting = [&link](const std::vector<uint32_t>& peers) {
    v1::WorkerPayload waiting;
    v1::Waiting* w = waiting.mutable_waiting();  // set even when empty: a wait that ended
    for (uint32_t p : peers) w->add_peers(p);
    (void)link.Send(std::move(waiting));
  };
  plane.collective.SetWaitingListener(tell_waiting);
  plane.links.SetWaitingListener(tell_waiting);
  peer_server_->Register(a.job_key, &job);
}

absl::Status ServeLoop::RunApp(const transport::Assignment& a, WorkerJob& job,
                               const std::string& tag) {
  spdlog::info("{}started ({} of {})", tag, a.details.place.worker_index,
               a.details.place.worker_count);
  const catalogue::AppInfo* app = apps_.Find(a.details.work.app);
  if (app == nullptr) {
    return absl::NotFoundError(absl::StrCat("this worker has no app named '",
                                            bsp::SanitizeForLog(a.details.work.app, 64), "'"));
  }
  std::unique_ptr<runner::JobRunner> runner = app->make_runner(nullptr);
  runner::JobDetails details = a.details;
  if (auto st = ConfinePaths(details, roots_, options_); !st.ok()) return st;
  // The job's batches, with their framing, must fit in this worker's messages.
  if (a.max_batch_bytes + (64 << 10) > options_.security->limits().max_message_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("the job's batches of up to ", a.max_batch_bytes,
                                                   " bytes do not fit this worker's ",
                                                   SettingName(Setting::kMaxMessageBytes), " ",
                                                   options_.security->limits().max_message_bytes));
  }
  std::optional<ShippingRunner> shipping;
  if (!details.work.output_options.empty()) {
    // Results for a sink that is not a file: written to a file of this worker's first.
    auto made = ShippingRunner::Make(*runner, options_.ship_results, details);
    if (!made.ok()) return made.status();
    shipping.emplace(*std::move(made));
    details = shipping->details();
  }
  try {
    return WorkerPhases(job).Run(shipping ? static_cast<runner::JobRunner&>(*shipping) : *runner,
                                 details, tag);
  } catch (const std::exception& e) {
    // The engine turns running out of memory into a status; this is what is left.
    return absl::InternalError(absl::StrCat("the job failed: ", e.what()));
  }
}

void ServeLoop::SetRunning(WorkerJob* job) {
  std::lock_guard<std::mutex> lock(mu_);
  running_ = job;
}

}  // namespace lockstep::dbsp::job
