// A worker's peer port checks a caller's join token before it reads the caller's batch
// (docs/design.md §11): 30 callers without the token, each sending a 60 MB batch at once, cost
// the worker little memory. A unary call's request is read whole before its handler runs; with
// that, the same callers made a worker hold some 330 MB.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lockstep/v1/jobqueue.grpc.pb.h"
#include "util/lockstep_process.h"
#include "util/temp_dir.h"

namespace lockstep {
namespace {

using namespace std::chrono_literals;

// The peak resident memory of process `pid`, in kB (VmHWM).
long PeakKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

int PeerPort(const std::string& err) {
  static const std::regex said("serving peers on port ([0-9]+)");
  for (int i = 0; i < 1000; ++i) {
    std::smatch m;
    const std::string text = test::ReadWholeFile(err);
    if (std::regex_search(text, m, said)) return std::stoi(m[1]);
    std::this_thread::sleep_for(10ms);
  }
  return -1;
}

TEST(PeerPortTest, CallersWithoutTheTokenAreRefusedBeforeTheirBatchIsRead) {
  test::TempDir dir("lockstep-peer-port");
  test::LockstepProcesses procs(dir, LOCKSTEP_BINARY);
  const std::string token = dir.Write("token", "the-clusters-token\n");
  const std::string graph = std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el";
  // The worker waits in the pool for a second worker that never comes.
  const pid_t master = procs.StartMaster(
      "m", {"--app", "pagerank", "--graph", graph, "--out", dir.File("m.out"), "--min-workers", "2",
            "--acquire-timeout", "120s", "--token-file", token});
  const pid_t worker =
      procs.Start({"worker", "--master", "127.0.0.1:" + procs.Port("m"), "--token-file", token,
                   "--peer-listen", "127.0.0.1:0", "--threads", "1"},
                  "worker.err");
  const int port = PeerPort(dir.File("worker.err"));
  ASSERT_GT(port, 0) << test::ReadWholeFile(dir.File("worker.err"));
  const long before = PeakKb(worker);

  v1::PeerBatch batch;
  batch.set_job_key(std::string(16, 'k'));
  batch.mutable_chunk()->set_data(std::string(60'000'000, 'x'));
  std::vector<grpc::Status> results(30);
  std::vector<std::thread> callers;
  for (size_t i = 0; i < results.size(); ++i) {
    callers.emplace_back([&, i] {
      grpc::ChannelArguments args;
      args.SetMaxSendMessageSize(-1);
      // A channel each, as 30 hosts would call.
      args.SetInt("lockstep.test.caller", static_cast<int>(i));
      auto channel = grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                               grpc::InsecureChannelCredentials(), args);
      auto stub = v1::PeerExchange::NewStub(channel);
      grpc::ClientContext context;
      context.AddMetadata("lockstep-token", "a-wrong-token");
      context.set_deadline(std::chrono::system_clock::now() + 60s);
      v1::PeerAck ack;
      auto writer = stub->Deliver(&context, &ack);
      writer->Write(batch);
      writer->WritesDone();
      results[i] = writer->Finish();
    });
  }
  for (std::thread& t : callers) t.join();
  const long after = PeakKb(worker);
  for (const grpc::Status& st : results) {
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED) << st.error_message();
  }
  ASSERT_GT(before, 0);
  // Less than one refused batch (measured: about 1 MB; reading each whole, 1.2 GB).
  EXPECT_LT(after - before, 64'000)
      << "peak resident memory grew from " << before << " kB to " << after << " kB";
  ::kill(worker, SIGTERM);
  ::kill(master, SIGTERM);
  procs.Wait(worker, "worker.err");
  procs.Wait(master, "m.err");
  EXPECT_THAT(test::ReadWholeFile(dir.File("worker.err")),
              ::testing::HasSubstr("refused a call from ipv4:127.0.0.1:"));
}

}  // namespace
}  // namespace lockstep
