#pragma once

// Real `lockstep` processes for the distributed tests: a process helper that cannot leak children
// (each child gets its own process group, dies with the test through PR_SET_PDEATHSIG and is
// SIGKILLed by the destructor), and a cluster of one master and its workers on 127.0.0.1 with an
// ephemeral port, logging into a temporary directory that is removed afterwards.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/temp_dir.h"

namespace lockstep::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string ReadFile(const fs::path& path);
void WriteFile(const fs::path& path, const std::string& text);
std::vector<std::string> SortedLines(const std::string& text);

// The suite's temporary directory (tests/util/temp_dir.h).
using ::lockstep::test::TempDir;

// One child process; stdout and stderr go to `log`.
class Process {
 public:
  struct Options {
    fs::path cwd;
    fs::path log;
    std::vector<std::string> env;  // extra NAME=VALUE entries
  };
  // Never returns null: a child that cannot exec exits with 127 (its log says why).
  static std::unique_ptr<Process> Start(const std::string& binary,
                                        const std::vector<std::string>& args,
                                        const Options& options);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  const fs::path& log_path() const { return log_; }
  std::string Log() const { return ReadFile(log_); }
  // The command line, for messages.
  const std::string& command() const { return command_; }

  bool Running();
  // The exit code (128 + signal if killed), or nullopt if still running after `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  std::optional<int> exit_code() const { return exit_code_; }
  void Signal(int signal);
  // SIGKILL to the process group, then reaps it.
  void Kill();
  // Polls the log until it holds `text` (true) or the process exited / the time is up (false).
  bool WaitForLog(const std::string& text, std::chrono::milliseconds timeout);
  // Polls the log until `text` occurs at least `count` times.
  bool WaitForLogCount(const std::string& text, size_t count, std::chrono::milliseconds timeout);

 private:
  Process(pid_t pid, fs::path log, std::string command)
      : pid_(pid), log_(std::move(log)), command_(std::move(command)) {}
  bool Reap(bool block);

  pid_t pid_;
  fs::path log_;
  std::string command_;
  std::optional<int> exit_code_;
};

size_t CountOccurrences(const std::string& text, const std::string& what);

// A master and its workers, each with a log in `dir`. The destructor kills whatever still runs
// and, if the current test failed, prints every log's tail.
class Cluster {
 public:
  Cluster(std::string binary, fs::path dir, std::vector<std::string> env = {});
  ~Cluster();

  // `lockstep master --listen 127.0.0.1:0 --port-file ... args`; waits for the port unless told
  // not to (a master expected to fail before it listens).
  Process& StartMaster(const std::vector<std::string>& args, bool wait_for_port = true);
  // A master on a given port (a restarted master); waits until it listens.
  Process& StartMasterOnPort(int port, const std::vector<std::string>& args);
  // `lockstep worker --master 127.0.0.1:PORT args`.
  Process& StartWorker(const std::vector<std::string>& args = {});

  int port() const { return port_; }
  Process& master() { return *master_; }
  std::vector<Process*> workers() const;
  Process& worker(size_t i) { return *workers_.at(i); }
  const fs::path& dir() const { return dir_; }
  void set_binary(std::string binary) { binary_ = std::move(binary); }
  // Workers started from now on run in `cwd` (default: dir()).
  void set_worker_cwd(fs::path cwd) { worker_cwd_ = std::move(cwd); }

  // Waits for every process to exit; false (with a failure naming the stragglers) if some still
  // run after `timeout`.
  bool WaitAll(std::chrono::milliseconds timeout);
  // SIGTERM to every running process, then waits; SIGKILLs stragglers.
  void Stop(std::chrono::milliseconds timeout = 15s);
  std::string Logs() const;

 private:
  Process& Spawn(const std::string& name, const std::vector<std::string>& args,
                 const fs::path& cwd);

  std::string binary_;
  fs::path dir_;
  fs::path worker_cwd_;
  std::vector<std::string> env_;
  int port_ = 0;
  int masters_ = 0;
  Process* master_ = nullptr;
  std::vector<std::unique_ptr<Process>> all_;
  std::vector<Process*> workers_;
};

// The lines of a published result directory: every part-NNNNN file concatenated. Fails the test
// (and returns nothing) unless DIR is a symlink to a job directory with parts 0..n-1 and a
// _SUCCESS that lists them.
struct Published {
  std::string job_id;
  std::vector<std::string> lines;  // sorted
  std::string success_json;
  uint64_t vertices = 0;
  uint64_t supersteps = 0;
  size_t parts = 0;
};
std::optional<Published> ReadPublished(const fs::path& dir, size_t expected_parts);

}  // namespace lockstep::testing
