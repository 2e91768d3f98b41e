#pragma once

// The exit codes of every command (README, "Exit codes"), and the one way a command reports the
// error it exits with: logged, then its code returned to Main.
#include <string>

#include "absl/status/status.h"

namespace lockstep::cli {

// 0 success; 1 the job (or the command's work) failed; 2 the command line or its configuration is
// wrong and nothing was started.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
// A master refused to drive a job that another live master drives (docs/design.md §7.7).
inline constexpr int kExitDriven = 3;

// The status's message alone, as a log line shows it.
std::string Message(const absl::Status& status);

// Logs `status` as an error and returns `code`.
int Fail(const absl::Status& status, int code = kExitFailed);
// Fail with kExitUsage.
int UsageError(const absl::Status& status);

}  // namespace lockstep::cli
