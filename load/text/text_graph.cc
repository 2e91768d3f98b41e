// Parallel loading of edge lists and LDBC Graphalytics graphs into a GraphInput.
//
// The file is read whole and cut into chunks at line boundaries; each chunk is parsed on its own
// task. Integer IDs (the common case) take a fast path: lines of two integers and an optional
// integer weight are scanned in one pass, IDs are held in 32 bits while they fit, and the
// dictionary is a direct table when the largest ID is not much larger than the number of
// endpoints, otherwise a parallel sort. Any other ID sends every chunk through the general path
// that keeps the token text. An undirected input keeps each edge once (GraphInput::symmetric).
#include "text/text_graph.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"
#include "text/both_listed.h"
#include "text/dictionary.h"
#include "text/messages.h"
#include "text/parse.h"

namespace lockstep::load::text {

using bsp::kQuotedTokenBytes;
using bsp::SanitizeForLog;
using bsp::WeightUse;

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

namespace {

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
      return vertices.ErrorAt(c, line, ListedTwiceMessage(tok[0], first_line));
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
    return edges.ErrorAt(c, line, UnlistedVertexMessage(missing, vertex_file));
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
        Locate(edges.path, edges.pieces, edges.LineOf(without->first, without->second));
    const auto [weight_file, weight_line] =
        Locate(edges.path, edges.pieces, edges.LineOf(with->first, with->second));
    return absl::InvalidArgumentError(
        absl::StrCat(*error_file, ":", error_line, ": ",
                     MissingWeightMessage(*error_file, *weight_file, weight_line)));
  }
  out.weights.reserve(out.src.size());
  for (size_t c = 0; c < edges.chunks.size(); ++c) {
    const auto& ch = edges.chunks[c];
    for (size_t i = 0; i < ch.weights.size(); ++i) {
      if (ch.weights[i] < 0 || std::isinf(ch.weights[i])) {
        std::string_view tok[3];
        const uint64_t line = edges.RecordLine(c, i, tok);
        return edges.ErrorAt(c, line, BadWeightMessage(ch.weights[i], tok[2]));
      }
    }
    out.weights.insert(out.weights.end(), ch.weights.begin(), ch.weights.end());
  }
  return absl::OkStatus();
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

}  // namespace

absl::StatusOr<GraphInput> LoadEdgeList(const GraphSource& source, WeightUse use) {
  auto g = EdgeListGraph(ParseEdgeInput(source.path, use != WeightUse::kIgnore), source.path,
                         source.undirected, use);
  if (!g.ok() || !source.undirected) return g;
  if (!source.both_listed) {
    bsp::MakeSymmetric(*g);
    return g;
  }
  // The edge's line is found again in the text, which the load has let go of.
  auto st = FoldBothListed(*g, [&](size_t edge, const std::string& message) {
    auto file = ParseEdgeInput(source.path, use != WeightUse::kIgnore);
    if (!file.ok()) return file.status();
    for (size_t c = 0; c < file->chunks.size(); ++c) {
      const size_t n = file->chunks[c].num_ids(file->mode) / 2;
      if (edge >= n) {
        edge -= n;
        continue;
      }
      std::string_view tok[3];
      return file->ErrorAt(c, file->RecordLine(c, edge, tok), message);
    }
    return absl::InternalError("an edge of the input is not in its text");
  });
  if (!st.ok()) return st;
  return g;
}

absl::StatusOr<GraphInput> LoadGraphalytics(const GraphSource& source, WeightUse use) {
  auto files = ResolveGraphalytics(source);
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
  if (!g->directed) bsp::MakeSymmetric(*g);
  return g;
}

absl::StatusOr<GraphInput> LoadTable(const GraphSource& source, WeightUse use) {
  auto text = source.text->ReadAll(use != WeightUse::kIgnore);
  if (!text.ok()) return text.status();
  // The edges are parsed once and can take the text; the vertices may be parsed twice.
  const auto parser = [](const std::string& name, std::string& data, bool take) {
    return [&name, &data, take](FileKind kind, bool w, bool ints) -> absl::StatusOr<ParsedFile> {
      ParsedFile f = ParseTextKeepingErrors(name, take ? std::move(data) : data, kind, w, ints);
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
  SortStoredEdges(*g);
  if (source.undirected && source.both_listed) {
    // The message names the row by its fields: the edge's ends and weight.
    auto st = FoldBothListed(*g, [&](size_t, const std::string& message) {
      return absl::InvalidArgumentError(absl::StrCat(text->edges_name, ": ", message));
    });
    if (!st.ok()) return st;
  } else if (source.undirected) {
    bsp::MakeSymmetric(*g);
  }
  return g;
}

}  // namespace lockstep::load::text
