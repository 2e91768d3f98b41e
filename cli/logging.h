#pragma once

// Where the commands' logs go and how a line looks: stderr, "[time] [level] message", or one JSON
// object a line for log collectors (--log-format json).
#include <string>

#include "CLI/CLI.hpp"

namespace lockstep::cli {

// The process's logger, before anything logs: stderr, the text pattern, the level from
// LOCKSTEP_LOG (trace, debug, info, warn, error) when set.
void SetUpLogging();

// Adds --log-format to the top-level command; `format` holds its value once parsed.
void AddLogFormatOption(CLI::App& cli, std::string& format);

// Applies a parsed --log-format: "json" makes every line one JSON object, {"time", "level",
// "job" (when the line is about one), "msg"}; "text" keeps SetUpLogging's pattern.
void ApplyLogFormat(const std::string& format);

}  // namespace lockstep::cli
