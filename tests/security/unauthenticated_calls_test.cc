// A caller without the join token is refused before what it sends is read (docs/design.md §11):
// 30 such callers sending 60 MB each at once cost a worker's peer port, or the master's status
// call, little memory. gRPC reads a unary call's request whole before its handler runs; so
// served, the same callers made a worker hold 1.2 GB.
#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <future>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
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

// Makes 30 calls at once of gRPC method `method` (its path) at `port` with the wrong token, each
// sending 60 MB (as a unary call: a rogue client needs no stub of ours), and returns their
// statuses.
std::vector<grpc::Status> CallWithoutTheToken(int port, const std::string& method) {
  grpc::ByteBuffer request;
  {
    // Field 15, length-delimited, 60,000,000 bytes: a field neither request knows.
    const std::string payload = std::string("\x7a\x80\x8e\xce\x1c") + std::string(60'000'000, 'x');
    grpc::Slice slice(payload);
    request = grpc::ByteBuffer(&slice, 1);
  }
  std::vector<grpc::Status> results(30);
  std::vector<std::thread> callers;
  for (size_t i = 0; i < results.size(); ++i) {
    callers.emplace_back([&, i] {
      grpc::ChannelArguments args;
      args.SetMaxSendMessageSize(-1);
      args.SetInt("lockstep.test.caller", static_cast<int>(i));  // a connection each
      grpc::GenericStub stub(grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                                       grpc::InsecureChannelCredentials(), args));
      grpc::ClientContext context;
      context.AddMetadata("lockstep-token", "a-wrong-token");
      context.set_deadline(std::chrono::system_clock::now() + 60s);
      grpc::ByteBuffer response;
      std::promise<grpc::Status> done;
      stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                     [&](grpc::Status st) { done.set_value(std::move(st)); });
      results[i] = done.get_future().get();
    });
  }
  for (std::thread& t : callers) t.join();
  return results;
}

class UnauthenticatedCallsTest : public ::testing::Test {
 protected:
  // A master waiting for a second worker that never comes, and its one worker in the pool.
  void SetUp() override {
    master_ = procs_.StartMaster(
        "m", {"--app", "pagerank", "--graph", std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el",
              "--out", dir_.File("m.out"), "--min-workers", "2", "--acquire-timeout", "120s",
              "--token-file", token_});
    worker_ = procs_.Start({"worker", "--master", "127.0.0.1:" + procs_.Port("m"), "--token-file",
                            token_, "--peer-listen", "127.0.0.1:0", "--threads", "1"},
                           "worker.err");
    peer_port_ = PeerPort(dir_.File("worker.err"));
    ASSERT_GT(peer_port_, 0) << test::ReadWholeFile(dir_.File("worker.err"));
  }
  void TearDown() override {
    ::kill(worker_, SIGTERM);
    ::kill(master_, SIGTERM);
    procs_.Wait(worker_, "worker.err");
    procs_.Wait(master_, "m.err");
  }

  // Sends the 30 calls to `method` at `port` of process `pid`; checks they are refused for want of
  // the token and that its peak memory grew by less than one of them (measured: about 1 MB).
  void ExpectRefusedUnread(pid_t pid, int port, const std::string& method) {
    const long before = PeakKb(pid);
    ASSERT_GT(before, 0);
    for (const grpc::Status& st : CallWithoutTheToken(port, method)) {
      EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED) << st.error_message();
    }
    const long after = PeakKb(pid);
    EXPECT_LT(after - before, 64'000)
        << method << ": peak resident memory grew from " << before << " kB to " << after << " kB";
  }

  test::TempDir dir_{"lockstep-unauthenticated"};
  test::LockstepProcesses procs_{dir_, LOCKSTEP_BINARY};
  const std::string token_ = dir_.Write("token", "the-clusters-token\n");
  pid_t master_ = -1;
  pid_t worker_ = -1;
  int peer_port_ = -1;
};

TEST_F(UnauthenticatedCallsTest, AWorkersPeerPortReadsNoBatchOfACallerWithoutTheToken) {
  ExpectRefusedUnread(worker_, peer_port_, "/lockstep.v1.PeerExchange/Deliver");
  EXPECT_THAT(test::ReadWholeFile(dir_.File("worker.err")),
              ::testing::HasSubstr("refused a call from ipv4:127.0.0.1:"));
}

TEST_F(UnauthenticatedCallsTest, TheMastersStatusReadsNoRequestOfACallerWithoutTheToken) {
  ExpectRefusedUnread(master_, std::stoi(procs_.Port("m")), "/lockstep.v1.JobQueue/Status");
}

}  // namespace
}  // namespace lockstep
