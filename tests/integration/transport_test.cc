// The master's transport on loopback: gRPC's callback API, so threads do not grow with streams
// (the synchronous server took two threads per stream: 200 streams cost 410 threads).
#include <dirent.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "lockstep/v1/jobqueue.grpc.pb.h"
#include "transport/grpc_options.h"
#include "transport/master_server.h"

namespace lockstep::dbsp::transport {
namespace {

using namespace std::chrono_literals;

size_t Threads() {
  size_t n = 0;
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  while (const dirent* e = ::readdir(dir)) n += e->d_name[0] != '.';
  ::closedir(dir);
  return n;
}

// A worker's stream that only waits in the pool.
class IdleStream final : public grpc::ClientBidiReactor<v1::WorkerPayload, v1::MasterPayload> {
 public:
  explicit IdleStream(v1::JobQueue::Stub& stub) {
    stub.async()->JobStream(&context_, this);
    StartRead(&in_);
    StartCall();
  }
  void OnReadDone(bool) override {}
  void OnDone(const grpc::Status&) override {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_all();
  }
  void CancelAndWait() {
    context_.TryCancel();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_; });
  }

 private:
  grpc::ClientContext context_;
  v1::MasterPayload in_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

TEST(TransportTest, TwoHundredStreamsDoNotGrowTheMastersThreads) {
  auto server = MasterServer::Start("127.0.0.1:0");
  ASSERT_TRUE(server.ok()) << server.status();
  auto channel =
      grpc::CreateCustomChannel("127.0.0.1:" + std::to_string((*server)->port()),
                                grpc::InsecureChannelCredentials(), ClientChannelArguments());
  auto stub = v1::JobQueue::NewStub(channel);
  // A first stream brings up what every stream shares (gRPC's pollers and callback executor).
  std::vector<std::unique_ptr<IdleStream>> streams;
  streams.push_back(std::make_unique<IdleStream>(*stub));
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       (*server)->pool().idle() < 1 && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(200ms);
  const size_t before = Threads();
  for (int i = 1; i < 200; ++i) streams.push_back(std::make_unique<IdleStream>(*stub));
  for (auto deadline = std::chrono::steady_clock::now() + 20s;
       (*server)->pool().idle() < 200 && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ((*server)->pool().idle(), 200u);
  const size_t after = Threads();
  std::cout << "threads of the process: " << before << " with 1 stream, " << after << " with 200\n";
  // Master and clients share this process: neither may add a thread per stream.
  EXPECT_LT(after, before + 20) << before << " threads with 1 stream, " << after << " with 200";
  for (auto& s : streams) s->CancelAndWait();
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       (*server)->pool().idle() > 0 && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ((*server)->pool().idle(), 0u) << "cancelled streams must leave the pool";
  (*server)->Shutdown();
}

}  // namespace
}  // namespace lockstep::dbsp::transport
