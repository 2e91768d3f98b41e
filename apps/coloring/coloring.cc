#include "lockstep/apps/coloring/coloring.h"

#include <algorithm>
#include <cstring>

#include "lockstep/runner/program_runner.h"

namespace lockstep::apps::coloring {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t Priority(uint64_t seed, const bsp::VertexId& id) {
  uint64_t a, b;
  std::memcpy(&a, id.data, 8);
  std::memcpy(&b, id.data + 8, 8);
  return SplitMix64(SplitMix64(seed ^ a) ^ b);
}

uint32_t SmallestFree(std::vector<uint32_t>& used) {
  std::sort(used.begin(), used.end());
  uint32_t c = 0;
  for (uint32_t u : used) {
    if (u == c) {
      ++c;
    } else if (u > c) {
      break;
    }
  }
  return c;
}

struct PrecoloredLine {
  std::string vertex;
  uint32_t color = 0;
  uint64_t line = 0;
};

// The 'vertex colour' lines of a pre-colouring file; errors name the file and line.
absl::StatusOr<std::vector<PrecoloredLine>> ReadPrecolored(const std::string& path) {
  auto text = bsp::ReadFile(path);
  if (!text.ok()) return text.status();
  std::vector<PrecoloredLine> lines;
  std::string_view rest = *text;
  uint64_t line_no = 0;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    std::vector<std::string_view> fields;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      const size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      if (i > start) fields.push_back(line.substr(start, i - start));
    }
    if (fields.empty() || fields[0][0] == '#' || fields[0][0] == '%') continue;
    uint64_t color = 0;
    if (fields.size() != 2 || !bsp::ParseIntegerId(fields[1], color) || color > 0x7fffffff) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_no, ": expected 'vertex colour' with a colour >= 0"));
    }
    lines.push_back({std::string(fields[0]), static_cast<uint32_t>(color), line_no});
  }
  return lines;
}

}  // namespace

Program::Key Program::KeyOf(const bsp::VertexId& id, uint32_t degree) const {
  // Most runs have no pre-colouring: no hash lookup then.
  return {!precolored->empty() && precolored->contains(id), degree, &id};
}

bool Program::Before(const Key& a, const Key& b) const {
  if (a.precolored != b.precolored) return a.precolored;
  if (a.degree != b.degree) return a.degree > b.degree;
  const uint64_t pa = Priority(seed, *a.id), pb = Priority(seed, *b.id);
  return pa != pb ? pa > pb : *b.id < *a.id;
}

absl::Status Program::Compute(bsp::Context<Program>& ctx,
                              std::span<const Announcement> messages) const {
  Value& me = ctx.value();
  const auto out = ctx.out_slots();
  const auto in = ctx.in_slots();
  auto for_each_neighbour = [&](auto&& f) {
    for (uint32_t slot : out) {
      if (!ctx.IsSelf(slot)) f(slot);
    }
    for (uint32_t slot : in) {
      if (!ctx.IsSelf(slot)) f(slot);
    }
  };
  if (ctx.superstep() == 0) {
    auto pre = precolored->find(ctx.id());
    if (pre != precolored->end()) {
      me.color = pre->second;
      absl::Status conflict;
      for_each_neighbour([&](uint32_t slot) {
        auto other = precolored->find(ctx.SlotId(slot));
        if (other != precolored->end() && other->second == pre->second && conflict.ok()) {
          conflict = absl::InvalidArgumentError(absl::StrCat("it is pre-coloured ", pre->second,
                                                             " like its neighbour ",
                                                             bsp::ToString(other->first)));
        }
        ctx.Send(slot, Announcement{pre->second});
      });
      ctx.VoteToHalt();
      return conflict;
    }
    const Key mine = KeyOf(ctx.id(), ctx.degree());
    for_each_neighbour([&](uint32_t slot) {
      if (Before(KeyOf(ctx.SlotId(slot), ctx.SlotDegree(slot)), mine)) ++me.waiting;
    });
    if (me.waiting > 0) ctx.VoteToHalt();  // woken by the announcements it waits for
    return absl::OkStatus();
  }
  ctx.VoteToHalt();
  if (me.color >= 0) return absl::OkStatus();
  for (const Announcement& m : messages) me.used.push_back(m.color);
  me.waiting -= static_cast<uint32_t>(std::min<size_t>(me.waiting, messages.size()));
  if (me.waiting > 0) return absl::OkStatus();
  me.color = SmallestFree(me.used);
  me.used = {};
  const uint32_t color = static_cast<uint32_t>(me.color);
  const Key mine = KeyOf(ctx.id(), ctx.degree());
  for_each_neighbour([&](uint32_t slot) {
    if (Before(mine, KeyOf(ctx.SlotId(slot), ctx.SlotDegree(slot)))) {
      ctx.Send(slot, Announcement{color});
    }
  });
  return absl::OkStatus();
}

