// A Graphalytics graph's .properties file and the vertex and edge files it names.
#include "lockstep/load/graphalytics.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/text.h"
#include "text/parse.h"

namespace lockstep::load {
namespace {

using bsp::kQuotedTokenBytes;
using bsp::SanitizeForLog;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Reads a Java-style properties file: "key = value" or "key : value", '#' and '!' comments.
absl::StatusOr<std::map<std::string, PropertyLine>> ReadPropertyLines(const std::string& path) {
  auto data = bsp::ReadFile(path);
  if (!data.ok()) return data.status();
  std::map<std::string, PropertyLine> props;
  std::string_view text = *data;
  uint64_t line_no = 0;
  auto trim = [](std::string_view s) {
    while (!s.empty() && (text::IsBlank(s.front()))) s.remove_prefix(1);
    while (!s.empty() && (text::IsBlank(s.back()))) s.remove_suffix(1);
    return s;
  };
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line[0] == '#' || line[0] == '!') continue;
    size_t eq = line.find_first_of("=:");
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_no, ": expected 'key = value'"));
    }
    std::string key(trim(line.substr(0, eq)));
    props[key] = {std::string(trim(line.substr(eq + 1))), line_no, key};
  }
  return props;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ReadProperties(const std::string& path) {
  auto lines = ReadPropertyLines(path);
  if (!lines.ok()) return lines.status();
  std::map<std::string, std::string> props;
  for (auto& [key, property] : *lines) props[key] = std::move(property.value);
  return props;
}

absl::StatusOr<std::map<std::string, PropertyLine>> ReadGraphalyticsPropertyLines(
    const std::string& path) {
  auto props = ReadPropertyLines(path);
  if (!props.ok()) return props.status();
  // Every key is "graph.<name>.<key>"; the graph's name is whatever stands before ".vertex-file".
  std::string prefix;
  for (const auto& [key, property] : *props) {
    if (!key.starts_with("graph.") || !EndsWith(key, ".vertex-file")) continue;
    const std::string name = key.substr(0, key.size() - std::string_view("vertex-file").size());
    if (!prefix.empty()) {
      // Which graph would run would depend on the names' order: say so instead.
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", property.line, ": ", SanitizeForLog(key, 200),
                       " names a second graph (", SanitizeForLog(prefix, 200),
                       "vertex-file is the first); a .properties file describes "
                       "one graph"));
    }
    prefix = name;
  }
  if (prefix.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no graph.<name>.vertex-file property"));
  }
  std::map<std::string, PropertyLine> stripped;
  for (auto& [key, property] : *props) {
    if (key.starts_with(prefix)) stripped[key.substr(prefix.size())] = std::move(property);
  }
  // Graphalytics spells it "true" or "false"; anything else (a typo, "False", nothing) used to run
  // the graph as directed, which gives wrong results without a word.
  auto directed = stripped.find("directed");
  if (directed == stripped.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no ", prefix, "directed property (expected true or false)"));
  }
  if (directed->second.value != "true" && directed->second.value != "false") {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ":", directed->second.line, ": ", prefix, "directed is '",
        SanitizeForLog(directed->second.value, kQuotedTokenBytes), "', expected true or false"));
  }
  return stripped;
}

absl::StatusOr<std::map<std::string, std::string>> ReadGraphalyticsProperties(
    const std::string& path) {
  auto lines = ReadGraphalyticsPropertyLines(path);
  if (!lines.ok()) return lines.status();
  std::map<std::string, std::string> props;
  for (auto& [key, property] : *lines) props[key] = std::move(property.value);
  return props;
}

namespace text {

std::string FileBeside(const std::string& properties, const std::string& name) {
  if (name.starts_with("/")) return name;
  const size_t slash = properties.rfind('/');
  return (slash == std::string::npos ? std::string(".") : properties.substr(0, slash)) + "/" + name;
}

absl::StatusOr<GraphalyticsFiles> ResolveGraphalytics(const GraphSource& source) {
  auto props = ReadGraphalyticsProperties(source.path);
  if (!props.ok()) return props.status();
  GraphalyticsFiles files;
  files.properties = std::move(*props);
  auto file_of = [&](const char* key) -> absl::StatusOr<std::string> {
    auto it = files.properties.find(key);
    if (it == files.properties.end()) {
      return absl::InvalidArgumentError(absl::StrCat(source.path, ": no graph.<name>.", key));
    }
    return FileBeside(source.path, it->second);
  };
  auto vfile = file_of("vertex-file");
  if (!vfile.ok()) return vfile.status();
  auto efile = file_of("edge-file");
  if (!efile.ok()) return efile.status();
  files.vertex_file = std::move(*vfile);
  files.edge_file = std::move(*efile);
  files.directed = files.properties.at("directed") == "true";  // checked: "true" or "false"
  return files;
}

}  // namespace text
}  // namespace lockstep::load
