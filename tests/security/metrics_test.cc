// Prometheus metrics (docs/design.md §12), scraped with curl from a master and its workers during
// a job and after it, and checked against the job's own counts in the master's log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "util/lockstep_process.h"
#include "util/temp_dir.h"

namespace lockstep {
namespace {

using test::Process;
using ::testing::HasSubstr;

// What `cmd` printed ("" if it failed).
std::string Output(const std::string& cmd) {
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  return ::pclose(p) == 0 ? out : "";
}

// What `curl` printed for `url` ("" if it failed).
std::string Curl(const std::string& url) { return Output("curl -s -f --max-time 5 '" + url + "'"); }

// The samples of a scrape by name and labels ("lockstep_jobs_total{...}" -> value).
std::map<std::string, double> Samples(const std::string& text) {
  std::map<std::string, double> samples;
  static const std::regex line(R"(^([a-z_]+(\{[^}]*\})?) ([0-9.e+-]+)$)");
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string l = text.substr(at, end - at);
    std::smatch m;
    if (std::regex_match(l, m, line)) samples[m[1]] = std::stod(m[3]);
    at = end + 1;
  }
  return samples;
}

// The port a process logged for its metrics.
std::string MetricsPort(const std::string& log) {
  std::smatch m;
  static const std::regex port(R"(metrics on port ([0-9]+))");
  return std::regex_search(log, m, port) ? m[1].str() : "";
}

class MetricsTest : public ::testing::Test {
 protected:
  test::TempDir dir_{"lockstep-metrics"};
  test::LockstepProcesses procs_{dir_, LOCKSTEP_BINARY};
};

TEST_F(MetricsTest, AScrapeDuringAndAfterAJobAgreesWithItsCounts) {
  const std::string graph = std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el";
  // A periodic master, so that it still serves once the job is done; 2,000 supersteps, so that
  // the job runs long enough to be scraped.
  const pid_t master =
      procs_.StartMaster("m", {"--app", "pagerank", "--graph", graph, "--out", dir_.File("out"),
                               "--min-workers", "2", "--max-iterations", "2000", "--tolerance", "0",
                               "--every", "1h", "--metrics-port", "0"});
  const std::string m_port = MetricsPort(test::ReadWholeFile(dir_.File("m.err")));
  ASSERT_FALSE(m_port.empty());
  const std::string m_url = "http://127.0.0.1:" + m_port + "/metrics";
  // Served from the start, before any worker.
  auto before = Samples(Curl(m_url));
  EXPECT_EQ(before["lockstep_workers{role=\"master\"}"], 0);
  EXPECT_EQ(before["lockstep_jobs_total{role=\"master\",outcome=\"completed\"}"], 0);
  EXPECT_EQ(Curl("http://127.0.0.1:" + m_port + "/healthz"), "ok\n");
  const auto workers = procs_.StartWorkers("m", 2, {"--threads", "1", "--metrics-port", "0"});
  // During the job.
  std::map<std::string, double> during;
  for (int i = 0; i < 1000; ++i) {
    during = Samples(Curl(m_url));
    if (during["lockstep_superstep{role=\"master\"}"] > 10) break;
    ::usleep(10000);
  }
  EXPECT_EQ(during["lockstep_workers{role=\"master\"}"], 2);
  // `lockstep status` meanwhile: the job, its superstep, each worker's time, the slowest marked.
  const auto st = nlohmann::json::parse(
      Output(std::string(LOCKSTEP_BINARY) + " status 127.0.0.1:" + procs_.Port("m") + " --json"),
      nullptr, false);
  ASSERT_FALSE(st.is_discarded());
  EXPECT_TRUE(st["running"].get<bool>());
  EXPECT_EQ(st["app"], "pagerank");
  EXPECT_GT(st["superstep"].get<uint64_t>(), 0u);
  EXPECT_EQ(st["max_supersteps"].get<uint64_t>(), 2001u);
  EXPECT_GT(st["elapsed_seconds"].get<double>(), 0);
  EXPECT_FALSE(st["remaining_seconds"].is_null());
  ASSERT_EQ(st["workers"].size(), 2u);
  EXPECT_EQ(
      int{st["workers"][0]["slowest"].get<bool>()} + int{st["workers"][1]["slowest"].get<bool>()},
      1);
  EXPECT_THAT(Output(std::string(LOCKSTEP_BINARY) + " status 127.0.0.1:" + procs_.Port("m")),
              HasSubstr("<- slowest"));
  EXPECT_GT(during["lockstep_active_vertices{role=\"master\"}"], 0);
  EXPECT_EQ(during["lockstep_jobs_total{role=\"master\",outcome=\"completed\"}"], 0);
  // After it: the job ended has the ID status named.
  const std::string job_id = st["job_id"];
  std::map<std::string, double> after;
  for (int i = 0; i < 3000; ++i) {
    after = Samples(Curl(m_url));
    if (after["lockstep_jobs_total{role=\"master\",outcome=\"completed\"}"] == 1) break;
    ::usleep(10000);
  }
  ASSERT_EQ(after["lockstep_jobs_total{role=\"master\",outcome=\"completed\"}"], 1);
  // The job's own counts: its progress lines, one per superstep.
  const std::string log = test::ReadWholeFile(dir_.File("m.err"));
  static const std::regex step(R"(superstep ([0-9]+) \| active [0-9]+ \| messages ([0-9]+) \| )"
                               R"(relayed [0-9]+ batches, ([0-9]+) bytes)");
  double messages = 0, bytes = 0, last = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), step); it != std::sregex_iterator();
       ++it) {
    last = std::stod((*it)[1]);
    messages += std::stod((*it)[2]);
    bytes += std::stod((*it)[3]);
  }
  EXPECT_GT(messages, 0);
  EXPECT_THAT(log, HasSubstr("job " + job_id + ": completed"));
  EXPECT_EQ(after["lockstep_superstep{role=\"master\"}"], last);
  EXPECT_EQ(after["lockstep_messages_total{role=\"master\"}"], messages);
  EXPECT_EQ(after["lockstep_bytes_sent_total{role=\"master\"}"], bytes);
  EXPECT_GT(after["lockstep_phase_seconds_total{role=\"master\",phase=\"compute\"}"], 0);
  // The workers' own: each one's job, and together the master's messages and bytes.
  double worker_messages = 0, worker_bytes = 0;
  for (uint32_t w = 0; w < 2; ++w) {
    const std::string port =
        MetricsPort(test::ReadWholeFile(dir_.File("m-worker" + std::to_string(w) + ".err")));
    auto mine = Samples(Curl("http://127.0.0.1:" + port + "/metrics"));
    EXPECT_EQ(mine["lockstep_jobs_total{role=\"worker\",outcome=\"completed\"}"], 1);
    EXPECT_GT(mine["lockstep_phase_seconds_total{role=\"worker\",phase=\"load\"}"], 0);
    EXPECT_GT(mine["lockstep_phase_seconds_total{role=\"worker\",phase=\"output\"}"], 0);
    worker_messages += mine["lockstep_messages_total{role=\"worker\"}"];
    worker_bytes += mine["lockstep_bytes_sent_total{role=\"worker\"}"];
  }
  EXPECT_EQ(worker_messages, messages);
  EXPECT_EQ(worker_bytes, bytes);
  ::kill(master, SIGTERM);
  for (pid_t w : workers) ::kill(w, SIGTERM);
  EXPECT_EQ(procs_.Wait(master, "m.err").exit_code, 0);
  procs_.WaitWorkers("m", workers);
}

