#include "transport/master_server.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "lockstep/dbsp/settings.h"
#include "spdlog/spdlog.h"
#include "transport/admission.h"
#include "transport/grpc_options.h"
#include "transport/log_limit.h"
#include "transport/peer.h"

namespace lockstep::dbsp::transport {

using Clock = std::chrono::steady_clock;

// --- WorkerSession
//
// Every gRPC operation outside a reaction (a write started by Flush, Finish from Close) is
// decided under mu_ and marked there (writing_, finish_called_), and never made while mu_ is held:
// a reaction may run inline in the caller's thread. Finish is called only with no write in
// flight, and Flush starts none once Finish was called, so no operation follows Finish.

WorkerSession::WorkerSession(std::string peer, std::string peer_address, WorkerPool& pool)
    : peer_(std::move(peer)), peer_address_(std::move(peer_address)), pool_(pool) {}

void WorkerSession::Start(std::shared_ptr<void> ticket) {
  ticket_ = std::move(ticket);
  self_ = shared_from_this();
  {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = &pool_;
  }
  pool_.Add(self_);
  StartRead(&in_);
}

void WorkerSession::Enqueue(v1::MasterPayload payload, bool urgent) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finish_called_ || closing_) return;
  if (urgent && !outbox_.empty()) {
    // Keep the payload in flight (gRPC holds it); drop the rest.
    outbox_.erase(outbox_.begin() + (writing_ ? 1 : 0), outbox_.end());
  }
  outbox_.push_back(std::move(payload));
}

void WorkerSession::Flush() {
  const v1::MasterPayload* next = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (writing_ || finish_called_ || outbox_.empty()) return;
    writing_ = true;
    write_started_ = Clock::now();
    next = &outbox_.front();  // deque: stays put while others are pushed behind it
  }
  StartWrite(next);
}

void WorkerSession::OnWriteDone(bool ok) {
  const v1::MasterPayload* next = nullptr;
  bool finish = false;
  bool broken = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    writes_.Add(Clock::now() - write_started_);
    outbox_.pop_front();
    if (!ok) {
      outbox_.clear();  // the stream is broken: nothing more gets through
      broken = true;
    }
    if (!forced_ && !outbox_.empty()) {
      next = &outbox_.front();
      write_started_ = Clock::now();
    } else {
      writing_ = false;
      finish = ShouldFinishLocked();
    }
  }
  if (next != nullptr) StartWrite(next);
  if (broken) HangUp("its stream broke");
  if (finish) Finish();
}

void WorkerSession::OnReadDone(bool ok) {
  if (!ok) {
    HangUp("disconnected");
    bool finish;
    {
      std::lock_guard<std::mutex> lock(mu_);
      finish = ShouldFinishLocked();
    }
    if (finish) Finish();
    return;
  }
  CallHandler([&](WorkerStreamHandler& h, uint32_t index) { h.OnPayload(index, in_); });
  in_.Clear();
  {
    // The stream is being finished: read no more (OnDone still reports the hang-up).
    std::lock_guard<std::mutex> lock(mu_);
    if (finish_called_) return;
  }
  StartRead(&in_);  // inside a reaction: the call is alive even if Finish comes meanwhile
}

template <class F>
void WorkerSession::CallHandler(F call) {
  WorkerStreamHandler* handler;
  uint32_t index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    handler = handler_;
    index = index_;
    if (handler == nullptr) return;
    ++calls_in_handler_;  // Detach waits for this to drop back to 0
  }
  call(*handler, index);
  std::lock_guard<std::mutex> lock(mu_);
  if (--calls_in_handler_ == 0) changed_.notify_all();
}

void WorkerSession::HangUp(std::string_view why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (hung_up_) return;
    hung_up_ = true;
    changed_.notify_all();
  }
  CallHandler([&](WorkerStreamHandler& h, uint32_t index) { h.OnHangUp(index, why); });
}

void WorkerSession::OnCancel() {
  // The RPC is over (the worker went away, keepalive gave up, or the server shuts down): a
  // pending read fails and reports the hang-up; the stream still has to be finished.
  bool finish;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    forced_ = true;
    if (final_.ok()) final_ = grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    finish = ShouldFinishLocked();
  }
  if (finish) Finish();
}

bool WorkerSession::ShouldFinishLocked() {
  if (finish_called_ || writing_ || !closing_) return false;
  if (!forced_ && !(hung_up_ && outbox_.empty())) return false;
  finish_called_ = true;
  return true;
}

