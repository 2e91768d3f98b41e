#pragma once

// A Graphalytics graph's .properties file (LDBC Graphalytics): the keys the loader and the command
// line read, with the lines that gave them for errors.

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace lockstep::load {

// The properties of a Graphalytics graph with their "graph.<name>." prefix removed. The file must
// describe one graph, with a vertex file and `directed` set to "true" or "false"; otherwise the
// error names the file (and line).
absl::StatusOr<std::map<std::string, std::string>> ReadGraphalyticsProperties(
    const std::string& path);
// A property as its file gives it, so that an error about its value can name the line and key.
struct PropertyLine {
  std::string value;
  uint64_t line = 0;  // the line that gave it (the last, if the key is repeated)
  std::string key;    // as the file spells it (a Graphalytics key with its "graph.<name>.")
};
// As ReadGraphalyticsProperties, with each property's line and key.
absl::StatusOr<std::map<std::string, PropertyLine>> ReadGraphalyticsPropertyLines(
    const std::string& path);

// Reads a Java-style properties file (key = value, '#' and '!' comments).
absl::StatusOr<std::map<std::string, std::string>> ReadProperties(const std::string& path);

}  // namespace lockstep::load
