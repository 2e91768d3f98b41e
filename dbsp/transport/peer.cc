#include "transport/peer.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "lockstep/dbsp/settings.h"
#include "spdlog/spdlog.h"
#include "transport/admission.h"
#include "transport/grpc_options.h"

namespace lockstep::dbsp::transport {

namespace {
// How gRPC's pick_first policy begins the status of a call it could not send for want of a
// connection.
constexpr char kNoConnection[] = "failed to connect to all addresses";
}  // namespace

using Clock = std::chrono::steady_clock;

std::string PeerAddressFor(std::string_view advertised, std::string_view stream_peer) {
  if (advertised.empty()) return "";
  if (advertised.front() != ':') return std::string(advertised);
  // gRPC names a TCP peer "ipv4:HOST:PORT" or "ipv6:[HOST]:PORT".
  std::string_view host;
  if (stream_peer.starts_with("ipv4:") || stream_peer.starts_with("ipv6:")) {
    host = stream_peer.substr(5);
    const size_t colon = host.rfind(':');
    if (colon == std::string_view::npos) return "";
    host = host.substr(0, colon);
  }
  if (host.empty()) return "";
  return absl::StrCat(std::string(host), std::string(advertised));
}

// --- PeerServer

// One call: the caller's token is checked before its batch is read, so a caller without it
// sends no more than HTTP/2's flow-control window before the call ends.
class PeerServer::Receiver final : public grpc::ServerReadReactor<v1::PeerBatch> {
 public:
  Receiver(PeerServer& server, grpc::CallbackServerContext& context)
      : server_(server), peer_(context.peer()) {
    if (!Admitted(*server_.security_, context)) {
      server_.Refuse(peer_);
      Finish(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no valid join token"));
      return;
    }
    StartRead(&batch_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "a call without a batch"));
      return;
    }
    // The batch is ours until Finish: the handler moves its bytes out rather than copying them.
    Finish(server_.Dispatch(batch_, peer_));
  }
  void OnDone() override { delete this; }

 private:
  PeerServer& server_;
  const std::string peer_;
  v1::PeerBatch batch_;
};

class PeerServer::Service final : public v1::PeerExchange::CallbackService {
 public:
  explicit Service(PeerServer& server) : server_(server) {}

  grpc::ServerReadReactor<v1::PeerBatch>* Deliver(grpc::CallbackServerContext* context,
                                                  v1::PeerAck*) override {
    return new Receiver(server_, *context);
  }

 private:
  PeerServer& server_;
};

PeerServer::PeerServer() : service_(std::make_unique<Service>(*this)) {}

PeerServer::~PeerServer() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

absl::StatusOr<std::unique_ptr<PeerServer>> PeerServer::Start(
    const std::string& address, std::shared_ptr<const Security> security) {
  std::unique_ptr<PeerServer> s(new PeerServer());
  s->security_ = std::move(security);
  grpc::ServerBuilder builder;
  ConfigureServer(builder, *s->security_);
  builder.AddListeningPort(address, s->security_->ServerCredentials(), &s->port_);
  builder.RegisterService(s->service_.get());
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat(SettingName(Setting::kPeerListen), ": cannot listen on ", address));
  }
  return s;
}

void PeerServer::Refuse(const std::string& peer) {
  // A peer that keeps trying (from new ports) does not flood the log.
  if (auto suffix = refusals_.Admit()) {
    spdlog::warn("refused a call from {}: no valid join token{}", bsp::SanitizeForLog(peer, 128),
                 *suffix);
  }
}

void PeerServer::Register(const std::string& key, PeerBatchHandler* handler) {
  std::lock_guard<std::mutex> lock(mu_);
  key_ = key;
  handler_ = handler;
}

void PeerServer::Unregister() {
  std::unique_lock<std::mutex> lock(mu_);
  key_.clear();
  handler_ = nullptr;
  idle_.wait(lock, [&] { return calls_in_handler_ == 0; });
}

grpc::Status PeerServer::Dispatch(v1::PeerBatch& batch, const std::string& peer) {
  PeerBatchHandler* handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (handler_ == nullptr || batch.job_key() != key_) {
      if (batch.job_key() != last_refused_key_) {
        last_refused_key_ = batch.job_key();
        // With no job here, a peer that started the job first is the usual cause (it retries):
        // logged at debug level. A batch for another job while one runs is a warning.
        const auto level = handler_ == nullptr ? spdlog::level::debug : spdlog::level::warn;
        spdlog::log(level, "refused a batch from {} for a job that is not running here",
                    bsp::SanitizeForLog(peer, 128));
      }
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "no job with this key runs on this worker");
    }
    handler = handler_;
    ++calls_in_handler_;
  }
  grpc::Status status = handler->OnPeerBatch(batch, peer);
  std::lock_guard<std::mutex> lock(mu_);
  if (--calls_in_handler_ == 0) idle_.notify_all();
  return status;
}

