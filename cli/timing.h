#pragma once

// The seconds a command's log lines report.
#include <chrono>

namespace lockstep::cli {

inline double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace lockstep::cli