void WorkerSession::Finish() {
  grpc::Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = final_;
  }
  grpc::ServerBidiReactor<v1::WorkerPayload, v1::MasterPayload>::Finish(status);
}

void WorkerSession::Attach(WorkerStreamHandler* handler, uint32_t index) {
  bool hung_up;
  {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return calls_in_handler_ == 0; });
    handler_ = handler;
    index_ = index;
    hung_up = hung_up_;
  }
  if (hung_up) handler->OnHangUp(index, "disconnected");
}

void WorkerSession::Detach() {
  std::unique_lock<std::mutex> lock(mu_);
  handler_ = nullptr;
  changed_.wait(lock, [&] { return calls_in_handler_ == 0; });
}

void WorkerSession::Close(const grpc::Status& status) {
  bool finish;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return;
    closing_ = true;
    final_ = status;
    finish = ShouldFinishLocked();
  }
  Flush();  // whatever is queued still goes out first
  if (finish) Finish();
}

void WorkerSession::ForceClose() {
  bool finish;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    forced_ = true;
    if (final_.ok()) final_ = grpc::Status(grpc::StatusCode::CANCELLED, "cut off by the master");
    finish = ShouldFinishLocked();
  }
  if (finish) Finish();
}

bool WorkerSession::hung_up() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hung_up_;
}

bool WorkerSession::WaitHungUp(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_until(lock, deadline, [&] { return hung_up_ || done_; });
}

void WorkerSession::OnDone() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    changed_.notify_all();
  }
  HangUp("disconnected");  // a no-op unless the read side never reported it
  spdlog::debug("worker {} stream ended", bsp::SanitizeForLog(peer_, 128));
  std::shared_ptr<WorkerSession> last = std::move(self_);  // may free this session: nothing after
}

// --- WorkerPool

void WorkerPool::Add(std::shared_ptr<WorkerSession> session) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!shut_down_) {
      const uint32_t id = next_id_++;
      session->Attach(this, id);  // no hang-up can have been reported yet: it is not reading
      idle_.emplace_back(id, session);
      changed_.notify_all();
      spdlog::info("worker {} connected", bsp::SanitizeForLog(session->peer(), 128));
      return;
    }
  }
  session->Close(grpc::Status(grpc::StatusCode::UNAVAILABLE, "master is shutting down"));
  session->ForceClose();
}

std::shared_ptr<WorkerSession> WorkerPool::TakeLocked(uint32_t id) {
  for (auto it = idle_.begin(); it != idle_.end(); ++it) {
    if (it->first == id) {
      std::shared_ptr<WorkerSession> s = std::move(it->second);
      idle_.erase(it);
      changed_.notify_all();
      return s;
    }
  }
  return nullptr;
}

void WorkerPool::OnHangUp(uint32_t worker, std::string_view) {
  std::shared_ptr<WorkerSession> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s = TakeLocked(worker);
  }
  if (s) s->Close(grpc::Status(grpc::StatusCode::CANCELLED, "hung up"));
}

void WorkerPool::OnPayload(uint32_t worker, v1::WorkerPayload&) {
  std::shared_ptr<WorkerSession> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s = TakeLocked(worker);
  }
  if (!s) return;
  spdlog::warn("worker {} sent a payload before it was given a job; closing its stream",
               bsp::SanitizeForLog(s->peer(), 128));
  s->Close(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "a worker speaks only when it has a job"));
  s->ForceClose();
}

absl::StatusOr<std::vector<std::shared_ptr<WorkerSession>>> WorkerPool::Reserve(
    const PoolOptions& o, const std::atomic<bool>& cancel) {
  const uint32_t need = std::max<uint32_t>(1, o.min_workers);
  const auto start = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  auto live = [&] { return static_cast<uint32_t>(idle_.size()); };
  while (live() < need) {
    if (cancel.load() || shut_down_) return absl::CancelledError("master is shutting down");
    if (o.acquire_timeout.count() > 0 && Clock::now() - start >= o.acquire_timeout) {
      return absl::DeadlineExceededError(
          absl::StrCat("unable to reserve ", need, " worker", need == 1 ? "" : "s", " within ",
                       o.acquire_timeout.count(), " ms (", idle_.size(), " connected)"));
    }
    changed_.wait_for(lock, std::chrono::milliseconds(50));
  }
  if (o.last_call.count() > 0) {
    const auto deadline = Clock::now() + o.last_call;
    while (Clock::now() < deadline && (o.max_workers == 0 || live() < o.max_workers)) {
      if (cancel.load() || shut_down_) return absl::CancelledError("master is shutting down");
      changed_.wait_for(lock, std::chrono::milliseconds(50));
    }
    if (live() < need) return absl::UnavailableError("workers left during the last call");
  }
  std::vector<std::shared_ptr<WorkerSession>> taken;
  while (!idle_.empty() && (o.max_workers == 0 || taken.size() < o.max_workers)) {
    taken.push_back(std::move(idle_.front().second));
    idle_.pop_front();
  }
  lock.unlock();
  for (auto& s : taken) s->Detach();
  return taken;
}

