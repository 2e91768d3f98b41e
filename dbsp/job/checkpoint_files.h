#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"

namespace lockstep::dbsp::job {

// A worker's checkpoint files, written in the background one at a time (docs/design.md §7.6).
class CheckpointFiles {
 public:
  CheckpointFiles() = default;
  CheckpointFiles(const CheckpointFiles&) = delete;
  CheckpointFiles& operator=(const CheckpointFiles&) = delete;
  ~CheckpointFiles();  // waits for the write under way

  // Waits for the write under way (its error, if it failed), then, on a thread of its own, writes
  // `index` to `index_path` unless it is empty, and `bytes` to `path` in `dir` (made if missing).
  absl::Status Submit(uint64_t superstep, std::string dir, std::string path, std::string bytes,
                      std::string index_path, std::string index, std::string log_tag);
  // Waits for the write under way; the first write's error, if one failed.
  absl::Status Wait();
  absl::Status status() const;
  // The superstep of the newest checkpoint written and synced (0: none). Any thread.
  uint64_t written() const { return written_.load(); }

 private:
  std::thread thread_;
  mutable std::mutex mu_;
  absl::Status status_;
  std::atomic<uint64_t> written_{0};
};

}  // namespace lockstep::dbsp::job
