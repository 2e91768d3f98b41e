// The parsing pieces that the whole-graph loader (text_graph.cc) and the partitioned loader
// (partitioned/) share: cutting text at line boundaries, the chunk parser with its fast integer
// path, the per-file ID dictionary, and the wording of input errors. Private to the load library.
#pragma once

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/graph_input.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"

namespace lockstep::load::text {

using bsp::GraphInput;
using bsp::GraphSource;
using bsp::ParseIntegerId;

inline constexpr uint32_t kNoIndex = std::numeric_limits<uint32_t>::max();

struct Span {
  size_t begin = 0;
  size_t end = 0;
};

// Cuts `data` into about `parts` pieces that end just after a newline (or at the end).
std::vector<Span> SplitAtLines(std::string_view data, size_t parts);

// How many chunks to parse `bytes` of text in.
size_t ChunkCount(size_t bytes);

inline bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
// Splits a line into at most `max` tokens; returns the number of tokens seen (may exceed max).
size_t Tokenize(std::string_view line, std::string_view* tokens, size_t max);

bool IsComment(std::string_view first_token);

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
  uint64_t max_id = 0;  // an integer mode's largest ID (0 for none)
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
// Parses one chunk. In an integer mode it stops at the first ID that the mode cannot hold and
// sets not_integer or too_wide.
void ParseChunk(std::string_view text, FileKind kind, IdMode mode, bool keep_weights,
                ParsedChunk& out);

// An edge list may be a directory of files, read as the concatenation of its files (docs/design.md
// §4). Lines never span files: a file that does not end in a newline ends its last line there.
struct InputFile {
  std::string path;
  uint64_t size = 0;
};

bool IsDirectory(const std::string& path);

// The files of an edge-list input at `path`: `path` itself if it is not a directory (its size is
// left 0: opening it says what is wrong), else the regular files directly in it, in byte-wise name
// order, names that start with '.' skipped. A directory without any is an error naming it, and so
// is one holding a partitioned form's files (complete or not, IsFormFileName).
absl::StatusOr<std::vector<InputFile>> ListEdgeFiles(const std::string& path);

// One file's lines in the line numbering of a concatenation of files.
struct FilePiece {
  std::string path;
  uint64_t lines = 0;
};

// Line `line` (1-based) of the concatenation of `pieces` as its file and the line in that file;
// without pieces, line `line` of `path`.
std::pair<const std::string*, uint64_t> Locate(const std::string& path,
                                               const std::vector<FilePiece>& pieces, uint64_t line);

struct ParsedFile {
  std::string path;
  // A directory's files, in the order their text was concatenated (empty for one file): errors
  // name the file and the line in it.
  std::vector<FilePiece> pieces;
  // On the heap so that the string_views in `chunks` stay valid when the ParsedFile moves (a
  // short std::string keeps its bytes inline, and moving it would move them).
  std::unique_ptr<const std::string> data;
  std::vector<Span> spans;
  std::vector<ParsedChunk> chunks;
  IdMode mode = IdMode::kNarrow;
  // The text is a table's rows (GraphText): errors name `path` and the row by its fields.
  bool rows = false;

  bool integer_mode() const { return mode != IdMode::kText; }

  // The file-level line number of a chunk-level one.
  uint64_t LineOf(size_t chunk, uint64_t line) const {
    uint64_t base = 0;
    for (size_t c = 0; c < chunk; ++c) base += chunks[c].lines;
    return base + line;
  }
  absl::Status ErrorAt(size_t chunk, uint64_t line, std::string_view message) const {
    if (rows) {
      // A table's rows come in no defined order: a row is named by its fields.
      return absl::InvalidArgumentError(
          absl::StrCat(path, ", row (", RowFields(chunk, line), "): ", std::string(message)));
    }
    const auto [file, at] = Locate(path, pieces, LineOf(chunk, line));
    return absl::InvalidArgumentError(absl::StrCat(*file, ":", at, ": ", std::string(message)));
  }
  // A row's fields as "a, b, c" (a table's rows: see `rows`).
  std::string RowFields(size_t chunk, uint64_t line) const;
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
// Parses `data` (the text of `path`, or of lines of it) in parallel chunks: narrow integers,
// else wide integers, else text. Fails with the first bad line's error.
absl::StatusOr<ParsedFile> ParseText(std::string path, std::string data, FileKind kind,
                                     bool keep_weights, bool allow_integer_mode);
// As ParseText, but a bad line leaves its chunk's error in place (ParsedFile::FirstError).
ParsedFile ParseTextKeepingErrors(std::string path, std::string data, FileKind kind,
                                  bool keep_weights, bool allow_integer_mode);
// ParseText of the whole file.
absl::StatusOr<ParsedFile> ParseFile(const std::string& path, FileKind kind, bool keep_weights,
                                     bool allow_integer_mode);
// ParseText of the whole edge-list input at `path`: one file, or the concatenation of a
// directory's files (ListEdgeFiles), with `pieces` set.
absl::StatusOr<ParsedFile> ParseEdgeInput(const std::string& path, bool keep_weights);

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
  // The i-th ID in ExternalIdLess order.
  TextKey KeyAt(size_t i) const { return integer_ ? TextKey{true, ints_[i], {}} : text_[i]; }

  // A hint that Find(id) comes soon: a direct table is larger than the caches, and IDs come in
  // random order.
  void Prefetch(uint64_t id) const {
    if (id < direct_.size()) __builtin_prefetch(direct_.data() + id);
  }
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

// The wording of input errors, shared by both loaders so that they say the same.
std::string ListedTwiceMessage(std::string_view token, uint64_t first_line);
std::string UnlistedVertexMessage(std::string_view token, const std::string& vertex_file);
// An edge without a weight at a line of `error_file`, where line `weight_line` of `weight_file`
// has one (the file is named only if it is another).
std::string MissingWeightMessage(std::string_view error_file, std::string_view weight_file,
                                 uint64_t weight_line);
// A weight that is negative or infinite.
std::string BadWeightMessage(double weight, std::string_view token);

// Sorts the stored edges by (source, target, weight): global indexes follow the external IDs'
// order, so the result does not depend on the order the edges came in (a table's rows).
void SortStoredEdges(GraphInput& g);

// A Graphalytics graph's properties and the files they name.
struct GraphalyticsFiles {
  std::map<std::string, std::string> properties;
  std::string vertex_file;
  std::string edge_file;
  bool directed = true;
};
absl::StatusOr<GraphalyticsFiles> ResolveGraphalytics(const GraphSource& source);
// A file a Graphalytics .properties file names: `name` if absolute, else beside `properties`.
std::string FileBeside(const std::string& properties, const std::string& name);

}  // namespace lockstep::load::text
