// `lockstep args...` run to its end in a directory, for the integration tests that need only its
// exit code and what it logged.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cluster.h"

namespace lockstep::testing {

struct Ran {
  int exit_code = -1;
  std::string log;  // stdout and stderr
};

// `lockstep args...` in `dir`, logging under dir/logs; fails the test if it runs past 60 s.
inline Ran RunLockstep(const fs::path& dir, const std::vector<std::string>& args) {
  static int runs = 0;
  fs::create_directories(dir / "logs");
  auto p = Process::Start(LOCKSTEP_BINARY, args,
                          {.cwd = dir, .log = dir / "logs" / (std::to_string(runs++) + ".log")});
  const std::optional<int> code = p->Wait(60s);
  EXPECT_TRUE(code.has_value()) << p->command() << " still runs";
  return {code.value_or(-1), p->Log()};
}

}  // namespace lockstep::testing
