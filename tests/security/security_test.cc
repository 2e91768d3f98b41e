// A secured cluster (docs/design.md §11) as real processes: mutual TLS under certificates the
// suite makes with openssl (scripts/make-certs.sh) and the join token. A secured cluster answers
// as `lockstep run` does; workers without the authority's certificate or the token, plain text,
// and garbage on the port are refused while the master goes on to serve its job; a worker trusts
// no master its authority did not sign; bad security flags are usage errors.
#include "lockstep/dbsp/security.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/v1/jobqueue.grpc.pb.h"
#include "util/lockstep_process.h"
#include "util/temp_dir.h"

namespace lockstep {
namespace {

using test::Process;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kGraph = std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el";

// The suite's certificates: an authority with a master's and a worker's certificate and a token,
// and in other/ an authority of its own, as a stranger's cluster has.
test::TempDir* certs = nullptr;

void MakeCerts(const std::string& dir, const std::string& extra) {
  const std::string cmd = std::string(LOCKSTEP_SOURCE_DIR) + "/scripts/make-certs.sh " + dir + " " +
                          extra + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

class SecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    certs = new test::TempDir("lockstep-certs");
    MakeCerts(certs->path().string(), "--token");
    MakeCerts(certs->File("other"), "--token");
  }
  static void TearDownTestSuite() {
    delete certs;
    certs = nullptr;
  }

