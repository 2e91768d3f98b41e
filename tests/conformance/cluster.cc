#include "cluster.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

extern char** environ;

#include "lockstep/bsp/checksum.h"

namespace lockstep::testing {

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

size_t CountOccurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// --- Process

std::unique_ptr<Process> Process::Start(const std::string& binary,
                                        const std::vector<std::string>& args,
                                        const Options& options) {
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> argv_storage = {binary};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::string command;
  for (const auto& a : argv_storage) command += (command.empty() ? "" : " ") + a;
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const bool overridden = std::any_of(options.env.begin(), options.env.end(), [&](auto& x) {
      return entry.substr(0, entry.find('=') + 1) == x.substr(0, x.find('=') + 1);
    });
    if (!overridden) env_storage.push_back(entry);
  }
  env_storage.insert(env_storage.end(), options.env.begin(), options.env.end());
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string log = options.log.string();
  const std::string cwd = options.cwd.string();
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    // The child dies with the test process even if the test is killed (a ctest timeout).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) ::_exit(127);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::execve(argv[0], argv.data(), envp.data());
    const char msg[] = "exec failed\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    auto p = std::unique_ptr<Process>(new Process(-1, options.log, command));
    p->exit_code_ = 127;
    return p;
  }
  ::setpgid(pid, pid);  // also from here, so that a signal to the group cannot race the child
  return std::unique_ptr<Process>(new Process(pid, options.log, command));
}

Process::~Process() { Kill(); }

bool Process::Reap(bool block) {
  if (exit_code_) return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }
  if (r < 0) {  // not our child any more (cannot happen); do not spin
    exit_code_ = 255;
    return true;
  }
  return false;
}

bool Process::Running() { return !Reap(false); }

std::optional<int> Process::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!Reap(false)) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(10ms);
  }
  return exit_code_;
}

void Process::Signal(int signal) {
  if (Running()) ::kill(pid_, signal);
}

void Process::Kill() {
  if (exit_code_ || pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  Reap(true);
}

bool Process::WaitForLog(const std::string& text, std::chrono::milliseconds timeout) {
  return WaitForLogCount(text, 1, timeout);
}

bool Process::WaitForLogCount(const std::string& text, size_t count,
                              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const bool exited = !Running();  // read the log after this, so an exit's last lines count
    if (CountOccurrences(Log(), text) >= count) return true;
    if (exited || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
}

// --- Cluster

Cluster::Cluster(std::string binary, fs::path dir, std::vector<std::string> env)
    : binary_(std::move(binary)), dir_(std::move(dir)), env_(std::move(env)) {}

Cluster::~Cluster() {
  for (auto& p : all_) {
    if (p->Running()) p->Kill();
  }
  if (::testing::Test::HasFailure()) std::cerr << Logs();
}

Process& Cluster::Spawn(const std::string& name, const std::vector<std::string>& args,
                        const fs::path& cwd) {
  Process::Options o;
  o.cwd = cwd.empty() ? dir_ : cwd;
  o.log = dir_ / (name + ".log");
  o.env = env_;
  all_.push_back(Process::Start(binary_, args, o));
  return *all_.back();
}

Process& Cluster::StartMaster(const std::vector<std::string>& args, bool wait_for_port) {
  const std::string name = masters_ == 0 ? "master" : "master" + std::to_string(masters_);
  const fs::path port_file = dir_ / (name + ".port");
  ++masters_;
  std::vector<std::string> full = {"master", "--listen", "127.0.0.1:0", "--port-file",
                                   port_file.string()};
  full.insert(full.end(), args.begin(), args.end());
  master_ = &Spawn(name, full, dir_);
  if (!wait_for_port) return *master_;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = ReadFile(port_file);
    if (!text.empty() && text.back() == '\n') {
      port_ = std::stoi(text);
      return *master_;
    }
    if (!master_->Running()) break;
    std::this_thread::sleep_for(10ms);
  }
  ADD_FAILURE() << name << " wrote no port file " << port_file << "; log:\n" << master_->Log();
  return *master_;
}

Process& Cluster::StartMasterOnPort(int port, const std::vector<std::string>& args) {
  const std::string name = "master" + std::to_string(masters_++);
  std::vector<std::string> full = {"master", "--listen", "127.0.0.1:" + std::to_string(port)};
  full.insert(full.end(), args.begin(), args.end());
  master_ = &Spawn(name, full, dir_);
  port_ = port;
  const std::string listening = "master listening on port " + std::to_string(port);
  if (!master_->WaitForLog(listening, 20s)) {
    ADD_FAILURE() << name << " does not listen on " << port << "; log:\n" << master_->Log();
  }
  return *master_;
}

Process& Cluster::StartWorker(const std::vector<std::string>& args) {
  const std::string name = "worker" + std::to_string(workers_.size());
  std::vector<std::string> full = {"worker", "--master", "127.0.0.1:" + std::to_string(port_)};
  full.insert(full.end(), args.begin(), args.end());
  workers_.push_back(&Spawn(name, full, worker_cwd_));
  return *workers_.back();
}

std::vector<Process*> Cluster::workers() const { return workers_; }

bool Cluster::WaitAll(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool ok = true;
  for (auto& p : all_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!p->Wait(std::max(left, 0ms))) {
      ADD_FAILURE() << "still running after " << timeout.count() << " ms: " << p->command();
      ok = false;
    }
  }
  return ok;
}