// --- PeerChannels

std::shared_ptr<grpc::Channel> PeerChannels::Get(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& channel = channels_[address];
  if (!channel) {
    channel = grpc::CreateCustomChannel(address, security_->ChannelCredentials(),
                                        ClientChannelArguments(*security_));
  }
  return channel;
}

void PeerChannels::Retain(const std::vector<std::string>& keep) {
  const std::set<std::string> wanted(keep.begin(), keep.end());
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(channels_, [&](const auto& entry) { return !wanted.contains(entry.first); });
}

// --- PeerLinks

struct PeerLinks::Call {
  uint32_t to = 0;
  size_t bytes = 0;
  Clock::time_point first_try;
  Clock::time_point next_try;
  std::optional<Clock::time_point> first_unconnected;  // its first failure to connect
  std::chrono::milliseconds backoff{5};
  std::shared_ptr<grpc::ClientContext> context;  // shared with a cancellation under way
  v1::PeerBatch request;
  v1::PeerAck response;
};

PeerLinks::PeerLinks(PeerChannels& channels, std::vector<std::string> addresses, uint32_t self,
                     std::string job_key, size_t inflight_bytes, std::chrono::milliseconds timeout)
    : security_(channels.security()),
      addresses_(std::move(addresses)),
      self_(self),
      key_(std::move(job_key)),
      inflight_limit_(inflight_bytes),
      timeout_(timeout) {
  stubs_.resize(addresses_.size());
  for (uint32_t w = 0; w < addresses_.size(); ++w) {
    if (w != self_) stubs_[w] = v1::PeerExchange::NewStub(channels.Get(addresses_[w]));
  }
  retry_thread_ = std::thread([this] { RetryLoop(); });
}

PeerLinks::~PeerLinks() {
  Cancel(absl::CancelledError("the job is over"));
  {
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;  // (only the retry thread waits for it)
    retry_changed_.notify_all();
  }
  retry_thread_.join();
  std::unique_lock<std::mutex> lock(mu_);
  for (Call* call : retries_) {
    --inflight_calls_;
    delete call;
  }
  retries_.clear();
  changed_.wait(lock, [&] { return inflight_calls_ == 0; });
}

std::string PeerLinks::Name(uint32_t worker) const {
  return absl::StrCat("worker ", worker, " (", addresses_[worker], ")");
}

absl::Status PeerLinks::Send(uint32_t to, v1::PeerBatch batch) {
  if (to >= addresses_.size() || to == self_) {
    return absl::InternalError(absl::StrCat("no peer ", to, " to send a batch to"));
  }
  batch.set_job_key(key_);
  batch.set_from(self_);
  batch.set_to(to);
  auto call = std::make_unique<Call>();
  call->to = to;
  call->bytes = batch.ByteSizeLong();
  call->request = std::move(batch);
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Back-pressure by bytes; one batch always goes, however large.
    WaitReporting(lock, [&] {
      return !status_.ok() || inflight_bytes_ == 0 ||
             inflight_bytes_ + call->bytes <= inflight_limit_;
    });
    if (!status_.ok()) return status_;
    inflight_bytes_ += call->bytes;
    ++inflight_calls_;
    sent_bytes_ += call->bytes;
    ++sent_batches_;
  }
  call->first_try = Clock::now();
  Start(call.release());
  return absl::OkStatus();
}

// One try of a call: the batch written as the stream's only message.
class PeerLinks::Attempt final : public grpc::ClientWriteReactor<v1::PeerBatch> {
 public:
  Attempt(PeerLinks& links, Call* call) : links_(links), call_(call) {}
  void Begin(v1::PeerExchange::Stub& stub) {
    stub.async()->Deliver(call_->context.get(), &call_->response, this);
    StartWriteLast(&call_->request, grpc::WriteOptions());
    StartCall();
  }
  void OnDone(const grpc::Status& status) override {
    links_.OnDone(call_, status);
    delete this;
  }

 private:
  PeerLinks& links_;
  Call* const call_;
};

void PeerLinks::Start(Call* call) {
  call->context = std::make_shared<grpc::ClientContext>();
  security_.Sign(*call->context);
  if (timeout_.count() > 0) {
    // gRPC takes a system-clock deadline.
    const auto left = std::chrono::duration_cast<std::chrono::system_clock::duration>(
        call->first_try + timeout_ - Clock::now());
    call->context->set_deadline(std::chrono::system_clock::now() + left);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) {
      // Cancelled meanwhile: the call ends here.
      inflight_bytes_ -= call->bytes;
      --inflight_calls_;
      delete call;
      changed_.notify_all();
      return;
    }
    calls_.push_back(call);
  }
  (new Attempt(*this, call))->Begin(*stubs_[call->to]);
}

