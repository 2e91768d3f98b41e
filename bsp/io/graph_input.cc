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
#include <limits>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"
#include "tbb/task_arena.h"

namespace lockstep::bsp {
namespace {

constexpr uint32_t kNoIndex = std::numeric_limits<uint32_t>::max();

struct Span {
  size_t begin = 0;
  size_t end = 0;
};

// Cuts `data` into about `parts` pieces that end just after a newline (or at the end).
std::vector<Span> SplitAtLines(std::string_view data, size_t parts) {
  std::vector<Span> spans;
  size_t begin = 0;
  const size_t step = std::max<size_t>(1, data.size() / std::max<size_t>(1, parts));
  while (begin < data.size()) {
    size_t end = std::min(data.size(), begin + step);
    while (end < data.size() && data[end - 1] != '\n') ++end;
    spans.push_back({begin, end});
    begin = end;
  }
  return spans;
}

size_t ChunkCount(size_t bytes) {
  const size_t threads = static_cast<size_t>(tbb::this_task_arena::max_concurrency());
  return std::clamp<size_t>(bytes / (1 << 20), threads, threads * 16);
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Splits a line into at most `max` tokens; returns the number of tokens seen (may exceed max).
size_t Tokenize(std::string_view line, std::string_view* tokens, size_t max) {
  size_t n = 0;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i >= line.size()) break;
    const size_t start = i;
    while (i < line.size() && !IsBlank(line[i])) ++i;
    if (n < max) tokens[n] = line.substr(start, i - start);
    ++n;
  }
  return n;
}

bool IsComment(std::string_view first_token) {
  return !first_token.empty() && (first_token[0] == '#' || first_token[0] == '%');
}

// How a file's IDs are held while it is parsed: 32-bit integers when every ID fits (half the
// memory of the parse's largest buffer), else 64-bit integers, else the token text.
enum class IdMode { kNarrow, kWide, kText };

// One parsed chunk of a file. Lines are numbered from 1 within the chunk.
struct ParsedChunk {
  std::vector<uint32_t> narrow;        // kNarrow: endpoints, or vertex IDs for .v files
  std::vector<uint64_t> wide;          // kWide: the same
  std::vector<std::string_view> strs;  // kText: the same
  std::vector<double> weights;         // NaN where a line has none
  uint64_t lines = 0;
  uint64_t error_line = 0;
  std::string error;
  bool not_integer = false;  // an ID is not an integer: parse again as text
  bool too_wide = false;     // kNarrow met an ID above 2^32-1: parse again as kWide
  uint64_t first_with_weight = 0;
  uint64_t first_without_weight = 0;

  size_t num_ids(IdMode mode) const {
    return mode == IdMode::kNarrow ? narrow.size()
           : mode == IdMode::kWide ? wide.size()
                                   : strs.size();
  }

