#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "lockstep/bsp/checksum.h"
#include "lockstep/runner/job_runner.h"

namespace lockstep::dbsp::job {

// A lease: a file its holder rewrites every `renew_every`, naming the holder (host, boot, PID
// namespace and PID). Anyone may judge it dead: when it has not been renewed for `dead_after`, or
// at once when its holder is a process of this very host and PID namespace that no longer exists.
// Staging directories carry one (docs/design.md §6.3), and so does a job's checkpoint directory:
// the lock of the master that drives the job (§7.7).
class Lease {
 public:
  static constexpr std::chrono::seconds kRenewEvery{2};
  static constexpr std::chrono::seconds kDeadAfter{30};

  // Writes the lease file and keeps renewing it until Release() or destruction.
  static absl::StatusOr<std::unique_ptr<Lease>> Acquire(const std::string& path);
  // The same as a lock: fails (FailedPrecondition, naming the holder) while another live holder's
  // lease is at `path`; a dead one is taken over. Of two processes that try at once, one wins; a
  // rare race of three can make two think they do, which lost() then tells the loser.
  static absl::StatusOr<std::unique_ptr<Lease>> TryAcquire(const std::string& path);
  ~Lease();
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  // Stops renewing and removes the file, if it is still this holder's.
  void Release();
  // Whether the lease may have gone to another process: its file names another holder or is gone,
  // or it has not been renewed for longer than others wait before they take it over (a process
  // stalled, a volume hung). A holder that lost its lease must stop and change nothing more.
  bool lost() const;
  const std::string& path() const { return path_; }

  // Whether the lease file at `path` is dead (a missing file is dead).
  static bool IsDead(const std::string& path, std::chrono::seconds dead_after = kDeadAfter);

 private:
  Lease(std::string path, std::string holder)
      : path_(std::move(path)), holder_(std::move(holder)) {}
  void StartRenewing();
  std::string path_;
  std::string holder_;  // the file's content while it is this process's
  std::atomic<bool> lost_{false};
  std::atomic<int64_t> renewed_ms_{0};  // steady clock, ms: the last renewal
  std::mutex mu_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread renewer_;
};

// The result directory of a distributed job, published atomically (docs/design.md §6.2): workers
// write their parts into a hidden staging directory beside DIR; the master checks every part,
// adds `_SUCCESS` and swaps the symlink DIR over to the job's directory with one rename. A reader
// of DIR sees the previous complete result or the new one, never a mixture; a failed job's
// directory is removed.
struct JobOutput {
  std::string link;     // DIR as given (made absolute)
  std::string staging;  // where the parts are written during the job
  std::string final;    // the published job directory DIR points to
  std::string lease;    // the staging directory's lease, beside it
};

// Checks that DIR is free (or an empty directory) or a previous result link.
absl::Status CheckOutput(const std::string& dir);
// A job's staging, made: where it is, and the lease held on it while the job runs.
struct PreparedOutput {
  JobOutput output;
  std::unique_ptr<Lease> lease;
};
// Checks DIR as CheckOutput does, removes the staging directories of dead masters beside it (never
// one whose lease is live), takes the job's lease and creates its staging directory.
absl::StatusOr<PreparedOutput> PrepareOutput(const std::string& dir, const std::string& job_id);
// Checks that the result file at `path` holds what its worker reported: it exists, has that many
// bytes and lines, and that CRC-32C.
absl::Status VerifyResultFile(const std::string& path, const runner::OutputSummary& reported);
// Writes `_SUCCESS` with `success_json`, then points DIR at the job's directory and removes the
// previously published one.
absl::Status PublishOutput(const JobOutput& output, const std::string& success_json);
// Removes the staging directory and everything in it.
void DiscardOutput(const JobOutput& output);

// "part-00003": the file of worker 3.
std::string ResultFileName(uint32_t worker_index);

}  // namespace lockstep::dbsp::job