size_t WorkerPool::idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_.size();
}

void WorkerPool::ShutDown() {
  std::list<std::pair<uint32_t, std::shared_ptr<WorkerSession>>> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shut_down_ = true;
    idle.swap(idle_);
    changed_.notify_all();
  }
  for (auto& [id, s] : idle) {
    s->Detach();
    // An idle worker has nothing to finish: end its stream now, with the reason.
    s->Close(grpc::Status(grpc::StatusCode::UNAVAILABLE, "master is shutting down"));
    s->ForceClose();
  }
}

// --- MasterServer

// --- StatusBoard

void StatusBoard::Begin(const std::string& job_id, const std::string& app, uint64_t bound) {
  std::lock_guard<std::mutex> lock(mu_);
  running_ = true;
  job_id_ = job_id;
  app_ = app;
  bound_ = bound;
  superstep_ = active_ = steps_ = 0;
  step_seconds_ = 0;
  started_ = std::chrono::steady_clock::now();
  names_.clear();
  seconds_.clear();
}

void StatusBoard::Step(const MasterProgress& p) {
  std::lock_guard<std::mutex> lock(mu_);
  superstep_ = p.global.superstep;
  active_ = p.global.active;
  ++steps_;
  step_seconds_ += p.seconds;
  names_ = p.worker_names;
  seconds_ = p.worker_seconds;
}

void StatusBoard::End() {
  std::lock_guard<std::mutex> lock(mu_);
  running_ = false;
}

v1::StatusReply StatusBoard::Reply(uint32_t connected) const {
  std::lock_guard<std::mutex> lock(mu_);
  v1::StatusReply r;
  r.set_running(running_);
  r.set_job_id(job_id_);
  r.set_app(app_);
  r.set_superstep(superstep_);
  r.set_active(active_);
  r.set_elapsed_seconds(
      running_ || steps_ > 0
          ? std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count()
          : 0);
  r.set_max_supersteps(bound_);
  double remaining = -1;
  if (running_ && bound_ > 0 && steps_ > 0) {
    const uint64_t left = bound_ > superstep_ + 1 ? bound_ - superstep_ - 1 : 0;
    remaining = static_cast<double>(left) * step_seconds_ / static_cast<double>(steps_);
  }
  r.set_remaining_seconds(remaining);
  r.set_workers_connected(connected);
  for (size_t w = 0; w < seconds_.size(); ++w) {
    v1::WorkerTime* t = r.add_workers();
    t->set_name(w < names_.size() ? names_[w] : absl::StrCat("worker ", w));
    t->set_last_step_seconds(seconds_[w]);
  }
  return r;
}

