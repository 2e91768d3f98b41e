// A burst of connections that never speak, against a process whose hard limit of open files is
// low (docs/design.md §11): the master, and a worker's peer port, refuse what is over their share
// while the burst lasts and accept again as soon as it has gone; a job then runs as `run` does.
// Before the accept guard, 1,100 silent connections against a hard limit of 1,024 left gRPC's
// listener dead for good ("Failed accept4: Too many open files").
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "util/lockstep_process.h"
#include "util/temp_dir.h"

namespace lockstep {
namespace {

using test::Process;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

const std::string kGraph = std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el";
constexpr int kBurst = 1100;

std::vector<std::string> Join(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A TCP connection to `port` on loopback that says nothing, or -1.
int SilentConnection(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

class DescriptorBurstTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    // This process holds the burst's ends: it needs more descriptors than the target has.
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved_), 0);
    rlimit raised = saved_;
    raised.rlim_cur = std::max<rlim_t>(raised.rlim_cur, 4096);
    raised.rlim_max = std::max<rlim_t>(raised.rlim_max, raised.rlim_cur);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &raised), 0)
        << "raising this test's own limit of open files to 4,096 (CI runs as root)";
    if (GetParam()) {
      const std::string cmd = std::string(LOCKSTEP_SOURCE_DIR) + "/scripts/make-certs.sh " +
                              dir_.File("certs") + " --token > /dev/null";
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
  }
  void TearDown() override { ::setrlimit(RLIMIT_NOFILE, &saved_); }

  // TLS and the token for certificate `name` when the parameter says so, else nothing.
  std::vector<std::string> Secured(const std::string& name) const {
    if (!GetParam()) return {};
    const std::string d = dir_.File("certs");
    return {"--tls-cert", d + "/" + name + ".pem", "--tls-key",    d + "/" + name + ".key",
            "--tls-ca",   d + "/ca.pem",           "--token-file", d + "/token"};
  }

  // Opens kBurst silent connections to `port`, holds them 3 s, closes them.
  void Burst(int port) {
    std::vector<int> fds;
    for (int i = 0; i < kBurst; ++i) {
      const int fd = SilentConnection(port);
      ASSERT_GE(fd, 0) << "connection " << i;
      fds.push_back(fd);
    }
    std::this_thread::sleep_for(3s);
    for (int fd : fds) ::close(fd);
  }

  std::vector<std::string> LocalAnswer() {
    const Process p =
        procs_.Run({"run", "pagerank", "--graph", kGraph, "--out", dir_.File("local")});
    EXPECT_EQ(p.exit_code, 0) << p.err;
    return test::SortedLines(test::ReadWholeFile(dir_.File("local")));
  }

  rlimit saved_{};
  test::TempDir dir_{"lockstep-descriptors"};
  test::LockstepProcesses procs_{dir_, LOCKSTEP_BINARY};
  // The target of the burst: a hard limit of 1,024 open files, which it cannot raise.
  test::LockstepProcesses limited_{
      dir_, LOCKSTEP_BINARY, {"/usr/bin/prlimit", "--nofile=1024:1024"}};
};

TEST_P(DescriptorBurstTest, AMasterAcceptsAgainOnceTheBurstHasGone) {
  const std::vector<std::string> want = LocalAnswer();
  const pid_t master = limited_.StartMaster(
      "m", Join({"--app", "pagerank", "--graph", kGraph, "--out", dir_.File("m.out"),
                 "--min-workers", "2", "--acquire-timeout", "60s"},
                Secured("master")));
  const std::string port = procs_.Port("m");
  ASSERT_FALSE(port.empty()) << test::ReadWholeFile(dir_.File("m.err"));
  Burst(std::stoi(port));
  // Serving again within 2 s of the burst's end.
  const auto left = std::chrono::steady_clock::now();
  bool serving = false;
  while (!serving && std::chrono::steady_clock::now() - left < 2s) {
    const Process h =
        procs_.Run(Join({"health", "127.0.0.1:" + port, "--timeout", "500ms"}, Secured("worker")));
    serving = h.exit_code == 0;
  }
  EXPECT_TRUE(serving) << "the master's health service did not answer within 2 s of the burst";
  // A worker that arrives now is admitted and the job completes.
  const auto workers =
      procs_.StartWorkers("m", 2, Join({"--max-jobs", "1", "--threads", "1"}, Secured("worker")));
  const Process m = procs_.Wait(master, "m.err");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_THAT(m.err, Not(HasSubstr("Too many open files")));
  EXPECT_THAT(m.err, HasSubstr("refused a connection: too many connections not yet admitted"));
  EXPECT_EQ(test::PartLines(dir_.File("m.out")), want);
  procs_.WaitWorkers("m", workers);
}

// The port of the worker whose log is `err`, once it says it serves peers.
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

TEST_P(DescriptorBurstTest, AWorkersPeerPortAcceptsAgainOnceTheBurstHasGone) {
  const std::vector<std::string> want = LocalAnswer();
  const pid_t master = procs_.StartMaster(
      "p", Join({"--app", "pagerank", "--graph", kGraph, "--out", dir_.File("p.out"),
                 "--min-workers", "2", "--acquire-timeout", "60s", "--relay", "direct"},
                Secured("master")));
  // The first worker, with the low limit, waits in the pool while its peer port takes the burst.
  const pid_t first =
      limited_.Start(Join({"worker", "--master", "127.0.0.1:" + procs_.Port("p"), "--max-jobs", "1",
                           "--threads", "1", "--peer-listen", "127.0.0.1:0"},
                          Secured("worker")),
                     "p-worker0.err");
  const int peer_port = PeerPort(dir_.File("p-worker0.err"));
  ASSERT_GT(peer_port, 0) << test::ReadWholeFile(dir_.File("p-worker0.err"));
  Burst(peer_port);
  // The second worker makes the job start; the two exchange their messages directly.
  const auto second = procs_.StartWorkers(
      "p", 1,
      Join({"--max-jobs", "1", "--threads", "1", "--peer-listen", "127.0.0.1:0"},
           Secured("worker")),
      /*first=*/1);
  const Process m = procs_.Wait(master, "p.err");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(test::PartLines(dir_.File("p.out")), want);
  const Process w = procs_.Wait(first, "p-worker0.err");
  EXPECT_EQ(w.exit_code, 0) << w.err;
  EXPECT_THAT(w.err, Not(HasSubstr("Too many open files")));
  EXPECT_THAT(w.err, HasSubstr("refused a connection: too many connections not yet admitted"));
  procs_.WaitWorkers("p", second, 1);
}

INSTANTIATE_TEST_SUITE_P(PlainAndSecured, DescriptorBurstTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "TlsAndToken" : "Plain"; });

}  // namespace
}  // namespace lockstep