void PeerLinks::SetFailureListener(std::function<void(const absl::Status&)> listener) {
  // Under listener_mu_: once this returns, the old listener is not running and never will.
  std::lock_guard<std::mutex> lock(listener_mu_);
  on_failure_ = std::move(listener);
}

void PeerLinks::OnDone(Call* call, const grpc::Status& status) {
  bool failed;
  absl::Status failure;
  std::vector<std::shared_ptr<grpc::ClientContext>> others;
  {
    std::lock_guard<std::mutex> lock(mu_);
    failed = OnDoneLocked(call, status);
    failure = status_;
    if (failed) others = InFlightLocked();
  }
  if (!failed) return;
  for (auto& context : others) context->TryCancel();
  std::lock_guard<std::mutex> lock(listener_mu_);
  if (on_failure_) on_failure_(failure);
}

bool PeerLinks::OnDoneLocked(Call* call, const grpc::Status& status) {
  std::erase(calls_, call);
  const auto now = Clock::now();
  // The receiver does not run this job yet (it is still reading its assignment): ask again.
  const bool not_yet = status.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
  // The call found no connection to the receiver, so it was never sent (pick_first's failed
  // pick; any other UNAVAILABLE may have reached the receiver and is not sent twice).
  const bool unconnected = status.error_code() == grpc::StatusCode::UNAVAILABLE &&
                           absl::StartsWith(status.error_message(), kNoConnection);
  if (unconnected && !call->first_unconnected) call->first_unconnected = now;
  const bool within_grace =
      !unconnected || now + call->backoff < *call->first_unconnected + kConnectGrace;
  if (status_.ok() && (not_yet || unconnected) && within_grace &&
      (timeout_.count() == 0 || now + call->backoff < call->first_try + timeout_)) {
    call->next_try = now + call->backoff;
    call->backoff = std::min(call->backoff * 2, std::chrono::milliseconds(200));
    retries_.push_back(call);
    retry_changed_.notify_all();
    return false;
  }
  bool failed = false;
  if (!status.ok() && status_.ok()) {
    failed = true;
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
        status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      unreachable_ = call->to;
    }
    status_ = absl::UnavailableError(absl::StrCat(
        Name(call->to), " did not take a batch: ", bsp::SanitizeForLog(status.error_message(), 512),
        status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
            ? absl::StrCat(" (deadline: ", SettingName(Setting::kPeerTimeout), ")")
            : std::string()));
  }
  inflight_bytes_ -= call->bytes;
  --inflight_calls_;
  delete call;
  changed_.notify_all();
  return failed;
}

void PeerLinks::RetryLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (retries_.empty() || !status_.ok()) {
      retry_changed_.wait(lock);
      continue;
    }
    Call* call = retries_.front();
    if (const Clock::time_point next = call->next_try; Clock::now() < next) {
      // (A copy: Cancel may delete the call while this waits, and the wait reads its deadline
      // again when it wakes.)
      retry_changed_.wait_until(lock, next);
      continue;
    }
    retries_.pop_front();
    lock.unlock();
    Start(call);
    lock.lock();
  }
}

absl::Status PeerLinks::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  WaitReporting(lock, [&] { return !status_.ok() || inflight_calls_ == 0; });
  return status_;
}

template <class Pred>
void PeerLinks::WaitReporting(std::unique_lock<std::mutex>& lock, Pred done) {
  if (done()) return;  // the usual case: no wait, no clock read
  if (changed_.wait_for(lock, kWaitingAfter, done) || !on_waiting_) {
    changed_.wait(lock, done);
    return;
  }
  std::vector<uint32_t> peers;
  for (const Call* call : calls_) peers.push_back(call->to);
  for (const Call* call : retries_) peers.push_back(call->to);
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  lock.unlock();
  on_waiting_(peers);
  lock.lock();
  changed_.wait(lock, done);
  // The wait is over: the master must not go on taking this worker for held up.
  lock.unlock();
  on_waiting_({});
  lock.lock();
}

std::vector<std::shared_ptr<grpc::ClientContext>> PeerLinks::InFlightLocked() const {
  std::vector<std::shared_ptr<grpc::ClientContext>> contexts;
  for (const Call* call : calls_) contexts.push_back(call->context);
  return contexts;
}

void PeerLinks::Cancel(absl::Status reason) {
  std::vector<std::shared_ptr<grpc::ClientContext>> in_flight;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = std::move(reason);
    in_flight = InFlightLocked();
    for (Call* call : retries_) {
      inflight_bytes_ -= call->bytes;
      --inflight_calls_;
      delete call;
    }
    retries_.clear();
    changed_.notify_all();
  }
  for (auto& context : in_flight) context->TryCancel();
}

absl::Status PeerLinks::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

std::optional<uint32_t> PeerLinks::unreachable() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unreachable_;
}

uint64_t PeerLinks::sent_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sent_bytes_;
}

uint64_t PeerLinks::sent_batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sent_batches_;
}

}  // namespace lockstep::dbsp::transport
