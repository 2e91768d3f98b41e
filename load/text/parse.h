// The parsing pieces that the whole-graph loader (text_graph.cc) and the partitioned loader
// (partitioned/) share: cutting text at line boundaries and the chunk parser with its fast integer
// path. Private to the load library; the ID dictionary is dictionary.h, the wording of input
// errors messages.h.
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
#include "text/input_files.h"

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
