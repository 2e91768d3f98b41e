#include "lockstep/cli/top.h"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "lockstep/bsp/graph_input.h"

namespace lockstep::cli {

absl::Status PrintTop(const std::string& path, size_t top, std::string_view unreachable,
                      std::ostream& out) {
  auto text = bsp::ReadFile(path);
  if (!text.ok()) return text.status();
  struct Row {
    double value;
    std::string_view id, text;
  };
  std::vector<Row> rows;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    const size_t sp = line.rfind(' ');
    if (sp == std::string_view::npos) continue;
    const std::string_view value = line.substr(sp + 1);
    // Unreachable is the largest value an app with a source writes (Infinity, INT64_MAX), never
    // one of the largest found.
    if (!unreachable.empty() && value == unreachable) continue;
    rows.push_back({std::strtod(std::string(value).c_str(), nullptr), line.substr(0, sp), value});
  }
  const size_t k = std::min(top, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(k), rows.end(),
                    [](const Row& a, const Row& b) {
                      if (a.value != b.value) return a.value > b.value;
                      return bsp::ExternalIdLess(a.id, b.id);
                    });
  for (size_t i = 0; i < k; ++i) out << rows[i].id << ' ' << rows[i].text << '\n';
  return absl::OkStatus();
}

}  // namespace lockstep::cli
