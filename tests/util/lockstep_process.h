#pragma once

// The `lockstep` command as real processes in a test: started with posix_spawn, standard error
// to a file in the test's directory, waited for with a deadline (killed past it). Masters write
// their port to NAME.port, which workers are pointed at.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "util/temp_dir.h"

extern char** environ;

namespace lockstep::test {

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The lines of `text`, sorted.
inline std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// The lines of the part files a distributed job published in `dir`, sorted.
inline std::vector<std::string> PartLines(const std::string& dir) {
  std::string all;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with("part-")) all += ReadWholeFile(e.path().string());
  }
  return SortedLines(all);
}

// Waits for child `pid` at most `limit` (then kills it and fails the test); its exit code, or
// 128 + the signal that ended it.
inline int WaitExitCode(pid_t pid, std::chrono::seconds limit = std::chrono::seconds(120)) {
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  pid_t done = 0;
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    ::usleep(10000);
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ADD_FAILURE() << "still running after " << limit.count() << " s: killed";
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Process {
  int exit_code = -1;
  std::string err;  // what it wrote to standard error
};

class LockstepProcesses {
 public:
  // `launcher`: a command that runs lockstep, with its arguments before lockstep's own
  // (`{"/usr/bin/prlimit", "--nofile=1024:1024"}`); none by default.
  LockstepProcesses(const TempDir& dir, std::string binary, std::vector<std::string> launcher = {})
      : dir_(dir), binary_(std::move(binary)), launcher_(std::move(launcher)) {}

  // Starts `lockstep args...` (with `env` added to the environment), standard error to
  // `err_name` in the directory.
  pid_t Start(const std::vector<std::string>& args, const std::string& err_name,
              const std::vector<std::string>& env = {}) const {
    std::vector<std::string> argv_storage = launcher_;
    argv_storage.push_back(binary_);
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_storage = env;
    for (char** e = environ; *e != nullptr; ++e) env_storage.emplace_back(*e);
    std::vector<char*> envp;
    for (std::string& e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string err = dir_.File(err_name);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    EXPECT_EQ(
        ::posix_spawn(&pid, argv_storage[0].c_str(), &actions, nullptr, argv.data(), envp.data()),
        0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
  }

  // Waits for `pid` at most `limit` (then kills it and fails the test).
  Process Wait(pid_t pid, const std::string& err_name,
               std::chrono::seconds limit = std::chrono::seconds(120)) const {
    Process p;
    p.exit_code = WaitExitCode(pid, limit);
    p.err = ReadWholeFile(dir_.File(err_name));
    return p;
  }

  Process Run(const std::vector<std::string>& args,
              const std::vector<std::string>& env = {}) const {
    return Wait(Start(args, "stderr", env), "stderr");
  }

  // Starts `lockstep master --listen LISTEN --port-file NAME.port args...` (with `env` added to
  // the environment), logging to NAME.err, and waits until it listens.
  pid_t StartMaster(const std::string& name, std::vector<std::string> args,
                    const std::string& listen = "127.0.0.1:0",
                    const std::vector<std::string>& env = {}) const {
    const std::string port_file = dir_.File(name + ".port");
    std::filesystem::remove(port_file);
    args.insert(args.begin(), {"master", "--listen", listen, "--port-file", port_file});
    const pid_t pid = Start(args, name + ".err", env);
    for (int i = 0; i < 1000 && ReadWholeFile(port_file).empty(); ++i) ::usleep(10000);
    return pid;
  }
  // The port master NAME listens on.
  std::string Port(const std::string& name) const {
    const std::string port = ReadWholeFile(dir_.File(name + ".port"));
    return port.substr(0, port.find('\n'));
  }
  // Starts `n` workers of master NAME with `args` added, logging to NAME-workerI.err.
  std::vector<pid_t> StartWorkers(const std::string& name, uint32_t n,
                                  const std::vector<std::string>& args, uint32_t first = 0) const {
    std::vector<pid_t> workers;
    for (uint32_t w = first; w < first + n; ++w) {
      std::vector<std::string> argv = {"worker", "--master", "127.0.0.1:" + Port(name)};
      argv.insert(argv.end(), args.begin(), args.end());
      workers.push_back(Start(argv, name + "-worker" + std::to_string(w) + ".err"));
    }
    return workers;
  }
  std::vector<Process> WaitWorkers(const std::string& name, const std::vector<pid_t>& workers,
                                   uint32_t first = 0) const {
    std::vector<Process> done;
    for (size_t w = 0; w < workers.size(); ++w) {
      done.push_back(Wait(workers[w], name + "-worker" + std::to_string(first + w) + ".err"));
    }
    return done;
  }

 private:
  const TempDir& dir_;
  const std::string binary_;
  const std::vector<std::string> launcher_;
};

}  // namespace lockstep::test