TEST_F(MetricsTest, TheEndpointAnswersOnlyWhatItServes) {
  const pid_t master = procs_.StartMaster(
      "m", {"--app", "pagerank", "--graph", std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el",
            "--out", dir_.File("out"), "--metrics-port", "0"});
  const std::string base =
      "http://127.0.0.1:" + MetricsPort(test::ReadWholeFile(dir_.File("m.err")));
  EXPECT_EQ(Curl(base + "/nothing"), "");  // 404: curl -f fails
  EXPECT_THAT(Curl(base + "/metrics"), HasSubstr("# TYPE lockstep_jobs_total counter"));
  ::kill(master, SIGTERM);
  procs_.Wait(master, "m.err");
}

TEST_F(MetricsTest, EveryLineAboutAJobCarriesItsIdAndJsonLogsAreJson) {
  const std::string graph = std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el";
  for (const bool json : {false, true}) {
    SCOPED_TRACE(json ? "json" : "text");
    const std::string name = json ? "json" : "text";
    std::vector<std::string> args = {"--app",         "pagerank", "--graph",
                                     graph,           "--out",    dir_.File(name + ".out"),
                                     "--min-workers", "1"};
    // --log-format comes before the command: start the master by hand.
    const std::string port_file = dir_.File(name + ".port");
    std::vector<std::string> master_args = {"--log-format", json ? "json" : "text", "master",
                                            "--listen",     "127.0.0.1:0",          "--port-file",
                                            port_file};
    master_args.insert(master_args.end(), args.begin(), args.end());
    const pid_t master = procs_.Start(master_args, name + ".err");
    for (int i = 0; i < 1000 && test::ReadWholeFile(port_file).empty(); ++i) ::usleep(10000);
    const std::string port = test::ReadWholeFile(port_file);
    const pid_t worker = procs_.Start(
        {"--log-format", json ? "json" : "text", "worker", "--master",
         "127.0.0.1:" + port.substr(0, port.find('\n')), "--max-jobs", "1", "--threads", "1"},
        name + "-worker.err");
    const Process m = procs_.Wait(master, name + ".err");
    const Process w = procs_.Wait(worker, name + "-worker.err");
    ASSERT_EQ(m.exit_code, 0) << m.err;
    std::smatch id;
    ASSERT_TRUE(std::regex_search(m.err, id, std::regex("job ([0-9a-f-]{36}): completed")));
    if (!json) {
      EXPECT_THAT(m.err, HasSubstr("job " + id[1].str() + ": superstep 0 | active "));
      continue;
    }
    // Every line of both logs is one JSON object; a line about the job names it in "job".
    for (const std::string* log : {&m.err, &w.err}) {
      size_t steps = 0;
      for (const std::string& line : test::SortedLines(*log)) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        ASSERT_FALSE(j.is_discarded()) << line;
        ASSERT_TRUE(j.contains("time") && j.contains("level") && j.contains("msg")) << line;
        const std::string msg = j["msg"];
        if (msg.find(id[1].str()) != std::string::npos && msg.starts_with("job ")) {
          EXPECT_EQ(j.value("job", std::string()), id[1].str()) << line;
        }
        if (msg.find("superstep 0 |") != std::string::npos) ++steps;
      }
      if (log == &m.err) EXPECT_EQ(steps, 1u);
    }
  }
}

