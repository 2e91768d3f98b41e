#include "text/parse.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "lockstep/bsp/text.h"
#include "tbb/parallel_for.h"
#include "tbb/task_arena.h"

namespace lockstep::load::text {

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
namespace {

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
}  // namespace

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
  uint64_t max_id = 0;
  auto push_int = [&](uint64_t v) {
    max_id = std::max(max_id, v);
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
          out.max_id = max_id;
          return;
        }
        if (v > limit) {
          out.too_wide = true;
          out.max_id = max_id;
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
        out.Fail(line_no, absl::StrCat("invalid weight '",
                                       bsp::SanitizeForLog(tok[2], bsp::kQuotedTokenBytes), "'"));
        break;
      }
    }
    note_weight(line_no, n == 3, w);
  }
  out.max_id = max_id;
}

ParsedFile ParseTextKeepingErrors(std::string path, std::string data, FileKind kind,
                                  bool keep_weights, bool allow_integer_mode) {
  ParsedFile file;
  file.path = std::move(path);
  file.data = std::make_unique<const std::string>(std::move(data));
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
  return file;
}

absl::StatusOr<ParsedFile> ParseText(std::string path, std::string data, FileKind kind,
                                     bool keep_weights, bool allow_integer_mode) {
  ParsedFile file = ParseTextKeepingErrors(std::move(path), std::move(data), kind, keep_weights,
                                           allow_integer_mode);
  if (auto st = file.FirstError(); !st.ok()) return st;
  return file;
}

absl::StatusOr<ParsedFile> ParseFile(const std::string& path, FileKind kind, bool keep_weights,
                                     bool allow_integer_mode) {
  auto data = bsp::ReadFile(path);
  if (!data.ok()) return data.status();
  return ParseText(path, std::move(*data), kind, keep_weights, allow_integer_mode);
}

std::string ParsedFile::RowFields(size_t chunk, uint64_t line) const {
  const Span s = spans[chunk];
  std::string_view text = std::string_view(*data).substr(s.begin, s.end - s.begin);
  for (uint64_t l = 1; l < line && !text.empty(); ++l) {
    const size_t nl = text.find('\n');
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  std::string_view row = text.substr(0, text.find('\n'));
  std::string out;
  for (size_t field = 0; !row.empty() || field == 0; ++field) {
    const size_t tab = row.find('\t');
    if (field > 0) out += ", ";
    out += bsp::SanitizeForLog(row.substr(0, tab), 64);
    row = tab == std::string_view::npos ? std::string_view() : row.substr(tab + 1);
  }
  return out;
}

absl::StatusOr<ParsedFile> ParseEdgeInput(const std::string& path, bool keep_weights) {
  if (!IsDirectory(path)) return ParseFile(path, FileKind::kEdges, keep_weights, true);
  auto files = ListEdgeFiles(path);
  if (!files.ok()) return files.status();
  uint64_t total = 0;
  for (const InputFile& f : *files) total += f.size + 1;
  std::string data;
  data.reserve(total);
  std::vector<FilePiece> pieces;
  for (const InputFile& f : *files) {
    auto text = bsp::ReadFile(f.path);
    if (!text.ok()) return text.status();
    // A file's last line ends with the file.
    if (!text->empty() && text->back() != '\n') text->push_back('\n');
    pieces.push_back({f.path, static_cast<uint64_t>(std::count(text->begin(), text->end(), '\n'))});
    data += *text;
  }
  ParsedFile file =
      ParseTextKeepingErrors(path, std::move(data), FileKind::kEdges, keep_weights, true);
  file.pieces = std::move(pieces);
  if (auto st = file.FirstError(); !st.ok()) return st;
  return file;
}

}  // namespace lockstep::load::text
