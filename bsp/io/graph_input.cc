// Parallel loading of edge lists and LDBC Graphalytics graphs into a GraphInput.
//
// The file is read whole and cut into chunks at line boundaries; each chunk is parsed on its own
// task. Integer IDs (the common case) take a fast path: lines of two integers and an optional
// integer weight are scanned in one pass, IDs are held in 32 bits while they fit, and the
// dictionary is a direct table when the largest ID is not much larger than the number of
// endpoints, otherwise a parallel sort. Any other ID sends every chunk through the general path
// that keeps the token text. An undirected input keeps each edge once (GraphInput::symmetric).
#include "lockstep/bsp/graph_input.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "io/parse.h"
#include "lockstep/bsp/part_files.h"
#include "lockstep/bsp/text.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"
#include "tbb/task_arena.h"

namespace lockstep::bsp {
namespace io {

std::string ListedTwiceMessage(std::string_view token, uint64_t first_line) {
  return absl::StrCat("vertex ", SanitizeForLog(token, kQuotedTokenBytes),
                      " is listed twice (first on line ", first_line, ")");
}

std::string UnlistedVertexMessage(std::string_view token, const std::string& vertex_file) {
  return absl::StrCat("vertex ", SanitizeForLog(token, kQuotedTokenBytes), " is not listed in ",
                      vertex_file);
}

std::string MissingWeightMessage(std::string_view error_file, std::string_view weight_file,
                                 uint64_t weight_line) {
  // Debian's absl::string_view is not std::string_view: the files go through std::string.
  const std::string where = error_file == weight_file ? "line " : std::string(weight_file) + ":";
  return absl::StrCat("missing weight (", where, weight_line, " has one, so every edge needs one)");
}

std::string BadWeightMessage(double weight, std::string_view token) {
  return absl::StrCat(weight < 0 ? "negative" : "infinite", " weight ",
                      SanitizeForLog(token, kQuotedTokenBytes),
                      " (the app needs finite weights >= 0)");
}

// Sorts the stored edges by (source, target, weight): global indexes follow the external IDs'
// order, so the result does not depend on the order the edges came in.
void SortStoredEdges(GraphInput& g) {
  const size_t m = g.src.size();
  std::vector<uint64_t> keys(m);
  tbb::parallel_for(size_t{0}, m, [&](size_t e) { keys[e] = uint64_t{g.src[e]} << 32 | g.dst[e]; });
  if (g.weights.empty()) {
    tbb::parallel_sort(keys.begin(), keys.end());
  } else {
    std::vector<std::pair<uint64_t, double>> rows(m);
    tbb::parallel_for(size_t{0}, m, [&](size_t e) { rows[e] = {keys[e], g.weights[e]}; });
    tbb::parallel_sort(rows.begin(), rows.end());
    tbb::parallel_for(size_t{0}, m, [&](size_t e) {
      keys[e] = rows[e].first;
      g.weights[e] = rows[e].second;
    });
  }
  tbb::parallel_for(size_t{0}, m, [&](size_t e) {
    g.src[e] = static_cast<uint32_t>(keys[e] >> 32);
    g.dst[e] = static_cast<uint32_t>(keys[e]);
  });
}

}  // namespace io

namespace {

using io::Dictionary;
using io::FileKind;
using io::IdMode;
using io::IsBlank;
using io::kNoIndex;
using io::ParsedChunk;
using io::ParsedFile;
using io::ParseFile;

// A vertex file lists each vertex once. The dictionary folds repeats together, so a size short of
// the number of lines means a repeat; only then is the file walked again to find its line.
absl::Status CheckDistinct(const ParsedFile& vertices, const Dictionary& dict) {
  size_t listed = 0;
  for (const auto& ch : vertices.chunks) listed += ch.num_ids(vertices.mode);
  if (dict.size() == listed) return absl::OkStatus();
  auto index_of = [&](const ParsedChunk& ch, size_t i) {
    switch (vertices.mode) {
      case IdMode::kNarrow:
        return dict.Find(uint64_t{ch.narrow[i]});
      case IdMode::kWide:
        return dict.Find(ch.wide[i]);
      case IdMode::kText:
        break;
    }
    return dict.Find(ch.strs[i]);
  };
  std::vector<bool> seen(dict.size(), false);
  for (size_t c = 0; c < vertices.chunks.size(); ++c) {
    const auto& ch = vertices.chunks[c];
    for (size_t i = 0; i < ch.num_ids(vertices.mode); ++i) {
      const uint32_t v = index_of(ch, i);
      if (!seen[v]) {
        seen[v] = true;
        continue;
      }
      std::string_view tok[3];
      const uint64_t line = vertices.RecordLine(c, i, tok);
      // The first listing of the same vertex, for the message.
      uint64_t first_line = 0;
      for (size_t fc = 0; fc <= c && first_line == 0; ++fc) {
        const auto& fch = vertices.chunks[fc];
        for (size_t fi = 0; fi < fch.num_ids(vertices.mode); ++fi) {
          if (index_of(fch, fi) != v) continue;
          std::string_view ftok[3];
          first_line = vertices.LineOf(fc, vertices.RecordLine(fc, fi, ftok));
          break;
        }
      }
      return vertices.ErrorAt(c, line, io::ListedTwiceMessage(tok[0], first_line));
    }
  }
  return absl::InternalError("the vertex dictionary lost a vertex");
}

// Resolves the endpoints of an edge file against `dict`. An endpoint missing from the dictionary
// is an error naming its line and `vertex_file`.
absl::Status MapEdges(const ParsedFile& edges, const Dictionary& dict,
                      const std::string& vertex_file, GraphInput& out) {
  std::vector<size_t> first_edge(edges.chunks.size() + 1, 0);
  for (size_t c = 0; c < edges.chunks.size(); ++c) {
    const auto& ch = edges.chunks[c];
    first_edge[c + 1] = first_edge[c] + ch.num_ids(edges.mode) / 2;
  }
  const size_t m = first_edge.back();
  if (m >= kNoIndex) return absl::OutOfRangeError("more than 2^32-1 edges are not supported");
  out.src.resize(m);
  out.dst.resize(m);
  std::vector<int64_t> bad_edge(edges.chunks.size(), -1);
  tbb::parallel_for(size_t{0}, edges.chunks.size(), [&](size_t c) {
    const auto& ch = edges.chunks[c];
    const size_t n = first_edge[c + 1] - first_edge[c];
    for (size_t i = 0; i < n; ++i) {
      uint32_t s, d;
      if (edges.mode == IdMode::kNarrow) {
        s = dict.Find(uint64_t{ch.narrow[2 * i]});
        d = dict.Find(uint64_t{ch.narrow[2 * i + 1]});
      } else if (edges.mode == IdMode::kWide) {
        s = dict.Find(ch.wide[2 * i]);
        d = dict.Find(ch.wide[2 * i + 1]);
      } else {
        s = dict.Find(ch.strs[2 * i]);
        d = dict.Find(ch.strs[2 * i + 1]);
      }
      if (s == kNoIndex || d == kNoIndex) {
        bad_edge[c] = static_cast<int64_t>(i);
        return;
      }
      out.src[first_edge[c] + i] = s;
      out.dst[first_edge[c] + i] = d;
    }
  });
  for (size_t c = 0; c < edges.chunks.size(); ++c) {
    if (bad_edge[c] < 0) continue;
    if (!edges.data) return absl::InternalError("an edge names an unknown vertex");
    std::string_view tok[3];
    const uint64_t line = edges.RecordLine(c, static_cast<size_t>(bad_edge[c]), tok);
    const std::string_view missing = dict.Find(tok[0]) == kNoIndex ? tok[0] : tok[1];
    return edges.ErrorAt(c, line, io::UnlistedVertexMessage(missing, vertex_file));
  }
  return absl::OkStatus();
}

absl::Status CollectWeights(const ParsedFile& edges, WeightUse use, GraphInput& out) {
  if (use == WeightUse::kIgnore) return absl::OkStatus();
  std::optional<std::pair<size_t, uint64_t>> with, without;
  for (size_t c = 0; c < edges.chunks.size(); ++c) {
    const auto& ch = edges.chunks[c];
    if (!with && ch.first_with_weight) with = {{c, ch.first_with_weight}};
    if (!without && ch.first_without_weight) without = {{c, ch.first_without_weight}};
  }
  if (!with) return absl::OkStatus();  // unweighted: the app uses its default weight
  if (without) {
    const auto [error_file, error_line] =
        io::Locate(edges.path, edges.pieces, edges.LineOf(without->first, without->second));
    const auto [weight_file, weight_line] =
        io::Locate(edges.path, edges.pieces, edges.LineOf(with->first, with->second));
    return absl::InvalidArgumentError(
        absl::StrCat(*error_file, ":", error_line, ": ",
                     io::MissingWeightMessage(*error_file, *weight_file, weight_line)));
  }
  out.weights.reserve(out.src.size());
  for (size_t c = 0; c < edges.chunks.size(); ++c) {
    const auto& ch = edges.chunks[c];
    for (size_t i = 0; i < ch.weights.size(); ++i) {
      if (ch.weights[i] < 0 || std::isinf(ch.weights[i])) {
        std::string_view tok[3];
        const uint64_t line = edges.RecordLine(c, i, tok);
        return edges.ErrorAt(c, line, io::BadWeightMessage(ch.weights[i], tok[2]));
      }
    }
    out.weights.insert(out.weights.end(), ch.weights.begin(), ch.weights.end());
  }
  return absl::OkStatus();
}

// Stores the reverse of every non-loop edge after the edges (see GraphInput).
void StoreReverseEdges(GraphInput& g) {
  // In parallel and in a fixed order: block b's reverses go after blocks 0..b-1's.
  const size_t m = g.src.size();
  const size_t block = 1 << 16;
  const size_t blocks = (m + block - 1) / block;
  std::vector<size_t> first(blocks + 1, 0);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    size_t n = 0;
    for (size_t i = b * block; i < std::min(m, (b + 1) * block); ++i) n += g.src[i] != g.dst[i];
    first[b + 1] = n;
  });
  for (size_t b = 0; b < blocks; ++b) first[b + 1] += first[b];
  const bool weighted = !g.weights.empty();
  g.src.resize(m + first[blocks]);
  g.dst.resize(m + first[blocks]);
  if (weighted) g.weights.resize(m + first[blocks]);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    size_t out = m + first[b];
    for (size_t i = b * block; i < std::min(m, (b + 1) * block); ++i) {
      if (g.src[i] == g.dst[i]) continue;
      g.src[out] = g.dst[i];
      g.dst[out] = g.src[i];
      if (weighted) g.weights[out] = g.weights[i];
      ++out;
    }
  });
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Reads a Java-style properties file: "key = value" or "key : value", '#' and '!' comments.
absl::StatusOr<std::map<std::string, PropertyLine>> ReadPropertyLines(const std::string& path) {
  auto data = ReadFile(path);
  if (!data.ok()) return data.status();
  std::map<std::string, PropertyLine> props;
  std::string_view text = *data;
  uint64_t line_no = 0;
  auto trim = [](std::string_view s) {
    while (!s.empty() && (IsBlank(s.front()))) s.remove_prefix(1);
    while (!s.empty() && (IsBlank(s.back()))) s.remove_suffix(1);
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

// The graph of an edge list, parsed.
absl::StatusOr<GraphInput> EdgeListGraph(absl::StatusOr<ParsedFile> edges, const std::string& name,
                                         bool undirected, WeightUse use) {
  if (!edges.ok()) return edges.status();
  Dictionary dict;
  if (edges->integer_mode()) {
    dict.BuildIntegers(edges->chunks, edges->mode);
  } else {
    dict.BuildText(edges->chunks);
  }
  if (dict.size() >= kNoIndex) return absl::OutOfRangeError("more than 2^32-1 vertices");
  GraphInput g;
  g.directed = !undirected;
  if (auto st = CollectWeights(*edges, use, g); !st.ok()) return st;
  if (edges->integer_mode()) {
    // Every ID is in the dictionary and the weights are checked: the text is no longer needed,
    // and dropping it before the edge arrays are allocated lowers the peak memory of a load.
    edges->data.reset();
  }
  if (auto st = MapEdges(*edges, dict, name, g); !st.ok()) return st;
  std::vector<ParsedChunk>().swap(edges->chunks);
  g.external_ids = dict.Names();
  return g;
}

absl::StatusOr<GraphInput> LoadEdgeList(const GraphSource& source, WeightUse use) {
  auto g = EdgeListGraph(io::ParseEdgeInput(source.path, use != WeightUse::kIgnore), source.path,
                         source.undirected, use);
  if (g.ok() && source.undirected) MakeSymmetric(*g);
  return g;
}

// Parses one of a graph's inputs: (kind, keep_weights, allow_integer_mode).
using ParseInput = std::function<absl::StatusOr<ParsedFile>(FileKind, bool, bool)>;

// The graph of a vertex list and an edge list (Graphalytics' .v and .e), parsed on demand: the
// vertex list names the vertices, and an edge naming another is an error naming `vertices_name`.
absl::StatusOr<GraphInput> ListedGraph(const ParseInput& parse_vertices,
                                       const ParseInput& parse_edges,
                                       const std::string& vertices_name, WeightUse use) {
  GraphInput g;
  auto vertices = parse_vertices(FileKind::kVertices, false, true);
  if (!vertices.ok()) return vertices.status();
  // Edges are parsed in the vertices' mode so that lookups compare like with like.
  auto edges = parse_edges(FileKind::kEdges, use != WeightUse::kIgnore, vertices->integer_mode());
  if (!edges.ok()) return edges.status();
  if (vertices->integer_mode() && !edges->integer_mode()) {
    // An edge names a non-integer ID, which an all-integer vertex list cannot list. Reading the
    // vertices as text lets MapEdges report that edge's line like any other unlisted vertex.
    vertices = parse_vertices(FileKind::kVertices, false, false);
    if (!vertices.ok()) return vertices.status();
  }
  Dictionary dict;
  if (vertices->integer_mode()) {
    dict.BuildIntegers(vertices->chunks, vertices->mode);
  } else {
    dict.BuildText(vertices->chunks);
  }
  if (auto st = CheckDistinct(*vertices, dict); !st.ok()) return st;
  if (auto st = MapEdges(*edges, dict, vertices_name, g); !st.ok()) return st;
  if (auto st = CollectWeights(*edges, use, g); !st.ok()) return st;
  g.external_ids = dict.Names();
  return g;
}

absl::StatusOr<GraphInput> LoadGraphalytics(const GraphSource& source, WeightUse use) {
  auto files = io::ResolveGraphalytics(source);
  if (!files.ok()) return files.status();
  const std::string& vfile = files->vertex_file;
  const std::string& efile = files->edge_file;
  auto g =
      ListedGraph([&](FileKind kind, bool w, bool ints) { return ParseFile(vfile, kind, w, ints); },
                  [&](FileKind kind, bool w, bool ints) { return ParseFile(efile, kind, w, ints); },
                  vfile, use);
  if (!g.ok()) return g;
  g->properties = std::move(files->properties);
  g->directed = files->directed;
  if (!g->directed) MakeSymmetric(*g);
  return g;
}

// A graph whose text comes from a GraphTextSource (a database): parsed as an edge list, or as a
// vertex and an edge list, with errors naming the table and row.
absl::StatusOr<GraphInput> LoadGraphText(const GraphSource& source, WeightUse use) {
  auto text = source.text->ReadAll(use != WeightUse::kIgnore);
  if (!text.ok()) return text.status();
  // The edges are parsed once and can take the text; the vertices may be parsed twice.
  const auto parser = [](const std::string& name, std::string& data, bool take) {
    return [&name, &data, take](FileKind kind, bool w, bool ints) -> absl::StatusOr<ParsedFile> {
      ParsedFile f = io::ParseTextKeepingErrors(name, take ? std::move(data) : data, kind, w, ints);
      f.rows = true;
      if (auto st = f.FirstError(); !st.ok()) return st;
      return f;
    };
  };
  const auto edges = parser(text->edges_name, text->edges, true);
  absl::StatusOr<GraphInput> g =
      text->has_vertices ? ListedGraph(parser(text->vertices_name, text->vertices, false), edges,
                                       text->vertices_name, use)
                         : EdgeListGraph(edges(FileKind::kEdges, use != WeightUse::kIgnore, true),
                                         text->edges_name, source.undirected, use);
  if (!g.ok()) return g;
  g->directed = !source.undirected;
  io::SortStoredEdges(*g);
  if (source.undirected) MakeSymmetric(*g);
  return g;
}

}  // namespace

GraphInput WithReverseEdges(const GraphInput& input) {
  GraphInput g = input;
  if (g.symmetric) {
    StoreReverseEdges(g);
    g.symmetric = false;
    g.num_reverse = 0;
  }
  return g;
}

void MakeSymmetric(GraphInput& g) {
  const size_t m = g.src.size();
  const size_t block = 1 << 16;
  std::vector<size_t> loops((m + block - 1) / block, 0);
  tbb::parallel_for(size_t{0}, loops.size(), [&](size_t b) {
    size_t n = 0;
    for (size_t i = b * block; i < std::min(m, (b + 1) * block); ++i) n += g.src[i] == g.dst[i];
    loops[b] = n;
  });
  size_t total = 0;
  for (size_t n : loops) total += n;
  g.symmetric = true;
  g.num_reverse = m - total;
}

bool ParseIntegerId(std::string_view text, uint64_t& value) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

bool ExternalIdLess(std::string_view a, std::string_view b) {
  uint64_t x, y;
  const bool ai = ParseIntegerId(a, x);
  const bool bi = ParseIntegerId(b, y);
  if (ai != bi) return ai;
  if (ai) return x < y;
  return a < b;
}

bool HasVertex(const GraphInput& input, std::string_view external) {
  auto it = std::lower_bound(
      input.external_ids.begin(), input.external_ids.end(), external,
      [](const std::string& a, std::string_view b) { return ExternalIdLess(a, b); });
  return it != input.external_ids.end() && *it == external;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::string data;
  char buf[1 << 16];
  size_t n;
  // Reserve only what a regular file holds: fopen accepts a directory on Linux, and seeking to its
  // end reports LLONG_MAX on ext4, which made reserve() throw instead of this returning an error.
  struct stat info;
  if (::fstat(::fileno(f), &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    data.reserve(static_cast<size_t>(info.st_size));
  }
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return data;
}

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

bool IsGraphalytics(const GraphSource& source) {
  return source.format == "graphalytics" ||
         (source.format.empty() && EndsWith(source.path, ".properties"));
}

absl::StatusOr<GraphInput> LoadGraph(const GraphSource& source, WeightUse weights) {
  // A directory with a manifest holds the graph's partitioned binary form (part_files.h).
  if (IsPartitionedGraph(source.path)) return LoadPartFiles(source, weights);
  if (source.text) return LoadGraphText(source, weights);
  const std::string format = IsGraphalytics(source)  ? "graphalytics"
                             : source.format.empty() ? "edgelist"
                                                     : source.format;
  if (format == "edgelist") return LoadEdgeList(source, weights);
  if (format == "graphalytics") return LoadGraphalytics(source, weights);
  return absl::InvalidArgumentError(absl::StrCat("graph format: unknown format '", format,
                                                 "' (expected edgelist or graphalytics)"));
}

namespace io {

absl::StatusOr<GraphalyticsFiles> ResolveGraphalytics(const GraphSource& source) {
  auto props = ReadGraphalyticsProperties(source.path);
  if (!props.ok()) return props.status();
  GraphalyticsFiles files;
  files.properties = std::move(*props);
  const std::string dir = Dirname(source.path);
  auto file_of = [&](const char* key) -> absl::StatusOr<std::string> {
    auto it = files.properties.find(key);
    if (it == files.properties.end()) {
      return absl::InvalidArgumentError(absl::StrCat(source.path, ": no graph.<name>.", key));
    }
    return it->second.starts_with("/") ? it->second : dir + "/" + it->second;
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

}  // namespace io

uint64_t EstimateLoadBytes(const GraphSource& source) {
  auto size_of = [](const std::string& path) -> uint64_t {
    struct stat info;
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode)
               ? static_cast<uint64_t>(info.st_size)
               : 0;
  };
  uint64_t bytes = 0;
  if (IsPartitionedGraph(source.path)) {
    // The mapped files and the arrays laid out from them.
    auto facts = ReadPartGraphFacts(source.path);
    return facts.ok() ? 2 * facts->data_bytes : 0;
  }
  if (IsGraphalytics(source)) {
    auto props = ReadGraphalyticsProperties(source.path);
    if (!props.ok()) return 0;
    const std::string dir = Dirname(source.path);
    for (const char* key : {"vertex-file", "edge-file"}) {
      auto it = props->find(key);
      if (it == props->end()) continue;
      bytes += size_of(it->second.starts_with("/") ? it->second : dir + "/" + it->second);
    }
  } else if (io::IsDirectory(source.path)) {
    auto files = io::ListEdgeFiles(source.path);
    if (!files.ok()) return 0;
    for (const io::InputFile& f : *files) bytes += f.size;
  } else {
    bytes = size_of(source.path);
  }
  // The text, the IDs parsed from it (up to 16 bytes per short line) and the edge arrays.
  return 3 * bytes;
}

}  // namespace lockstep::bsp