// The lines a log holds for traced vertices (--trace-vertex), after "trace " and without the
// worker a master names, sorted.
std::vector<std::string> TraceLines(const std::string& log) {
  std::vector<std::string> lines;
  static const std::regex trace(R"(\] (job [0-9a-f-]{36}: )?trace (.*?)( \| worker [0-9]+)?$)");
  for (const std::string& line : test::SortedLines(log)) {
    std::smatch m;
    if (std::regex_search(line, m, trace)) lines.push_back(m[2]);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// --trace-vertex on `run` and on a master of 2 workers: a line per traced vertex and superstep,
// the same lines both ways, and one for a vertex the graph lacks.
TEST_F(MetricsTest, TracedVerticesShowTheSameLinesOnRunAndOnAMaster) {
  const std::string graph = std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el";
  const std::vector<std::string> job = {"--graph",        graph, "--max-iterations", "3",
                                        "--trace-vertex", "1",   "--trace-vertex",   "2675",
                                        "--trace-vertex", "nope"};
  std::vector<std::string> run = {"run", "pagerank", "--out", dir_.File("run.out")};
  run.insert(run.end(), job.begin(), job.end());
  const Process local = procs_.Run(run);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  std::vector<std::string> master_args = {"--app",          "pagerank",      "--out",
                                          dir_.File("out"), "--min-workers", "2"};
  master_args.insert(master_args.end(), job.begin(), job.end());
  const pid_t master = procs_.StartMaster("m", master_args);
  const std::vector<pid_t> workers = procs_.StartWorkers("m", 2, {"--max-jobs", "1"});
  const Process m = procs_.Wait(master, "m.err");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  for (pid_t w : workers) EXPECT_EQ(test::WaitExitCode(w), 0);

  const std::vector<std::string> lines = TraceLines(local.err);
  // Supersteps 0-3 for the two vertices in the graph, and one line for the other.
  ASSERT_EQ(lines.size(), 9u) << local.err;
  EXPECT_EQ(lines.back(), "vertex 'nope' is not in the graph: not traced");
  EXPECT_THAT(lines[0], ::testing::StartsWith("vertex '1' superstep 0: ran, received 0, sent "));
  EXPECT_THAT(lines[5], ::testing::StartsWith("vertex '2675' superstep 1: ran, received 1 ["));
  EXPECT_EQ(TraceLines(m.err), lines) << m.err;
  // The master names the worker each line came from.
  EXPECT_TRUE(std::regex_search(
      m.err,
      std::regex(R"(job [0-9a-f-]{36}: trace vertex '2675' superstep 3: .* \| worker [01]\n)")))
      << m.err;
}

}  // namespace
}  // namespace lockstep
