#include "job/checkpoint_files.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/checkpoint.h"
#include "obs/phase_time.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp::job {

CheckpointFiles::~CheckpointFiles() { (void)Wait(); }

absl::Status CheckpointFiles::Wait() {
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

absl::Status CheckpointFiles::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

namespace {
// The checkpoint writer's nice value (the lowest priority).
constexpr int kCheckpointWriterNice = 19;
}  // namespace

absl::Status CheckpointFiles::Submit(uint64_t superstep, std::string dir, std::string path,
                                     std::string bytes, std::string index_path, std::string index,
                                     std::string log_tag) {
  if (auto st = Wait(); !st.ok()) return st;
  thread_ = std::thread([this, superstep, dir = std::move(dir), path = std::move(path),
                         bytes = std::move(bytes), index_path = std::move(index_path),
                         index = std::move(index), log_tag = std::move(log_tag)] {
    // Background work: the write takes the CPU the supersteps leave (their barrier waits), not
    // theirs. Linux applies a nice value to the calling thread alone.
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kCheckpointWriterNice);
    const auto start = PhaseTime::Clock::now();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    absl::Status st = ec ? absl::UnavailableError(absl::StrCat("cannot make checkpoint directory ",
                                                               dir, ": ", ec.message()))
                         : absl::OkStatus();
    if (st.ok() && !index.empty()) st = bsp::WriteCheckpointFile(index_path, index);
    if (st.ok()) st = bsp::WriteCheckpointFile(path, bytes);
    spdlog::debug(
        "{}checkpoint before superstep {}: wrote {} bytes in {:.1f} ms", log_tag, superstep,
        bytes.size() + index.size(),
        std::chrono::duration<double, std::milli>(PhaseTime::Clock::now() - start).count());
    std::lock_guard<std::mutex> lock(mu_);
    if (st.ok()) {
      written_.store(superstep);
    } else if (status_.ok()) {
      status_ = st;
    }
  });
  return absl::OkStatus();
}

}  // namespace lockstep::dbsp::job