  void Fail(uint64_t line, std::string message) {
    if (error_line == 0) {
      error_line = line;
      error = std::move(message);
    }
  }
};

enum class FileKind { kEdges, kVertices };

bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// The fast path of an integer edge line: "ID blanks ID [blanks DIGITS] [blanks]" with canonical
// IDs that fit `limit` and a weight of at most 15 digits (an integer a double holds exactly, so
// that it equals what from_chars gives). On success advances `p` to the line's end (its '\n' or
// `end`) and returns true; on anything else returns false and the caller parses the line the
// general way, which gives every other line (comments, errors, other weights) its meaning.
bool ParseIntegerEdgeLine(const char*& p, const char* end, uint64_t limit, uint64_t ids[2],
                          double& weight, bool& has_weight) {
  const char* q = p;
  for (int t = 0; t < 2; ++t) {
    if (t == 1) {
      if (q == end || !IsBlank(*q)) return false;
      while (q != end && IsBlank(*q)) ++q;
    }
    if (q == end || !IsDigit(*q)) return false;
    const char* first = q;
    uint64_t v = static_cast<uint64_t>(*q++ - '0');
    // Up to 19 digits cannot overflow 64 bits; longer IDs take the general path.
    while (q != end && IsDigit(*q) && q - first < 19)
      v = v * 10 + static_cast<uint64_t>(*q++ - '0');
    if ((q != end && IsDigit(*q)) || (*first == '0' && q - first > 1) || v > limit) return false;
    ids[t] = v;
  }
  has_weight = false;
  const char* after_ids = q;
  while (q != end && IsBlank(*q)) ++q;
  if (q != end && *q != '\n') {
    if (q == after_ids || !IsDigit(*q)) return false;
    const char* first = q;
    uint64_t w = 0;
    while (q != end && IsDigit(*q) && q - first < 15)
      w = w * 10 + static_cast<uint64_t>(*q++ - '0');
    if (q != end && IsDigit(*q)) return false;
    while (q != end && IsBlank(*q)) ++q;
    if (q != end && *q != '\n') return false;
    weight = static_cast<double>(w);
    has_weight = true;
  }
  p = q;
  return true;
}

// Parses one chunk. In an integer mode it stops at the first ID that the mode cannot hold and
// sets not_integer or too_wide.
void ParseChunk(std::string_view text, FileKind kind, IdMode mode, bool keep_weights,
                ParsedChunk& out) {
  // Exact room for the IDs: growing by doubling would leave up to half of it unused at the peak
  // of a load.
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  const size_t ids = lines * (kind == FileKind::kEdges ? 2 : 1);
  if (mode == IdMode::kNarrow) {
    out.narrow.reserve(ids);
  } else if (mode == IdMode::kWide) {
    out.wide.reserve(ids);
  } else {
    out.strs.reserve(ids);
  }
  if (keep_weights) out.weights.reserve(lines);
  const uint64_t limit =
      mode == IdMode::kNarrow ? uint64_t{kNoIndex} : std::numeric_limits<uint64_t>::max();
  auto push_int = [&](uint64_t v) {
    if (mode == IdMode::kNarrow) {
      out.narrow.push_back(static_cast<uint32_t>(v));
    } else {
      out.wide.push_back(v);
    }
  };
  auto note_weight = [&](uint64_t line_no, bool has, double w) {
    if (has) {
      if (out.first_with_weight == 0) out.first_with_weight = line_no;
    } else if (out.first_without_weight == 0) {
      out.first_without_weight = line_no;
    }
    if (keep_weights) out.weights.push_back(w);
  };
  const char* const base = text.data();
  const char* const end = base + text.size();
  const char* p = base;
  std::string_view tok[3];
  while (p < end && out.error_line == 0) {
    const uint64_t line_no = ++out.lines;
    if (mode != IdMode::kText && kind == FileKind::kEdges) {
      uint64_t pair[2];
      double w = 0;
      bool has = false;
      if (ParseIntegerEdgeLine(p, end, limit, pair, w, has)) {
        push_int(pair[0]);
        push_int(pair[1]);
        note_weight(line_no, has, has ? w : std::numeric_limits<double>::quiet_NaN());
        if (p != end) ++p;  // past the '\n'
        continue;
      }
    }
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (nl == nullptr) nl = end;
    const std::string_view line(p, static_cast<size_t>(nl - p));
    p = nl + 1;
    const size_t n = Tokenize(line, tok, 3);
    if (n == 0 || IsComment(tok[0])) continue;
    const size_t want_ids = kind == FileKind::kEdges ? 2 : 1;
    if (n < want_ids || n > want_ids + 1 || (kind == FileKind::kVertices && n != 1)) {
      out.Fail(line_no, kind == FileKind::kEdges
                            ? absl::StrCat("expected 'src dst [weight]', found ", n, " field",
                                           n == 1 ? "" : "s")
                            : absl::StrCat("expected one vertex ID, found ", n, " fields"));
      break;
    }
    for (size_t t = 0; t < want_ids; ++t) {
      if (mode != IdMode::kText) {
        uint64_t v;
        if (!ParseIntegerId(tok[t], v)) {
          out.not_integer = true;
          return;
        }
        if (v > limit) {
          out.too_wide = true;
          return;
        }
        push_int(v);
      } else {
        out.strs.push_back(tok[t]);
      }
    }
    if (kind == FileKind::kVertices) continue;
    double w = std::numeric_limits<double>::quiet_NaN();
    if (n == 3) {
      const char* b = tok[2].data();
      const char* e = b + tok[2].size();
      auto [ptr, ec] = std::from_chars(b, e, w);
      if (ec != std::errc() || ptr != e || std::isnan(w)) {
        out.Fail(line_no,
                 absl::StrCat("invalid weight '", SanitizeForLog(tok[2], kQuotedTokenBytes), "'"));
        break;
      }
    }
    note_weight(line_no, n == 3, w);
  }
}

struct ParsedFile {
  std::string path;
  // On the heap so that the string_views in `chunks` stay valid when the ParsedFile moves (a
  // short std::string keeps its bytes inline, and moving it would move them).
  std::unique_ptr<const std::string> data;
  std::vector<Span> spans;
  std::vector<ParsedChunk> chunks;
  IdMode mode = IdMode::kNarrow;

