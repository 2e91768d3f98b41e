#include "transport/master_link.h"

#include "transport/peer.h"

namespace lockstep::dbsp::transport {

using Clock = std::chrono::steady_clock;

// Operations started outside a reaction (StartRead in SetHandler, StartWrite in Send, WritesDone
// in Finish) happen while the hold taken in Start() keeps the RPC alive; no lock of ours is held
// while an operation starts, since a reaction may run inline.

MasterLink::MasterLink(v1::JobQueue::Stub& stub, size_t outbox_bytes)
    : stub_(stub), outbox_bytes_(outbox_bytes) {}

MasterLink::~MasterLink() {
  bool done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done = done_;
  }
  if (!done) Finish(std::chrono::milliseconds(0));
}

void MasterLink::Start(const std::string& peer_address, const Security& security) {
  if (!peer_address.empty()) context_.AddMetadata(kPeerAddressKey, peer_address);
  security.Sign(context_);
  stub_.async()->JobStream(&context_, this);
  AddHold();
  StartRead(&in_);
  StartCall();
}

std::optional<v1::MasterPayload> MasterLink::AwaitFirst(const std::atomic<bool>& stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!first_ && !read_ended_ && !stop.load()) {
    changed_.wait_for(lock, std::chrono::milliseconds(20));
  }
  if (!first_) return std::nullopt;
  first_taken_ = true;
  v1::MasterPayload first = std::move(*first_);
  first_.reset();
  return first;
}

void MasterLink::SetHandler(MasterStreamHandler* handler) {
  bool ended;
  {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = handler;
    first_taken_ = true;
    ended = read_ended_;
  }
  if (ended) {
    handler->OnHangUp("the master closed the stream");
  } else {
    StartRead(&in_);
  }
}

void MasterLink::OnReadDone(bool ok) {
  MasterStreamHandler* handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    handler = handler_;
    if (!ok) {
      read_ended_ = true;
      changed_.notify_all();
    } else if (handler == nullptr) {
      // The first payload: the worker looks at it before it reads on (SetHandler).
      first_ = std::move(in_);
      changed_.notify_all();
      return;
    }
  }
  if (!ok) {
    if (handler != nullptr) handler->OnHangUp("the master closed the stream");
    return;
  }
  handler->OnPayload(in_);
  in_.Clear();
  StartRead(&in_);
}

bool MasterLink::Send(v1::WorkerPayload payload) {
  const size_t size = payload.ByteSizeLong();
  const v1::WorkerPayload* next = nullptr;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Back-pressure by bytes; one payload always fits, however large.
    changed_.wait(lock, [&] {
      return broken_ || closing_ || queued_bytes_ == 0 || queued_bytes_ + size <= outbox_bytes_;
    });
    if (broken_ || closing_) return false;
    outbox_.emplace_back(std::move(payload), size);
    queued_bytes_ += size;
    if (!writing_) StartNextWriteLocked(&next);
  }
  if (next != nullptr) StartWrite(next);
  return true;
}

void MasterLink::StartNextWriteLocked(const v1::WorkerPayload** next) {
  writing_ = true;
  write_started_ = Clock::now();
  *next = &outbox_.front().first;  // deque: stays put while others are pushed behind it
}

void MasterLink::OnWriteDone(bool ok) {
  const v1::WorkerPayload* next = nullptr;
  bool writes_done = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    writes_.Add(Clock::now() - write_started_);
    queued_bytes_ -= outbox_.front().second;
    outbox_.pop_front();
    writing_ = false;
    if (!ok) {
      broken_ = true;
      outbox_.clear();
      queued_bytes_ = 0;
    } else if (!outbox_.empty()) {
      StartNextWriteLocked(&next);
    } else if (closing_ && !writes_done_) {
      writes_done_ = writes_done = true;
    }
    changed_.notify_all();
  }
  if (next != nullptr) StartWrite(next);
  if (writes_done) StartWritesDone();
}

void MasterLink::OnWritesDoneDone(bool) {}

grpc::Status MasterLink::Finish(std::chrono::milliseconds grace) {
  bool writes_done = false;
  bool release = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    changed_.notify_all();
    if (!writing_ && !writes_done_ && !broken_) writes_done_ = writes_done = true;
    release = held_;
    held_ = false;
  }
  if (writes_done) StartWritesDone();
  if (release) RemoveHold();  // from here on only reactions start operations
  std::unique_lock<std::mutex> lock(mu_);
  if (!changed_.wait_for(lock, grace, [&] { return done_; })) {
    lock.unlock();
    context_.TryCancel();
    lock.lock();
    changed_.wait(lock, [&] { return done_; });  // OnDone follows a cancellation promptly
  }
  return status_;
}

void MasterLink::OnDone(const grpc::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  status_ = status;
  done_ = true;
  broken_ = true;
  changed_.notify_all();
}

}  // namespace lockstep::dbsp::transport