void Cluster::Stop(std::chrono::milliseconds timeout) {
  for (auto& p : all_) p->Signal(SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (auto& p : all_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!p->Wait(std::max(left, 0ms))) {
      ADD_FAILURE() << "ignored SIGTERM for " << timeout.count() << " ms: " << p->command();
      p->Kill();
    }
  }
}

std::string Cluster::Logs() const {
  std::string out;
  for (const auto& p : all_) {
    std::string log = p->Log();
    constexpr size_t kTail = 6000;
    if (log.size() > kTail) log = "...\n" + log.substr(log.size() - kTail);
    out += "----- " + p->log_path().filename().string() + ": " + p->command() + "\n" + log;
  }
  return out;
}

// --- Published results

std::optional<Published> ReadPublished(const fs::path& dir, size_t expected_parts) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(dir, ec))) {
    ADD_FAILURE() << dir << " is not a symlink to a published job directory";
    return std::nullopt;
  }
  const fs::path target = fs::read_symlink(dir, ec);
  const fs::path job_dir = target.is_relative() ? dir.parent_path() / target : target;
  if (!fs::is_directory(job_dir, ec)) {
    ADD_FAILURE() << dir << " points at " << job_dir << ", which is not a directory";
    return std::nullopt;
  }
  Published pub;
  pub.success_json = ReadFile(job_dir / "_SUCCESS");
  nlohmann::json success = nlohmann::json::parse(pub.success_json, nullptr, false);
  if (success.is_discarded() || !success.is_object()) {
    ADD_FAILURE() << "_SUCCESS of " << job_dir << " is not a JSON object: " << pub.success_json;
    return std::nullopt;
  }
  pub.job_id = success.value("job_id", "");
  pub.vertices = success.value("vertices", uint64_t{0});
  pub.supersteps = success.value("supersteps", uint64_t{0});
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(job_dir, ec)) {
    names.insert(entry.path().filename().string());
  }
  std::set<std::string> expected = {"_SUCCESS"};
  std::vector<std::string> listed;
  for (size_t i = 0; i < expected_parts; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "part-%05zu", i);
    expected.insert(name);
    listed.push_back(name);
  }
  EXPECT_EQ(names, expected) << "files of " << job_dir;
  // Each part is listed with what its worker wrote, which the master checked.
  const nlohmann::json parts = success.value("parts", nlohmann::json::array());
  EXPECT_EQ(parts.size(), listed.size()) << pub.success_json;
  for (size_t i = 0; i < std::min(parts.size(), listed.size()); ++i) {
    const std::string text = ReadFile(job_dir / listed[i]);
    EXPECT_EQ(parts[i].value("name", ""), listed[i]) << pub.success_json;
    EXPECT_EQ(parts[i].value("bytes", uint64_t{0}), text.size()) << listed[i];
    EXPECT_EQ(parts[i].value("vertices", uint64_t{0}),
              static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n')))
        << listed[i];
    EXPECT_EQ(parts[i].value("crc32c", uint32_t{0}), bsp::Crc32c(text)) << listed[i];
  }
  EXPECT_FALSE(pub.job_id.empty()) << pub.success_json;
  EXPECT_EQ(job_dir.filename().string().find(pub.job_id) != std::string::npos, true)
      << "the job directory " << job_dir << " is not named after job " << pub.job_id;
  std::string all;
  for (const std::string& part : listed) all += ReadFile(job_dir / part);
  pub.lines = SortedLines(all);
  pub.parts = listed.size();
  EXPECT_EQ(pub.vertices, pub.lines.size()) << "_SUCCESS vertex count: " << pub.success_json;
  return pub;
}

}  // namespace lockstep::testing
