#include "lockstep/dbsp/worker.h"

#include <grpcpp/grpcpp.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "job/peer_collective.h"
#include "job/worker_job.h"
#include "job/worker_phases.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/bsp/partitioned_load.h"
#include "lockstep/bsp/text.h"
#include "lockstep/dbsp/health.h"
#include "spdlog/spdlog.h"
#include "transport/grpc_options.h"
#include "transport/master_link.h"
#include "transport/peer.h"
#include "transport/wire.h"

namespace lockstep::dbsp {
namespace {

// A job's runner whose results go to a sink that is not a file (a database table): the results
// are written to a file in a directory of this worker's, then shipped; the directory goes with it.
class ShippingRunner final : public bsp::JobRunner {
 public:
  using Ship = std::function<absl::Status(const bsp::JobDetails&, const std::string&)>;
  // Points `details.output` at the file.
  static absl::StatusOr<ShippingRunner> Make(bsp::JobRunner& inner, Ship ship,
                                             bsp::JobDetails& details) {
    if (!ship) {
      return absl::UnimplementedError(absl::StrCat("this worker cannot write results to ",
                                                   bsp::SanitizeForLog(details.output, 100)));
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string dir =
        absl::StrCat(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp", "/lockstep-part.XXXXXX");
    if (::mkdtemp(dir.data()) == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("cannot make a directory ", dir, ": ", std::strerror(errno)));
    }
    bsp::JobDetails sink = details;  // as the master gave it: `output` names the sink
    details.output = dir + "/part";
    return ShippingRunner(inner, std::move(ship), std::move(dir), std::move(sink));
  }
  ShippingRunner(ShippingRunner&& o) noexcept
      : inner_(o.inner_),
        ship_(std::move(o.ship_)),
        dir_(std::exchange(o.dir_, std::string())),
        sink_(std::move(o.sink_)) {}
  ~ShippingRunner() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  absl::Status CheckParams(const bsp::JobDetails& d) const override {
    return inner_.CheckParams(d);
  }
  absl::StatusOr<std::unique_ptr<bsp::Executor>> StartJob(
      const bsp::JobDetails& d, const bsp::ExecutorFactory& factory) override {
    return inner_.StartJob(d, factory);
  }
  absl::StatusOr<bsp::OutputSummary> CompleteJob(const bsp::JobDetails& d) override {
    auto written = inner_.CompleteJob(d);
    if (!written.ok()) return written;
    if (auto st = ship_(sink_, d.output); !st.ok()) return st;
    return written;
  }
  void AbortJob(const bsp::JobDetails& d) override { inner_.AbortJob(d); }

 private:
  ShippingRunner(bsp::JobRunner& inner, Ship ship, std::string dir, bsp::JobDetails sink)
      : inner_(inner), ship_(std::move(ship)), dir_(std::move(dir)), sink_(std::move(sink)) {}
  bsp::JobRunner& inner_;
  Ship ship_;
  std::string dir_;
  bsp::JobDetails sink_;
};

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

// Whether `path` lies in one of `roots` (canonical directories) once its symbolic links are
// resolved.
bool Within(const std::string& path, const std::vector<std::filesystem::path>& roots) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::weakly_canonical(path, ec);
  if (ec) return false;
  for (const std::filesystem::path& root : roots) {
    const std::filesystem::path rel = real.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != "..") return true;
  }
  return false;
}

// Refuses a job that names a path outside --data-root (a master is trusted with the cluster's
// jobs, not with this machine's files).
absl::Status ConfinePaths(const bsp::JobDetails& d, const std::vector<std::filesystem::path>& roots,
                          const WorkerOptions& options) {
  if (roots.empty()) return absl::OkStatus();
  // A database URI names no file here (the graph and the output may be one); anything else is a
  // path, however it looks ("x://../.." is the directory "x:" and then up).
  const auto database = [](const std::string& p) {
    return p.starts_with("postgresql://") || p.starts_with("postgres://");
  };
  std::vector<std::pair<std::string, std::string>> paths = {
      {"checkpoint directory", d.checkpoint_dir},
      {"checkpoint", d.restore_from},
      {"partitioned form", d.save_parts}};
  if (!database(d.graph.path)) paths.emplace_back("graph", d.graph.path);
  if (!database(d.output)) paths.emplace_back("output", d.output);
  // The paths a database URI has its client use (a password file, keys, certificates, socket
  // directories); one that no root could confine refuses the job.
  const std::pair<const char*, const std::string*> uris[] = {{"graph", &d.graph.path},
                                                             {"output", &d.output}};
  for (const auto& [what, uri] : uris) {
    if (!database(*uri) || !options.uri_paths) continue;
    auto named = options.uri_paths(*uri);
    if (!named.ok()) {
      return absl::PermissionDeniedError(absl::StrCat(
          "the job's ", what, " URI ", named.status().message(), ": refused under --data-root"));
    }
    for (auto& [keyword, path] : *named) {
      paths.emplace_back(absl::StrCat(what, " URI's ", keyword), path);
    }
  }
  // A Graphalytics graph's vertex and edge files, which its properties name (absolute, or beside
  // the properties file); properties that cannot be read fail the job's load, which says why.
  if (!database(d.graph.path) && bsp::IsGraphalytics(d.graph) && Within(d.graph.path, roots)) {
    if (auto props = bsp::ReadGraphalyticsProperties(d.graph.path); props.ok()) {
      const std::string dir = std::filesystem::path(d.graph.path).parent_path().string();
      for (const char* key : {"vertex-file", "edge-file"}) {
        if (auto it = props->find(key); it != props->end()) {
          paths.emplace_back(std::string("graph's ") + key,
                             it->second.starts_with("/")
                                 ? it->second
                                 : (dir.empty() ? "." : dir) + "/" + it->second);
        }
      }
    }
  }
  for (const auto& [what, path] : paths) {
    if (path.empty()) continue;
    if (!Within(path, roots)) {
      return absl::PermissionDeniedError(absl::StrCat("the job's ", what, " ",
                                                      bsp::SanitizeForLog(path, 200),
                                                      " is outside this worker's --data-root"));
    }
  }
  return absl::OkStatus();
}

// The canonical forms of --data-root's directories.
absl::StatusOr<std::vector<std::filesystem::path>> DataRoots(const std::vector<std::string>& dirs) {
  std::vector<std::filesystem::path> roots;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::filesystem::path root = std::filesystem::canonical(dir, ec);
    if (ec || !std::filesystem::is_directory(root)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--data-root: ", bsp::SanitizeForLog(dir, 200), " is not a directory"));
    }
    roots.push_back(std::move(root));
  }
  return roots;
}

}  // namespace

