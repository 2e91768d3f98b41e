#include "lockstep/validate/validate.h"

#include <strings.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/text.h"

namespace lockstep::validate {
namespace {

using Values = std::unordered_map<std::string, std::string>;

// Reads "id value" lines of a file, or of every result file of a result directory.
absl::Status ReadValues(const std::string& path, Values& out) {
  std::vector<std::string> files;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && !name.starts_with("_") && !name.starts_with(".")) {
        files.push_back(entry.path().string());
      }
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  for (const std::string& file : files) {
    auto text = bsp::ReadFile(file);
    if (!text.ok()) return text.status();
    std::string_view rest = *text;
    uint64_t line_no = 0;
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      ++line_no;
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      if (line.empty()) continue;
      const size_t sp = line.find_first_of(" \t");
      if (sp == std::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ":", line_no, ": expected 'vertex value'"));
      }
      std::string_view value = line.substr(sp + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
        value.remove_prefix(1);
      }
      if (!out.emplace(std::string(line.substr(0, sp)), std::string(value)).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            file, ":", line_no, ": vertex ",
            bsp::SanitizeForLog(line.substr(0, sp), bsp::kQuotedTokenBytes), " appears twice"));
      }
    }
  }
  return absl::OkStatus();
}

bool ParseNumber(const std::string& text, double& v) {
  if (strcasecmp(text.c_str(), "infinity") == 0 || strcasecmp(text.c_str(), "inf") == 0) {
    v = INFINITY;
    return true;
  }
  char* end = nullptr;
  v = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

}  // namespace

absl::StatusOr<ValidateReport> Validate(const ValidateOptions& o) {
  using catalogue::ValidationRule;
  Values expected, actual;
  if (auto st = ReadValues(o.expected, expected); !st.ok()) return st;
  if (auto st = ReadValues(o.actual, actual); !st.ok()) return st;

  ValidateReport report;
  report.vertices = expected.size();
  std::vector<std::string> ids;
  ids.reserve(expected.size());
  for (const auto& [id, v] : expected) ids.push_back(id);
  std::sort(ids.begin(), ids.end(),
            [](const std::string& a, const std::string& b) { return bsp::ExternalIdLess(a, b); });
  auto mismatch = [&](const std::string& what) {
    if (report.mismatches++ < o.show) report.text += what + "\n";
  };
  for (const auto& [id, v] : actual) {
    if (!expected.contains(id)) mismatch(absl::StrCat("vertex ", id, ": not expected"));
  }
  std::unordered_map<std::string, std::string> forward, backward;  // equivalence: label maps
  for (const std::string& id : ids) {
    const std::string& want = expected[id];
    auto it = actual.find(id);
    if (it == actual.end()) {
      mismatch(absl::StrCat("vertex ", id, ": missing (expected ", want, ")"));
      continue;
    }
    const std::string& got = it->second;
    bool ok;
    if (o.rule == ValidationRule::kEquivalence) {
      auto [f, f_new] = forward.emplace(want, got);
      auto [b, b_new] = backward.emplace(got, want);
      ok = f->second == got && b->second == want;
    } else {
      double e, a;
      const bool numbers = ParseNumber(want, e) && ParseNumber(got, a);
      if (!numbers) {
        ok = want == got;
      } else if (o.rule == ValidationRule::kExact || std::isinf(e) || std::isinf(a)) {
        ok = e == a;
      } else {
        ok = std::abs(e - a) <= o.epsilon * std::abs(e);
      }
    }
    if (!ok) mismatch(absl::StrCat("vertex ", id, ": expected ", want, ", got ", got));
  }
  report.text += absl::StrCat("validate (", std::string(catalogue::RuleName(o.rule)),
                              "): ", report.vertices, " vertices, ", report.mismatches,
                              " mismatches: ", report.mismatches == 0 ? "PASS" : "FAIL", "\n");
  return report;
}

}  // namespace lockstep::validate