  // --tls-* flags for certificate NAME of the authority in `dir` ("" for the suite's own).
  static std::vector<std::string> Tls(const std::string& name, const std::string& dir = "") {
    const std::string d = dir.empty() ? certs->path().string() : certs->File(dir);
    return {"--tls-cert", d + "/" + name + ".pem", "--tls-key", d + "/" + name + ".key", "--tls-ca",
            d + "/ca.pem"};
  }
  static std::vector<std::string> Token(const std::string& file = "") {
    return {"--token-file", file.empty() ? certs->File("token") : file};
  }
  static std::vector<std::string> Join(std::vector<std::string> a,
                                       const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  // The graph's PageRank as `lockstep run` writes it, sorted.
  std::vector<std::string> LocalAnswer() {
    const Process p =
        procs_.Run({"run", "pagerank", "--graph", kGraph, "--out", dir_.File("local")});
    EXPECT_EQ(p.exit_code, 0) << p.err;
    return test::SortedLines(test::ReadWholeFile(dir_.File("local")));
  }

  // A master of one PageRank job on 2 workers, secured by `flags`.
  pid_t StartMaster(const std::string& name, const std::vector<std::string>& flags,
                    const std::string& acquire = "60s") {
    return procs_.StartMaster(
        name, Join({"--app", "pagerank", "--graph", kGraph, "--out", dir_.File(name + ".out"),
                    "--min-workers", "2", "--acquire-timeout", acquire},
                   flags));
  }

  test::TempDir dir_{"lockstep-security"};
  test::LockstepProcesses procs_{dir_, LOCKSTEP_BINARY};
};

// A TCP connection to `port` on loopback, or -1.
int ConnectLoopback(const std::string& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Connects to the master's port and writes `bytes` (not TLS), then closes.
void SendRaw(const std::string& port, const std::string& bytes) {
  const int fd = ConnectLoopback(port);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::close(fd);
}

TEST_F(SecurityTest, AClusterWithMutualTlsAndATokenAnswersAsRunDoes) {
  const std::vector<std::string> want = LocalAnswer();
  const pid_t master = StartMaster("tls", Join(Tls("master"), Token()));
  const auto workers = procs_.StartWorkers(
      "tls", 2, Join(Join({"--max-jobs", "1", "--threads", "1"}, Tls("worker")), Token()));
  const Process m = procs_.Wait(master, "tls.err");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_THAT(m.err, HasSubstr("master listening on 127.0.0.1:0: mutual TLS and a join token"));
  for (const Process& w : procs_.WaitWorkers("tls", workers)) {
    EXPECT_EQ(w.exit_code, 0) << w.err;
    // Without --data-root a worker says that a job may name any path.
    EXPECT_THAT(w.err, HasSubstr("no --data-root: a job may name any path"));
  }
  // The workers exchanged their messages directly, over TLS too.
  EXPECT_EQ(test::PartLines(dir_.File("tls.out")), want);
}

TEST_F(SecurityTest, RoguesAreRefusedAndTheMasterServesItsJob) {
  const std::vector<std::string> want = LocalAnswer();
  const std::string wrong_token = dir_.Write("wrong-token", "not-the-token\n");
  const pid_t master = StartMaster("m", Join(Tls("master"), Token()));
  const std::vector<std::string> once = {"--max-jobs", "1", "--threads", "1"};
  // Plain text; the right token without a certificate the authority signed; the right
  // certificate with a wrong token and with none.
  const std::vector<std::vector<std::string>> rogues = {
      Join(once, Token()),
      Join(Join(once, Tls("worker", "other")), Token()),
      Join(Join(once, Tls("worker")), Token(wrong_token)),
      Join(once, Tls("worker")),
  };
  std::vector<pid_t> rogue_pids;
  for (uint32_t r = 0; r < rogues.size(); ++r) {
    rogue_pids.push_back(procs_.StartWorkers("m", 1, rogues[r], 10 + r)[0]);
  }
  // Garbage, an HTTP/1 request and half an HTTP/2 preface on the port.
  const std::string port = procs_.Port("m");
  SendRaw(port, std::string("\x16\x03\x01\xff\xff garbage \x00\x01\x02", 20));
  SendRaw(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  SendRaw(port, "PRI * HTTP/2.0\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // Then the cluster's own workers: the job runs on them, and on nobody else.
  const auto workers = procs_.StartWorkers("m", 2, Join(Join(once, Tls("worker")), Token()));
  const Process m = procs_.Wait(master, "m.err");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_THAT(m.err, HasSubstr("on 2 workers"));
  EXPECT_THAT(m.err, HasSubstr("refused a worker from ipv4:127.0.0.1:"));
  EXPECT_THAT(m.err, HasSubstr("Handshake failed"));
  EXPECT_EQ(test::PartLines(dir_.File("m.out")), want);
  for (const Process& w : procs_.WaitWorkers("m", workers)) EXPECT_EQ(w.exit_code, 0) << w.err;
  for (uint32_t r = 0; r < rogue_pids.size(); ++r) {
    ::kill(rogue_pids[r], SIGTERM);
    const Process p = procs_.Wait(rogue_pids[r], "m-worker" + std::to_string(10 + r) + ".err");
    EXPECT_THAT(p.err, Not(HasSubstr("started"))) << "rogue " << r;
  }
}

TEST_F(SecurityTest, AWorkerTrustsNoMasterItsAuthorityDidNotSign) {
  // The master's certificate is a stranger's: the workers do not connect, and the master gives up
  // after --acquire-timeout with nothing published.
  const pid_t master = StartMaster("stranger", Join(Tls("master", "other"), Token()), "2s");
  const auto workers = procs_.StartWorkers(
      "stranger", 2, Join(Join({"--max-jobs", "1", "--threads", "1"}, Tls("worker")), Token()));
  const Process m = procs_.Wait(master, "stranger.err");
  EXPECT_EQ(m.exit_code, 1) << m.err;
  EXPECT_THAT(m.err, HasSubstr("unable to reserve 2 workers"));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("stranger.out")));
  for (pid_t w : workers) ::kill(w, SIGTERM);
  const std::vector<Process> done = procs_.WaitWorkers("stranger", workers);
  EXPECT_THAT(done[0].err, HasSubstr("certificate verify failed"));
  EXPECT_THAT(done[0].err, Not(HasSubstr("started")));
}

TEST_F(SecurityTest, HealthChecksAndStatusGoOverTlsToo) {
  const pid_t master = StartMaster("h", Join(Tls("master"), Token()));
  const std::string target = "127.0.0.1:" + procs_.Port("h");
  const Process secured = procs_.Run(Join({"health", target}, Tls("worker")));
  EXPECT_EQ(secured.exit_code, 0) << secured.err;
  const Process plain = procs_.Run({"health", target, "--timeout", "1s"});
  EXPECT_EQ(plain.exit_code, 1);
  const Process stranger =
      procs_.Run(Join({"health", target, "--timeout", "1s"}, Tls("worker", "other")));
  EXPECT_EQ(stranger.exit_code, 1);
  // `lockstep status` takes the workers' credentials: the token too.
  const Process status = procs_.Run(Join(Join({"status", target}, Tls("worker")), Token()));
  EXPECT_EQ(status.exit_code, 0) << status.err;
  const Process no_token = procs_.Run(Join({"status", target}, Tls("worker")));
  EXPECT_EQ(no_token.exit_code, 1);
  EXPECT_THAT(no_token.err, HasSubstr("no valid join token"));
  // Its job never started: SIGTERM aborts it.
  ::kill(master, SIGTERM);
  procs_.Wait(master, "h.err");
}

TEST_F(SecurityTest, PlainTextBeyondLoopbackSaysSoUnlessAskedFor) {
  for (const bool insecure : {false, true}) {
    SCOPED_TRACE(insecure ? "--insecure" : "no flag");
    std::vector<std::string> args = {"--app", "pagerank", "--graph",
                                     kGraph,  "--out",    dir_.File("open.out")};
    if (insecure) args.push_back("--insecure");
    const pid_t master = procs_.StartMaster("open", args, "0.0.0.0:0");
    ::kill(master, SIGTERM);
    const Process m = procs_.Wait(master, "open.err");
    if (insecure) {
      EXPECT_THAT(m.err, HasSubstr("master listening on 0.0.0.0:0: plain text"));
      EXPECT_THAT(m.err, Not(HasSubstr("[warning]")));
    } else {
      EXPECT_THAT(m.err, HasSubstr("[warning] master listening on 0.0.0.0:0 in plain text: any "
                                   "process that reaches this port can join the cluster"));
    }
  }
}

TEST_F(SecurityTest, AWorkerRefusesPathsOutsideItsDataRootsAndServesTheNextJob) {
  const std::vector<std::string> want = LocalAnswer();
  // The worker's root holds the graph and the output; `link` first leads outside it, as a master
  // that names another file of the machine's does, then inside.
  const std::filesystem::path root = dir_ / "root";
  const test::TempDir outside("lockstep-outside");
  std::filesystem::create_directories(root / "in");
  std::filesystem::copy_file(kGraph, root / "in" / "g.el");
  std::filesystem::copy_file(kGraph, outside / "g.el");
  std::filesystem::create_directory_symlink(outside.path(), root / "link");
  const pid_t master = procs_.StartMaster(
      "root", {"--app", "pagerank", "--graph", (root / "link" / "g.el").string(), "--out",
               (root / "out").string(), "--min-workers", "1", "--every", "300ms"});
  const auto worker = procs_.StartWorkers(
      "root", 1, {"--max-jobs", "2", "--threads", "1", "--data-root", root.string()});
  // The first job fails naming the path; then the link leads inside, and the same worker serves
  // the next job.
  const std::string log = dir_.File("root.err");
  for (int i = 0; i < 1000 && test::ReadWholeFile(log).find("aborted") == std::string::npos; ++i) {
    ::usleep(10000);
  }
  std::filesystem::remove(root / "link");
  std::filesystem::create_directory_symlink(root / "in", root / "link");
  // (A worker that ran a fixed number of jobs exits with its first failure.)
  const Process w = procs_.WaitWorkers("root", worker)[0];
  EXPECT_THAT(w.err, HasSubstr("worker 0: completed"));
  ::kill(master, SIGTERM);
  const Process m = procs_.Wait(master, "root.err");
  EXPECT_THAT(m.err, HasSubstr("the job's graph " + (root / "link" / "g.el").string() +
                               " is outside this worker's --data-root"));
  EXPECT_THAT(w.err, HasSubstr("a job's paths must lie under " +
                               std::filesystem::canonical(root).string()));
  EXPECT_EQ(test::PartLines((root / "out").string()), want);
  // An output outside the root is refused too, and nothing is written there.
  const pid_t out_master =
      procs_.StartMaster("out", {"--app", "pagerank", "--graph", (root / "in" / "g.el").string(),
                                 "--out", (outside / "out").string(), "--min-workers", "1"});
  const auto out_worker = procs_.StartWorkers(
      "out", 1, {"--max-jobs", "1", "--threads", "1", "--data-root", root.string()});
  const Process om = procs_.Wait(out_master, "out.err");
  EXPECT_EQ(om.exit_code, 1);
  EXPECT_THAT(om.err, HasSubstr("is outside this worker's --data-root"));
  procs_.WaitWorkers("out", out_worker);
  EXPECT_EQ(outside.List(), std::vector<std::string>{"g.el"});
  // A path that looks like a URI is a path all the same: "x://../.." is the directory "x:", then
  // up and out of the root.
  std::filesystem::create_directory(root / "x:");
  // root/x: -> root -> the test's directory -> its parent, where `outside` is.
  ASSERT_EQ(outside.path().parent_path(), dir_.path().parent_path());
  const std::string sneaky =
      (root / "x:").string() + "//../../../" + outside.path().filename().string() + "/sneaky";
  const pid_t sneaky_master =
      procs_.StartMaster("sneaky", {"--app", "pagerank", "--graph", (root / "in" / "g.el").string(),
                                    "--out", sneaky, "--min-workers", "1"});
  const auto sneaky_worker = procs_.StartWorkers(
      "sneaky", 1, {"--max-jobs", "1", "--threads", "1", "--data-root", root.string()});
  const Process sm = procs_.Wait(sneaky_master, "sneaky.err");
  EXPECT_EQ(sm.exit_code, 1) << sm.err;
  EXPECT_THAT(sm.err, HasSubstr("is outside this worker's --data-root"));
  procs_.WaitWorkers("sneaky", sneaky_worker);
  EXPECT_EQ(outside.List(), std::vector<std::string>{"g.el"});
  // A root that is not a directory is a usage error.
  EXPECT_THAT(
      procs_.Run({"worker", "--master", "127.0.0.1:1", "--data-root", dir_.File("none")}).exit_code,
      2);
}

// A client written against the .proto with a worker's certificate and the token: an insider that
// misbehaves. Its streams to the master, held open until it goes.
class RogueClient {
 public:
  RogueClient(const std::string& port, const std::vector<std::string>& flags) {
    dbsp::SecurityFlags f;
    for (size_t i = 0; i + 1 < flags.size(); i += 2) {
      if (flags[i] == "--tls-cert") f.tls_cert = flags[i + 1];
      if (flags[i] == "--tls-key") f.tls_key = flags[i + 1];
      if (flags[i] == "--tls-ca") f.tls_ca = flags[i + 1];
      if (flags[i] == "--token-file") f.token_file = flags[i + 1];
    }
    auto loaded = dbsp::Security::Load(f);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    security_ = *loaded;
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(-1);  // it sends what it likes
    stub_ = v1::JobQueue::NewStub(
        grpc::CreateCustomChannel("127.0.0.1:" + port, security_->ChannelCredentials(), args));
  }
  struct Stream {
    std::unique_ptr<grpc::ClientContext> context;
    std::unique_ptr<grpc::ClientReaderWriter<v1::WorkerPayload, v1::MasterPayload>> rw;
  };
  // Opens a stream, as a worker joining the pool does.
  Stream& Open() {
    Stream s;
    s.context = std::make_unique<grpc::ClientContext>();
    security_->Sign(*s.context);
    s.rw = stub_->JobStream(s.context.get());
    streams_.push_back(std::move(s));
    return streams_.back();
  }
  // Sends `payload` on a new stream; how the master ended the stream. Whatever the master sent
  // is read first: gRPC holds a stream's status back until its messages are read.
  grpc::Status SendAndFinish(const v1::WorkerPayload& payload) {
    Stream& s = Open();
    s.rw->Write(payload);
    s.rw->WritesDone();
    v1::MasterPayload ignored;
    while (s.rw->Read(&ignored)) {
    }
    return s.rw->Finish();
  }
  // Waits until the master holds none of this client's streams (`lockstep status` counts the
  // streams it holds). A stream's status reaches the client before the master's own reactor
  // has let go of it; a stream it still holds could be reserved for the next job.
  bool WaitUntilTheMasterLetsGo() {
    for (int i = 0; i < 1000; ++i) {
      grpc::ClientContext context;
      security_->Sign(context);
      v1::StatusReply reply;
      auto call = stub_->Status(&context, &reply);
      call->WritesDone();
      const grpc::Status st = call->Finish();
      if (st.ok() && reply.workers_connected() == 0) return true;
      ::usleep(10000);
    }
    return false;
  }
  ~RogueClient() {
    for (Stream& s : streams_) s.context->TryCancel();
  }

 private:
  std::shared_ptr<const dbsp::Security> security_;
  std::unique_ptr<v1::JobQueue::Stub> stub_;
  std::deque<Stream> streams_;
};

TEST_F(SecurityTest, AnInsiderIsDroppedForAHugeMessageOrASpeechOutOfTurn) {
  const std::vector<std::string> want = LocalAnswer();
  const pid_t master = StartMaster("insider", Join(Tls("master"), Token()));
  RogueClient rogue(procs_.Port("insider"), Join(Tls("worker"), Token()));
  // 100 MB in one message, over the 64 MiB default.
  v1::WorkerPayload huge;
  huge.mutable_relay()->set_payload(std::string(100 << 20, 'x'));
  const grpc::Status big = rogue.SendAndFinish(huge);
  EXPECT_EQ(big.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << big.error_message();
  ASSERT_TRUE(rogue.WaitUntilTheMasterLetsGo());
  // A barrier entered with no job: a step out of turn.
  v1::WorkerPayload step;
  step.mutable_step()->set_type(v1::Step::POST);
  step.mutable_step()->set_superstep(41);
  const grpc::Status early = rogue.SendAndFinish(step);
  EXPECT_EQ(early.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << early.error_message();
  ASSERT_TRUE(rogue.WaitUntilTheMasterLetsGo());
  // The job then runs on the cluster's workers.
  const auto workers = procs_.StartWorkers(
      "insider", 2, Join(Join({"--max-jobs", "1", "--threads", "1"}, Tls("worker")), Token()));
  const Process m = procs_.Wait(master, "insider.err");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_THAT(m.err, HasSubstr("sent a payload before it was given a job; closing its stream"));
  EXPECT_EQ(test::PartLines(dir_.File("insider.out")), want);
  procs_.WaitWorkers("insider", workers);
}

TEST_F(SecurityTest, TheMastersPoolAndEachAddressHaveTheirLimits) {
  for (const std::string limit : {"--max-pool-workers", "--max-conns-per-ip"}) {
    SCOPED_TRACE(limit);
    // A job that waits for more workers than the limit lets in.
    const pid_t master = procs_.StartMaster(
        "limits", Join(Join({"--app", "pagerank", "--graph", kGraph, "--out",
                             dir_.File("limits.out"), "--min-workers", "9", limit, "2"},
                            Tls("master")),
                       Token()));
    RogueClient rogue(procs_.Port("limits"), Join(Tls("worker"), Token()));
    // Three streams: whichever the master takes last (their order on the wire is gRPC's) is
    // refused at once with the limit named; the other two stay until they are cancelled.
    std::vector<RogueClient::Stream*> streams;
    for (int i = 0; i < 3; ++i) streams.push_back(&rogue.Open());
    std::atomic<int> ended{0};
    std::vector<grpc::Status> status(3);
    std::vector<std::thread> finishers;
    for (int i = 0; i < 3; ++i) {
      finishers.emplace_back([&, i] {
        status[i] = streams[i]->rw->Finish();
        ++ended;
      });
    }
    for (int i = 0; i < 3000 && ended.load() == 0; ++i) ::usleep(10000);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(ended.load(), 1);
    for (RogueClient::Stream* s : streams) s->context->TryCancel();
    for (std::thread& t : finishers) t.join();
    int refused = 0;
    for (const grpc::Status& st : status) {
      if (st.error_code() == grpc::StatusCode::CANCELLED) continue;
      ++refused;
      EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
      EXPECT_THAT(st.error_message(), HasSubstr(limit));
    }
    EXPECT_EQ(refused, 1);
    ::kill(master, SIGTERM);
    const Process m = procs_.Wait(master, "limits.err");
    EXPECT_THAT(m.err, HasSubstr("refused a worker from ipv4:127.0.0.1:"));
  }
}

TEST_F(SecurityTest, HalfOpenConnectionsDoNotStarveTheMaster) {
  const std::vector<std::string> want = LocalAnswer();
  // The master starts with the common soft limit of 1,024 descriptors (and raises it to the hard
  // limit); 1,100 connections that never say a word are then opened to it.
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max < 4096) GTEST_SKIP() << "the hard limit of open files is " << saved.rlim_max;
  rlimit low = saved;
  low.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  const pid_t master =
      StartMaster("open", Join(Join(Tls("master"), Token()), {"--handshake-timeout", "1s"}));
  rlimit high = saved;
  high.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &high), 0);
  const std::string port = procs_.Port("open");
  std::vector<int> fds;
  for (int i = 0; i < 1100; ++i) {
    const int fd = ConnectLoopback(port);
    ASSERT_GE(fd, 0) << i;
    fds.push_back(fd);
  }
  // The job runs meanwhile, on descriptors the master still has (without raising its limit it
  // never accepts another connection); the silent ones are closed past the handshake timeout,
  // while this test still holds its ends.
  const auto workers = procs_.StartWorkers(
      "open", 2, Join(Join({"--max-jobs", "1", "--threads", "1"}, Tls("worker")), Token()));
  const Process m = procs_.Wait(master, "open.err");
  for (int fd : fds) ::close(fd);
  ::setrlimit(RLIMIT_NOFILE, &saved);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_THAT(m.err, Not(HasSubstr("Too many open files")));
  EXPECT_EQ(test::PartLines(dir_.File("open.out")), want);
  procs_.WaitWorkers("open", workers);
}

TEST_F(SecurityTest, BadSecurityFlagsAreUsageErrors) {
  const std::string empty = dir_.Write("empty-token", "\n");
  const std::string not_pem = dir_.Write("not.pem", "hello\n");
  struct Case {
    std::vector<std::string> flags;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--tls-cert", certs->File("worker.pem")}, "--tls-cert, --tls-key and --tls-ca go together"},
      {Join(Tls("worker"), {"--insecure"}),
       "--insecure: plain text asked for, but --tls-cert, --tls-key or --tls-ca given too"},
      {{"--tls-cert", dir_.File("missing.pem"), "--tls-key", certs->File("worker.key"), "--tls-ca",
        certs->File("ca.pem")},
       "--tls-cert: cannot read " + dir_.File("missing.pem")},
      {{"--tls-cert", not_pem, "--tls-key", certs->File("worker.key"), "--tls-ca",
        certs->File("ca.pem")},
       "--tls-cert: " + not_pem + " holds no PEM certificate"},
      {Token(empty), "--token-file: " + empty + " is empty"},
      // Files that parse but no handshake could use: caught at start, not at every connection.
      {{"--tls-cert", certs->File("worker.pem"), "--tls-key", certs->File("other/worker.key"),
        "--tls-ca", certs->File("ca.pem")},
       "--tls-key: " + certs->File("other/worker.key") + " is not the private key of --tls-cert " +
           certs->File("worker.pem")},
      {{"--tls-cert", certs->File("other/worker.pem"), "--tls-key", certs->File("other/worker.key"),
        "--tls-ca", certs->File("ca.pem")},
       "--tls-cert: " + certs->File("other/worker.pem") + " does not verify under --tls-ca " +
           certs->File("ca.pem")},
  };
  for (const Case& c : cases) {
    const Process w = procs_.Run(Join({"worker", "--master", "127.0.0.1:1"}, c.flags));
    EXPECT_EQ(w.exit_code, 2) << w.err;
    EXPECT_THAT(w.err, HasSubstr(c.says));
    const Process m = procs_.Run(Join({"master", "--listen", "127.0.0.1:0", "--app", "pagerank",
                                       "--graph", kGraph, "--out", dir_.File("bad.out")},
                                      c.flags));
    EXPECT_EQ(m.exit_code, 2) << m.err;
    EXPECT_THAT(m.err, HasSubstr(c.says));
  }
  // A batch must fit in a message, with its framing.
  const Process m = procs_.Run({"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph",
                                kGraph, "--out", dir_.File("bad.out"), "--max-message-bytes",
                                "2097152", "--max-batch-bytes", "2097152"});
  EXPECT_EQ(m.exit_code, 2) << m.err;
  EXPECT_THAT(m.err, HasSubstr("leaves no room for framing under --max-message-bytes 2097152"));
}

}  // namespace
}  // namespace lockstep