absl::Status ServeWorker(const catalogue::AppRegistry& apps, const WorkerOptions& options,
                         const std::atomic<bool>& stop) {
  auto roots = DataRoots(options.data_roots);
  if (!roots.ok()) return roots.status();
  if (roots->empty()) {
    spdlog::warn("no --data-root: a job may name any path this worker can read or write");
  } else {
    std::string list;
    for (const auto& r : *roots) absl::StrAppend(&list, list.empty() ? "" : ", ", r.string());
    spdlog::info("a job's paths must lie under {}", bsp::SanitizeForLog(list, 1000));
  }
  // The gRPC objects, made once the watcher runs (below): however they end, they end under its
  // deadline.
  std::unique_ptr<HealthServer> health;  // written under mu
  std::unique_ptr<transport::PeerServer> peer_server;
  transport::PeerChannels peer_channels(options.security);
  std::shared_ptr<grpc::Channel> channel;  // written under mu
  std::unique_ptr<v1::JobQueue::Stub> stub;
  std::chrono::milliseconds backoff(100);
  uint64_t jobs = 0;
  bool warned = false;

  // A stop fails the running job, whose failure then reaches the master before the stream ends.
  // The watcher also bounds the teardown of the gRPC objects after the last job (the cleanup
  // below).
  enum Phase { kServing, kTearingDown, kDone };
  std::mutex mu;
  job::WorkerJob* running = nullptr;
  Phase phase = kServing;  // guarded by mu
  Clock::time_point teardown_deadline;
  absl::Status result;
  std::thread watcher([&] {
    bool reported = false;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (phase == kDone) return;
        if (phase == kServing) {
          // Ready while connected to the master: waiting in its pool or in a job.
          if (health && channel) {
            health->Set(!stop.load() && channel->GetState(false) == GRPC_CHANNEL_READY);
          }
          if (stop.load() && running != nullptr) {
            running->Fail(absl::CancelledError("the worker is shutting down (SIGTERM)"));
          }
        } else if (!reported && Clock::now() > teardown_deadline && options.on_stuck_teardown) {
          reported = true;
          options.on_stuck_teardown(result);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  // However ServeWorker is left (an exception too: a joinable thread must not be destroyed), the
  // gRPC objects go first, under the watcher's deadline, and then the watcher.
  absl::Cleanup teardown = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (std::uncaught_exceptions() > 0) {
        result = absl::InternalError("the worker ended on an exception");
      }
      phase = kTearingDown;
      teardown_deadline = Clock::now() + options.teardown_limit;
    }
    // The watcher uses health and channel no more (phase), and mu stays free for it.
    stub.reset();
    channel.reset();
    peer_channels.Retain({});
    peer_server.reset();
    health.reset();
    {
      std::lock_guard<std::mutex> lock(mu);
      phase = kDone;
    }
    watcher.join();
  };

  if (!options.health_address.empty()) {
    auto started =
        HealthServer::Start(options.health_address, kWorkerHealthService, *options.security);
    if (!started.ok()) return result = started.status();
    {
      std::lock_guard<std::mutex> lock(mu);
      health = std::move(*started);
    }
    if (options.health_started) options.health_started(health->port());
  }
  {
    auto started = StartPeerServer(options.peer_listen, options.security);
    if (!started.ok()) return result = started.status();
    peer_server = std::move(*started);
  }
  const std::string advertised =
      options.advertise.empty() ? absl::StrCat(":", peer_server->port()) : options.advertise;
  spdlog::info("serving peers on port {} (advertised as {})", peer_server->port(), advertised);
  LogSecurity("worker's peer server", options.peer_listen, *options.security);
  {
    auto made = grpc::CreateCustomChannel(options.master, options.security->ChannelCredentials(),
                                          transport::ClientChannelArguments(*options.security));
    stub = v1::JobQueue::NewStub(made);
    std::lock_guard<std::mutex> lock(mu);
    channel = std::move(made);
  }

  while (!stop.load() && (options.max_jobs == 0 || jobs < options.max_jobs)) {
    transport::MasterLink link(*stub, kOutboxBytes);
    link.Start(advertised, *options.security);
    std::optional<v1::MasterPayload> first = link.AwaitFirst(stop);
    if (!first || !first->has_job_details()) {
      const grpc::Status st = link.Finish(std::chrono::milliseconds(stop.load() ? 0 : 1000));
      if (stop.load()) break;
      if (!warned || st.error_code() != grpc::StatusCode::UNAVAILABLE) {
        spdlog::warn("no job from master {}: {}; redialling", options.master,
                     first ? "unexpected payload" : bsp::SanitizeForLog(st.error_message(), 1024));
        warned = true;
      }
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
      continue;
    }
    backoff = std::chrono::milliseconds(100);
    warned = false;
    auto assignment = transport::FromWire(first->job_details());
    if (assignment.ok() && options.attach_graph) {
      if (auto st = options.attach_graph(assignment->details.graph); !st.ok()) assignment = st;
    }
    const std::string tag = assignment.ok()
                                ? absl::StrCat("job ", assignment->details.job_id, " worker ",
                                               assignment->details.worker_index, ": ")
                                : "job ?: ";
    absl::Status st;
    std::string split;
    bool retried = false;
    {
      // The data plane of the job, which outlives the job's handler.
      std::optional<transport::PeerLinks> links;
      std::optional<job::PeerCollective> collective;
      if (assignment.ok()) {
        const auto& a = *assignment;
        peer_channels.Retain(a.peer_addresses);
        links.emplace(peer_channels, a.peer_addresses, a.details.worker_index, a.job_key,
                      kPeerInflightBytes, a.peer_timeout);
        collective.emplace(*links, a.max_batch_bytes, 2 * a.peer_timeout);
        assignment->details.exchange = &*collective;
        assignment->details.on_partition_loaded =
            [tag, start = std::chrono::steady_clock::now(),
             metrics = options.metrics](const bsp::PartitionLoadStats& s) {
              const double seconds =
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
              if (metrics != nullptr) metrics->AddPhase(JobPhase::kLoad, seconds);
              spdlog::info(
                  "{}loaded its share: lines {} | records {} | vertices known {} | edges held {} "
                  "| rounds {} | {:.3f} s",
                  tag, s.lines_parsed, s.records_parsed, s.vertices_known, s.edges_received,
                  s.rounds, seconds);
            };
      }
      job::WorkerJob job(link, assignment.ok() ? *assignment : transport::Assignment{});
      job.set_metrics(options.metrics);
      if (assignment.ok()) {
        job.AttachPeers(&*links, &*collective, assignment->relay_direct);
        links->SetFailureListener([&job](const absl::Status& why) { job.Fail(why); });
        // Held up by other workers (in the load's exchanges, or waiting for their answers to
        // a superstep's batches): the master is told whom, to tell a straggler from its victims.
        auto tell_waiting = [&link](const std::vector<uint32_t>& peers) {
          v1::WorkerPayload waiting;
          v1::Waiting* w = waiting.mutable_waiting();  // set even when empty: a wait that ended
          for (uint32_t p : peers) w->add_peers(p);
          (void)link.Send(std::move(waiting));
        };
        collective->SetWaitingListener(tell_waiting);
        links->SetWaitingListener(tell_waiting);
        peer_server->Register(assignment->job_key, &job);
      }
      // No peer's batch reaches the job's handler once the job is over here.
      struct Unregister {
        transport::PeerServer& server;
        std::optional<transport::PeerLinks>& links;
        ~Unregister() {
          server.Unregister();
          if (links) links->SetFailureListener(nullptr);
        }
      } unregister{*peer_server, links};
      // However this block is left, the stream ends before `job`, its handler, goes away.
      struct EndFirst {
        transport::MasterLink& link;
        ~EndFirst() { link.Finish(std::chrono::milliseconds(0)); }
      } end_first{link};
      link.SetHandler(&job);
      {
        std::lock_guard<std::mutex> lock(mu);
        running = &job;
      }
      if (assignment.ok()) {
        spdlog::info("{}started ({} of {})", tag, assignment->details.worker_index,
                     assignment->details.worker_count);
        const catalogue::AppInfo* app = apps.Find(assignment->details.app);
        if (app == nullptr) {
          st = absl::NotFoundError(absl::StrCat("this worker has no app named '",
                                                bsp::SanitizeForLog(assignment->details.app, 64),
                                                "'"));
        } else {
          std::unique_ptr<bsp::JobRunner> runner = app->make_runner(nullptr);
          std::optional<ShippingRunner> shipping;
          bsp::JobDetails details = assignment->details;
          st = ConfinePaths(details, *roots, options);
          // The job's batches, with their framing, must fit in this worker's messages.
          if (st.ok() && assignment->max_batch_bytes + (64 << 10) >
                             options.security->limits().max_message_bytes) {
            st = absl::InvalidArgumentError(
                absl::StrCat("the job's batches of up to ", assignment->max_batch_bytes,
                             " bytes do not fit this worker's --max-message-bytes ",
                             options.security->limits().max_message_bytes));
          }
          if (st.ok() && !details.output_options.empty()) {
            // Results for a sink that is not a file: written to a file of this worker's first.
            auto made = ShippingRunner::Make(*runner, options.ship_results, details);
            if (made.ok()) {
              shipping.emplace(std::move(*made));
            } else {
              st = made.status();
            }
          }
          try {
            if (st.ok()) {
              st = job::WorkerPhases(job).Run(
                  shipping ? static_cast<bsp::JobRunner&>(*shipping) : *runner, details, tag);
            }
          } catch (const std::exception& e) {
            // The engine turns running out of memory into a status; this is what is left.
            st = absl::InternalError(absl::StrCat("the job failed: ", e.what()));
          }
        }
      } else {
        st = assignment.status();
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        running = nullptr;
      }
      if (options.metrics != nullptr)
        ++(st.ok() ? options.metrics->jobs_completed : options.metrics->jobs_failed);
      if (!st.ok()) {
        // A job the master aborted shows the master's reason, not the cancellation it caused.
        spdlog::error("{}failed: {}", tag,
                      bsp::SanitizeForLog(std::string(job.FailureOr(st).message()), 4096));
      }
      job.Finish(st);
      link.Finish(kEndGrace);  // the job's handler is called no more after this
      split = job.TimeSplit();
      retried = !st.ok() && job.retrying();
      // What the job freed goes back to the kernel while the worker waits for the next one
      // (malloc keeps it otherwise; cli.cc sets no trimming on free).
      bsp::ReturnFreedMemory();
    }
    if (st.ok()) {
      spdlog::info("{}completed; {}", tag, split);
    } else if (retried) {
      // The master goes on with the job in a new attempt: back to the pool, and not a job served.
      spdlog::info("{}attempt ended; the master goes on with the job", tag);
    } else {
      result = st;
    }
    if (!retried) ++jobs;
  }
  if (options.max_jobs == 0) result = absl::OkStatus();
  return absl::Status(result);  // a copy: the watcher may read `result` until the cleanup is over
}

}  // namespace lockstep::dbsp