  bool integer_mode() const { return mode != IdMode::kText; }

  // The file-level line number of a chunk-level one.
  uint64_t LineOf(size_t chunk, uint64_t line) const {
    uint64_t base = 0;
    for (size_t c = 0; c < chunk; ++c) base += chunks[c].lines;
    return base + line;
  }
  absl::Status ErrorAt(size_t chunk, uint64_t line, std::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":", LineOf(chunk, line), ": ", std::string(message)));
  }
  // The chunk-level line of the `index`-th record (edge, or vertex of a vertex file) of chunk
  // `chunk`, and its fields: the bad-input paths find lines again by rescanning rather than keep a
  // line number per record.
  uint64_t RecordLine(size_t chunk, size_t index, std::string_view (&tok)[3]) const {
    const Span s = spans[chunk];
    const std::string_view text = std::string_view(*data).substr(s.begin, s.end - s.begin);
    uint64_t line = 0;
    size_t seen = 0;
    for (size_t pos = 0; pos < text.size();) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      const size_t n = Tokenize(text.substr(pos, nl - pos), tok, 3);
      pos = nl + 1;
      ++line;
      if (n == 0 || IsComment(tok[0])) continue;
      if (seen++ == index) break;
    }
    return line;
  }
  absl::Status FirstError() const {
    for (size_t c = 0; c < chunks.size(); ++c) {
      if (chunks[c].error_line != 0) return ErrorAt(c, chunks[c].error_line, chunks[c].error);
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<ParsedFile> ParseFile(const std::string& path, FileKind kind, bool keep_weights,
                                     bool allow_integer_mode) {
  ParsedFile file;
  file.path = path;
  auto data = ReadFile(path);
  if (!data.ok()) return data.status();
  file.data = std::make_unique<const std::string>(std::move(*data));
  file.spans = SplitAtLines(*file.data, ChunkCount(file.data->size()));
  // Narrow integers, else wide integers, else text: an attempt stops at the first ID it cannot
  // hold, and the next one starts over.
  file.mode = allow_integer_mode ? IdMode::kNarrow : IdMode::kText;
  while (true) {
    file.chunks.assign(file.spans.size(), ParsedChunk{});
    std::atomic<bool> not_integer{false}, too_wide{false};
    tbb::parallel_for(size_t{0}, file.spans.size(), [&](size_t c) {
      if (not_integer.load(std::memory_order_relaxed)) return;
      if (too_wide.load(std::memory_order_relaxed)) return;
      const Span s = file.spans[c];
      ParseChunk(std::string_view(*file.data).substr(s.begin, s.end - s.begin), kind, file.mode,
                 keep_weights, file.chunks[c]);
      if (file.chunks[c].not_integer) not_integer.store(true, std::memory_order_relaxed);
      if (file.chunks[c].too_wide) too_wide.store(true, std::memory_order_relaxed);
    });
    if (not_integer.load()) {
      file.mode = IdMode::kText;
    } else if (too_wide.load()) {
      file.mode = IdMode::kWide;
    } else {
      break;
    }
  }
  if (auto st = file.FirstError(); !st.ok()) return st;
  return file;
}

// The key of an ID in text mode: integers order before text and among themselves numerically.
struct TextKey {
  bool is_int;
  uint64_t value;
  std::string_view text;
  static TextKey Of(std::string_view t) {
    TextKey k{false, 0, t};
    k.is_int = ParseIntegerId(t, k.value);
    return k;
  }
  friend bool operator<(const TextKey& a, const TextKey& b) {
    if (a.is_int != b.is_int) return a.is_int;
    if (a.is_int) return a.value < b.value;
    return a.text < b.text;
  }
  friend bool operator==(const TextKey& a, const TextKey& b) {
    return a.is_int == b.is_int && (a.is_int ? a.value == b.value : a.text == b.text);
  }
};

// The sorted, distinct vertex IDs of a graph and the lookup of an ID's index.
class Dictionary {
 public:
  // Integer IDs: a direct table if the largest ID is small enough, else a sorted array.
  void BuildIntegers(const std::vector<ParsedChunk>& chunks, IdMode mode) {
    if (mode == IdMode::kNarrow) {
      BuildIntegers(chunks, &ParsedChunk::narrow);
    } else {
      BuildIntegers(chunks, &ParsedChunk::wide);
    }
  }
  template <class T>
  void BuildIntegers(const std::vector<ParsedChunk>& chunks, std::vector<T> ParsedChunk::*ids) {
    integer_ = true;
    std::vector<uint64_t> chunk_max(chunks.size(), 0);
    tbb::parallel_for(size_t{0}, chunks.size(), [&](size_t c) {
      T m = 0;
      for (T v : chunks[c].*ids) m = std::max(m, v);
      chunk_max[c] = m;
    });
    uint64_t max_id = 0;
    size_t count = 0;
    for (size_t c = 0; c < chunks.size(); ++c) {
      count += (chunks[c].*ids).size();
      max_id = std::max(max_id, chunk_max[c]);
    }
    if (count == 0) return;
    if (max_id < kNoIndex && max_id <= 8 * count + (1u << 20)) {
      direct_.assign(max_id + 1, kNoIndex);
      tbb::parallel_for(size_t{0}, chunks.size(), [&](size_t c) {
        for (T v : chunks[c].*ids) {
          std::atomic_ref<uint32_t>(direct_[v]).store(0, std::memory_order_relaxed);
        }
      });
      uint32_t next = 0;
      for (uint64_t v = 0; v <= max_id; ++v) {
        if (direct_[v] != kNoIndex) {
          direct_[v] = next++;
          ints_.push_back(v);
        }
      }
      return;
    }
    ints_.reserve(count);
    for (const auto& c : chunks) ints_.insert(ints_.end(), (c.*ids).begin(), (c.*ids).end());
    tbb::parallel_sort(ints_.begin(), ints_.end());
    ints_.erase(std::unique(ints_.begin(), ints_.end()), ints_.end());
  }

  void BuildText(const std::vector<ParsedChunk>& chunks) {
    integer_ = false;
    for (const auto& c : chunks) {
      for (std::string_view t : c.strs) text_.push_back(TextKey::Of(t));
    }
    tbb::parallel_sort(text_.begin(), text_.end());
    text_.erase(std::unique(text_.begin(), text_.end()), text_.end());
  }

  size_t size() const { return integer_ ? ints_.size() : text_.size(); }

  uint32_t Find(uint64_t id) const {
    if (!direct_.empty()) return id < direct_.size() ? direct_[id] : kNoIndex;
    auto it = std::lower_bound(ints_.begin(), ints_.end(), id);
    return it != ints_.end() && *it == id ? static_cast<uint32_t>(it - ints_.begin()) : kNoIndex;
  }
  uint32_t Find(std::string_view id) const {
    if (integer_) {
      uint64_t v;
      return ParseIntegerId(id, v) ? Find(v) : kNoIndex;
    }
    const TextKey key = TextKey::Of(id);
    auto it = std::lower_bound(text_.begin(), text_.end(), key);
    return it != text_.end() && *it == key ? static_cast<uint32_t>(it - text_.begin()) : kNoIndex;
  }

  std::vector<std::string> Names() const {
    std::vector<std::string> names(size());
    tbb::parallel_for(size_t{0}, names.size(), [&](size_t i) {
      if (integer_) {
        char buf[24];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, ints_[i]);
        names[i].assign(buf, end);
      } else {
        names[i] = std::string(text_[i].text);
      }
    });
    return names;
  }

 private:
  bool integer_ = true;
  std::vector<uint32_t> direct_;
  std::vector<uint64_t> ints_;
  std::vector<TextKey> text_;
};

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
      return vertices.ErrorAt(c, line,
                              absl::StrCat("vertex ", SanitizeForLog(tok[0], kQuotedTokenBytes),
                                           " is listed twice (first on line ", first_line, ")"));
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
    return edges.ErrorAt(c, line,
                         absl::StrCat("vertex ", SanitizeForLog(missing, kQuotedTokenBytes),
                                      " is not listed in ", vertex_file));
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
    return edges.ErrorAt(
        without->first, without->second,
        absl::StrCat("missing weight (line ", edges.LineOf(with->first, with->second),
                     " has one, so every edge needs one)"));
  }
  out.weights.reserve(out.src.size());
  for (size_t c = 0; c < edges.chunks.size(); ++c) {
    const auto& ch = edges.chunks[c];
    for (size_t i = 0; i < ch.weights.size(); ++i) {
      if (ch.weights[i] < 0 || std::isinf(ch.weights[i])) {
        std::string_view tok[3];
        const uint64_t line = edges.RecordLine(c, i, tok);
        return edges.ErrorAt(c, line,
                             absl::StrCat(ch.weights[i] < 0 ? "negative" : "infinite", " weight ",
                                          SanitizeForLog(tok[2], kQuotedTokenBytes),
                                          " (the app needs finite weights >= 0)"));
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

// A property's value and the line that gave it (the last, if the key is repeated).
struct Property {
  std::string value;
  uint64_t line = 0;
};

// Reads a Java-style properties file: "key = value" or "key : value", '#' and '!' comments.
absl::StatusOr<std::map<std::string, Property>> ReadPropertyLines(const std::string& path) {
  auto data = ReadFile(path);
  if (!data.ok()) return data.status();
  std::map<std::string, Property> props;
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
    props[std::string(trim(line.substr(0, eq)))] = {std::string(trim(line.substr(eq + 1))),
                                                    line_no};
  }
  return props;
}

// The properties of one Graphalytics graph, "graph.<name>." removed from their keys, checked for
// what every graph must say: its vertex file and whether it is directed.
absl::StatusOr<std::map<std::string, Property>> ReadGraphalyticsPropertyLines(
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
  std::map<std::string, Property> stripped;
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

absl::StatusOr<GraphInput> LoadEdgeList(const GraphSource& source, WeightUse use) {
  auto edges = ParseFile(source.path, FileKind::kEdges, use != WeightUse::kIgnore, true);
  if (!edges.ok()) return edges.status();
  Dictionary dict;
  if (edges->integer_mode()) {
    dict.BuildIntegers(edges->chunks, edges->mode);
  } else {
    dict.BuildText(edges->chunks);
  }
  if (dict.size() >= kNoIndex) return absl::OutOfRangeError("more than 2^32-1 vertices");
  GraphInput g;
  g.directed = !source.undirected;
  if (auto st = CollectWeights(*edges, use, g); !st.ok()) return st;
  if (edges->integer_mode()) {
    // Every ID is in the dictionary and the weights are checked: the text is no longer needed,
    // and dropping it before the edge arrays are allocated lowers the peak memory of a load.
    edges->data.reset();
  }
  if (auto st = MapEdges(*edges, dict, source.path, g); !st.ok()) return st;
  std::vector<ParsedChunk>().swap(edges->chunks);
  g.external_ids = dict.Names();
  if (source.undirected) MakeSymmetric(g);
  return g;
}

absl::StatusOr<GraphInput> LoadGraphalytics(const GraphSource& source, WeightUse use) {
  GraphInput g;
  auto props = ReadGraphalyticsProperties(source.path);
  if (!props.ok()) return props.status();
  g.properties = std::move(*props);
  const std::string dir = Dirname(source.path);
  auto file_of = [&](const char* key) -> absl::StatusOr<std::string> {
    auto it = g.properties.find(key);
    if (it == g.properties.end()) {
      return absl::InvalidArgumentError(absl::StrCat(source.path, ": no graph.<name>.", key));
    }
    return it->second.starts_with("/") ? it->second : dir + "/" + it->second;
  };
  auto vfile = file_of("vertex-file");
  if (!vfile.ok()) return vfile.status();
  auto efile = file_of("edge-file");
  if (!efile.ok()) return efile.status();
  g.directed = g.properties.at("directed") == "true";  // checked: "true" or "false"

  auto vertices = ParseFile(*vfile, FileKind::kVertices, false, true);
  if (!vertices.ok()) return vertices.status();
  // Edges are parsed in the vertices' mode so that lookups compare like with like.
  auto edges =
      ParseFile(*efile, FileKind::kEdges, use != WeightUse::kIgnore, vertices->integer_mode());
  if (!edges.ok()) return edges.status();
  if (vertices->integer_mode() && !edges->integer_mode()) {
    // An edge names a non-integer ID, which an all-integer vertex file cannot list. Reading the
    // vertices as text lets MapEdges report that edge's line like any other unlisted vertex.
    vertices = ParseFile(*vfile, FileKind::kVertices, false, false);
    if (!vertices.ok()) return vertices.status();
  }
  Dictionary dict;
  if (vertices->integer_mode()) {
    dict.BuildIntegers(vertices->chunks, vertices->mode);
  } else {
    dict.BuildText(vertices->chunks);
  }
  if (auto st = CheckDistinct(*vertices, dict); !st.ok()) return st;
  if (auto st = MapEdges(*edges, dict, *vfile, g); !st.ok()) return st;
  if (auto st = CollectWeights(*edges, use, g); !st.ok()) return st;
  g.external_ids = dict.Names();
  if (!g.directed) MakeSymmetric(g);
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
  const std::string format = IsGraphalytics(source)  ? "graphalytics"
                             : source.format.empty() ? "edgelist"
                                                     : source.format;
  if (format == "edgelist") return LoadEdgeList(source, weights);
  if (format == "graphalytics") return LoadGraphalytics(source, weights);
  return absl::InvalidArgumentError(absl::StrCat("graph format: unknown format '", format,
                                                 "' (expected edgelist or graphalytics)"));
}

uint64_t EstimateLoadBytes(const GraphSource& source) {
  auto size_of = [](const std::string& path) -> uint64_t {
    struct stat info;
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode)
               ? static_cast<uint64_t>(info.st_size)
               : 0;
  };
  uint64_t bytes = 0;
  if (IsGraphalytics(source)) {
    auto props = ReadGraphalyticsProperties(source.path);
    if (!props.ok()) return 0;
    const std::string dir = Dirname(source.path);
    for (const char* key : {"vertex-file", "edge-file"}) {
      auto it = props->find(key);
      if (it == props->end()) continue;
      bytes += size_of(it->second.starts_with("/") ? it->second : dir + "/" + it->second);
    }
  } else {
    bytes = size_of(source.path);
  }
  // The text, the IDs parsed from it (up to 16 bytes per short line) and the edge arrays.
  return 3 * bytes;
}

}  // namespace lockstep::bsp