// A stream refused before it joins the pool: finished at once.
class RefusedStream final : public grpc::ServerBidiReactor<v1::WorkerPayload, v1::MasterPayload> {
 public:
  explicit RefusedStream(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

// A client stream answered at once, without reading a message of it.
template <typename Request>
class Answered final : public grpc::ServerReadReactor<Request> {
 public:
  explicit Answered(const grpc::Status& status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

// The workers connected at once, in all and by address (ConnectionLimits), shared with the tickets
// their sessions hold: a session's end releases its place, whenever it comes.
class MasterServer::Admissions : public std::enable_shared_from_this<Admissions> {
 public:
  // A ticket for a worker from `peer` (gRPC's "ipv4:HOST:PORT"), or why it is refused.
  std::shared_ptr<void> Admit(const std::string& peer, const ConnectionLimits& limits,
                              grpc::Status& refused) {
    std::string host = peer;
    if (const size_t colon = host.rfind(':'); colon != std::string::npos) host.resize(colon);
    std::lock_guard<std::mutex> lock(mu_);
    if (total_ >= limits.max_pool_workers) {
      refused = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                             absl::StrCat("the master has ", total_, " workers connected (",
                                          SettingName(Setting::kMaxPoolWorkers), ")"));
      return nullptr;
    }
    uint32_t& mine = by_host_[host];
    if (mine >= limits.max_conns_per_ip) {
      refused = grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrCat("the master has ", mine, " workers connected from this address (",
                       SettingName(Setting::kMaxConnsPerIp), ")"));
      return nullptr;
    }
    ++mine;
    ++total_;
    return std::shared_ptr<void>(nullptr, [self = shared_from_this(), host](void*) {
      std::lock_guard<std::mutex> released(self->mu_);
      --self->total_;
      if (--self->by_host_[host] == 0) self->by_host_.erase(host);
    });
  }

 private:
  std::mutex mu_;
  uint32_t total_ = 0;
  std::map<std::string, uint32_t> by_host_;

 public:
  uint32_t total() {
    std::lock_guard<std::mutex> lock(mu_);
    return total_;
  }
};

class MasterServer::Service final : public v1::JobQueue::CallbackService {
 public:
  Service(WorkerPool& pool, const Security& security, const StatusBoard& status)
      : pool_(pool),
        security_(security),
        status_(status),
        admissions_(std::make_shared<Admissions>()) {}

  grpc::ServerReadReactor<v1::StatusRequest>* Status(grpc::CallbackServerContext* context,
                                                     v1::StatusReply* reply) override {
    if (!Admitted(security_, *context)) {
      LogRefused(context->peer(), "no valid join token (status)");
      return new Answered<v1::StatusRequest>(
          grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no valid join token"));
    }
    *reply = status_.Reply(connected());
    return new Answered<v1::StatusRequest>(grpc::Status::OK);
  }
  uint32_t connected() const { return admissions_->total(); }

  grpc::ServerBidiReactor<v1::WorkerPayload, v1::MasterPayload>* JobStream(
      grpc::CallbackServerContext* context) override {
    if (!Admitted(security_, *context)) {
      LogRefused(context->peer(), "no valid join token");
      return new RefusedStream(
          grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no valid join token"));
    }
    grpc::Status refused;
    std::shared_ptr<void> ticket = admissions_->Admit(context->peer(), security_.limits(), refused);
    if (refused.error_code() != grpc::StatusCode::OK) {
      LogRefused(context->peer(), refused.error_message());
      return new RefusedStream(refused);
    }
    std::string advertised;
    const auto& metadata = context->client_metadata();
    if (auto it = metadata.find(kPeerAddressKey); it != metadata.end()) {
      advertised.assign(it->second.data(), std::min<size_t>(it->second.size(), 256));
    }
    auto session = std::make_shared<WorkerSession>(
        context->peer(), PeerAddressFor(advertised, context->peer()), pool_);
    session->Start(std::move(ticket));
    return session.get();
  }

 private:
  void LogRefused(const std::string& peer, const std::string& why) {
    if (auto suffix = refusals_.Admit()) {
      spdlog::warn("refused a worker from {}: {}{}", bsp::SanitizeForLog(peer, 128), why, *suffix);
    }
  }

  WorkerPool& pool_;
  const Security& security_;
  const StatusBoard& status_;
  const std::shared_ptr<Admissions> admissions_;
  LogLimit refusals_;
};

MasterServer::MasterServer(std::shared_ptr<const Security> security)
    : security_(std::move(security)),
      service_(std::make_unique<Service>(pool_, *security_, status_)) {}

MasterServer::~MasterServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<MasterServer>> MasterServer::Start(
    const std::string& address, std::shared_ptr<const Security> security) {
  std::unique_ptr<MasterServer> s(new MasterServer(std::move(security)));
  grpc::ServerBuilder builder;
  ConfigureServer(builder, *s->security_);
  builder.AddListeningPort(address, s->security_->ServerCredentials(), &s->port_);
  builder.RegisterService(s->service_.get());
  builder.RegisterService(&s->health_);
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat(SettingName(Setting::kListen), ": cannot listen on ", address));
  }
  return s;
}

uint32_t MasterServer::connected() const { return service_->connected(); }

void MasterServer::Shutdown() {
  if (!server_) return;
  pool_.ShutDown();
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_.reset();
}

}  // namespace lockstep::dbsp::transport
