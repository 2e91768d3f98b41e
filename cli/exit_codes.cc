#include "exit_codes.h"

#include "spdlog/spdlog.h"

namespace lockstep::cli {

std::string Message(const absl::Status& status) { return std::string(status.message()); }

int Fail(const absl::Status& status, int code) {
  spdlog::error("{}", Message(status));
  return code;
}

int UsageError(const absl::Status& status) { return Fail(status, kExitUsage); }

}  // namespace lockstep::cli
