#include "partitioned/failures.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace lockstep::load::partitioned {

using bsp::Put;

void Failure::Encode(std::string& out) const {
  Put(out, uint8_t{set});
  Put(out, kind);
  Put(out, share);
  Put(out, line);
  Put(out, aux_share);
  Put(out, aux_line);
  Put(out, code);
  Put(out, static_cast<uint32_t>(text.size()));
  out.append(text);
}

bool Failure::Decode(bsp::ByteReader& in) {
  uint8_t s;
  uint32_t n;
  std::string_view t;
  if (!in.Get(s) || !in.Get(kind) || !in.Get(share) || !in.Get(line) || !in.Get(aux_share) ||
      !in.Get(aux_line) || !in.Get(code) || !in.Get(n) || !in.GetBytes(n, t)) {
    return false;
  }
  set = s != 0;
  text = std::string(t);
  return true;
}

void Note(Failure& best, Failure f) {
  f.set = true;
  if (!best.set || f.Before(best)) best = std::move(f);
}

Failure FromStatus(const absl::Status& st, uint32_t kind) {
  Failure f;
  f.set = true;
  f.kind = kind;
  f.code = static_cast<int32_t>(st.code());
  f.text = std::string(st.message());
  return f;
}

uint64_t LinesOf(const text::ParsedFile& file) {
  uint64_t n = 0;
  for (const auto& c : file.chunks) n += c.lines;
  return n;
}

std::string AtRow(const text::ParsedFile& file, size_t c, uint64_t line, std::string text) {
  if (!file.rows) return text;
  return absl::StrCat("row (", file.RowFields(c, line), "): ", text);
}

std::optional<Failure> ParseFailure(const text::ParsedFile& file, uint32_t kind, uint32_t share,
                                    uint64_t lines_before) {
  for (size_t c = 0; c < file.chunks.size(); ++c) {
    if (file.chunks[c].error_line == 0) continue;
    Failure f;
    f.set = true;
    f.kind = kind;
    f.share = share;
    f.line = lines_before + file.LineOf(c, file.chunks[c].error_line);
    f.code = static_cast<int32_t>(absl::StatusCode::kInvalidArgument);
    f.text = AtRow(file, c, file.chunks[c].error_line, file.chunks[c].error);
    return f;
  }
  return std::nullopt;
}

}  // namespace lockstep::load::partitioned
