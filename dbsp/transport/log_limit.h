#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"

namespace lockstep::dbsp::transport {

// At most a log line a second for something a peer can make happen at will (a refused worker, a
// failed handshake): a flood must not flood the log.
class LogLimit {
 public:
  // Nothing if a line went out less than a second ago (it is counted); otherwise what to add to
  // the line: "" or " (and N more since the last)".
  std::optional<std::string> Admit() {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(1)) {
      ++left_out_;
      return std::nullopt;
    }
    std::string suffix =
        left_out_ == 0 ? "" : absl::StrCat(" (and ", left_out_, " more since the last)");
    last_ = now;
    left_out_ = 0;
    return suffix;
  }

 private:
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_{};
  uint64_t left_out_ = 0;
};

}  // namespace lockstep::dbsp::transport