std::vector<std::string> App::NamedVertices(const bsp::Params& params) {
  const std::string path = bsp::ParamString(params, "precolored");
  std::vector<std::string> names;
  if (path.empty()) return names;
  auto lines = ReadPrecolored(path);
  if (!lines.ok()) return names;
  for (auto& l : *lines) names.push_back(std::move(l.vertex));
  return names;
}

absl::StatusOr<Program> App::Make(const bsp::Params& params, const bsp::GraphFacts& facts) {
  Program p;
  auto seed = bsp::ParamInt(params, "seed");
  if (!seed.ok()) return seed.status();
  p.seed = static_cast<uint64_t>(*seed);
  const std::string path = bsp::ParamString(params, "precolored");
  if (path.empty()) return p;
  auto lines = ReadPrecolored(path);
  if (!lines.ok()) return lines.status();
  auto colors = std::make_shared<Precolored>();
  for (const PrecoloredLine& l : *lines) {
    if (facts.Lacks(l.vertex)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", l.line, ": vertex '", l.vertex, "' is not in the graph"));
    }
    (*colors)[bsp::VertexIdFromExternal(l.vertex)] = l.color;
  }
  p.precolored = std::move(colors);
  return p;
}

catalogue::AppInfo Info() {
  catalogue::AppInfo info;
  info.name = "coloring";
  info.aliases = {"color", "colouring"};
  info.summary = "graph colouring (Jones-Plassmann, seeded random priorities; edges undirected)";
  info.validation = catalogue::ValidationRule::kExact;
  info.values = catalogue::ValueKind::kInteger;
  info.params = {
      {"seed", "42", "seed of the random priorities"},
      {"precolored", "", "file of 'vertex colour' lines whose colours are kept", true},
  };
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<runner::JobRunner> {
    return std::make_unique<runner::ProgramRunner<App>>(report);
  };
  return info;
}

absl::Status Verify(const bsp::GraphInput& stored, const std::vector<int64_t>& colors,
                    const std::map<uint32_t, uint32_t>& precolored) {
  // The verifier reads every directed edge from the arrays.
  const bsp::GraphInput input = bsp::WithReverseEdges(stored);
  const size_t n = input.num_vertices();
  if (colors.size() != n) return absl::InternalError("wrong number of colours");
  std::vector<uint64_t> degree(n, 0);
  for (size_t e = 0; e < input.num_edges(); ++e) {
    const uint32_t u = input.src[e], v = input.dst[e];
    if (u == v) continue;
    ++degree[u];
    ++degree[v];
    if (colors[u] == colors[v]) {
      return absl::InternalError(absl::StrCat("edge ", input.external_ids[u], " - ",
                                              input.external_ids[v], " joins colour ", colors[u]));
    }
  }
  const uint64_t max_degree = n == 0 ? 0 : *std::max_element(degree.begin(), degree.end());
  for (size_t v = 0; v < n; ++v) {
    auto pre = precolored.find(static_cast<uint32_t>(v));
    if (pre != precolored.end()) {
      if (colors[v] != pre->second) {
        return absl::InternalError(
            absl::StrCat("pre-coloured vertex ", input.external_ids[v], " lost its colour"));
      }
      continue;
    }
    if (colors[v] < 0 || static_cast<uint64_t>(colors[v]) > max_degree) {
      return absl::InternalError(absl::StrCat("vertex ", input.external_ids[v], " has colour ",
                                              colors[v], " outside [0, max degree ", max_degree,
                                              "]"));
    }
  }
  return absl::OkStatus();
}

}  // namespace lockstep::apps::coloring
