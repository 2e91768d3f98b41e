#include "partitioned/vertex_rounds.h"

#include <algorithm>
#include <optional>

#include "lockstep/bsp/bytes.h"
#include "lockstep/bsp/collectives.h"
#include "partitioned/records.h"
#include "partitioned/rounds.h"
#include "partitioned/share_ids.h"
#include "text/dictionary.h"

namespace lockstep::load::partitioned {
namespace {

using bsp::ByteReader;
using bsp::Put;
using bsp::VertexId;
using text::FileKind;
using text::IdMode;
using text::kNoIndex;
using text::ParsedChunk;
using text::ParsedFile;
using text::TextKey;

// The line (in the chunk) of each record of a vertex-file chunk.
std::vector<uint64_t> RecordLines(const ParsedFile& file, size_t chunk) {
  const text::Span s = file.spans[chunk];
  const std::string_view text = std::string_view(*file.data).substr(s.begin, s.end - s.begin);
  std::vector<uint64_t> lines;
  uint64_t line = 0;
  std::string_view tok[3];
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const size_t n = text::Tokenize(text.substr(pos, nl - pos), tok, 3);
    pos = nl + 1;
    ++line;
    if (n == 0 || text::IsComment(tok[0])) continue;
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

absl::Status VertexRounds::Run(const std::string& path, std::unique_ptr<bsp::GraphTextShare> rows) {
  ShareText reader;
  const absl::Status opened =
      rows ? reader.Adopt(std::move(rows))
           : reader.Open(frame_.source, path, true, false, frame_.rank, frame_.size, false);
  if (auto st = bsp::AgreeOnStatus(frame_.exchange, opened); !st.ok()) return st;
  while (true) {
    auto in = FirstStep(frame_.exchange, Listings(reader, path), stats_);
    if (!in.ok()) return in.status();
    if (in->stop) {
      tally_.vertex_stopped = true;
      tally_.vertex_lines =
          FinishShare(frame_, reader, FileKind::kVertices, lines_, tally_.failure);
      break;
    }
    if (auto st = TakeListings(in->batches); !st.ok()) return st;
    in->batches.clear();
    if (!in->more) {
      tally_.vertex_lines = lines_;
      break;
    }
  }
  stats_.lines_parsed += tally_.vertex_lines;
  NoteRelisted();
  std::vector<std::pair<uint32_t, uint64_t>>().swap(listed_at_);
  std::vector<std::tuple<uint32_t, uint32_t, uint64_t>>().swap(relisted_);
  return absl::OkStatus();
}

std::vector<std::string> VertexRounds::Listings(ShareText& reader, const std::string& path) {
  auto text = reader.Next(frame_.options.round_bytes);
  std::optional<ParsedFile> file;
  if (!text.ok()) {
    Note(tally_.failure, FromStatus(text.status()));
  } else {
    file = ParseRound(frame_, path, std::move(*text), FileKind::kVertices, false);
    if (auto f = ParseFailure(*file, kVertexParse, frame_.rank, lines_)) Note(tally_.failure, *f);
  }
  const bool stop_here = tally_.failure.set;
  std::vector<std::string> out(frame_.size);
  for (auto& o : out) Put(o, RoundFlags(!reader.done(), stop_here));
  if (!stop_here) {
    EncodeListings(*file, out);
    lines_ += LinesOf(*file);
  }
  return out;
}

void VertexRounds::EncodeListings(const ParsedFile& file, std::vector<std::string>& out) {
  text::Dictionary dict;
  if (file.integer_mode()) {
    dict.BuildIntegers(file.chunks, file.mode);
  } else {
    dict.BuildText(file.chunks);
  }
  // Every listing travels (a repeat is an error the owner finds), each with its UUID and line.
  // Within a round a repeated ID is hashed once; across rounds only a repeat meets it again.
  ShareIds share_ids(frame_.size);
  const ShareIds::Met met = share_ids.Meet(dict);
  std::vector<uint32_t> fresh_of(dict.size(), kNoIndex);
  for (uint32_t j = 0; j < met.fresh.size(); ++j) fresh_of[met.fresh[j]] = j;
  const IdCoding coding = CodingOf(file.mode);
  for (auto& o : out) Put(o, static_cast<uint8_t>(coding));
  for (size_t c = 0; c < file.chunks.size(); ++c) {
    const ParsedChunk& ch = file.chunks[c];
    const std::vector<uint64_t> rec_lines = RecordLines(file, c);
    const uint64_t base = lines_ + file.LineOf(c, 0);
    for (size_t i = 0; i < ch.num_ids(file.mode); ++i) {
      uint32_t d;
      if (file.mode == IdMode::kNarrow) {
        d = dict.Find(uint64_t{ch.narrow[i]});
      } else if (file.mode == IdMode::kWide) {
        d = dict.Find(ch.wide[i]);
      } else {
        d = dict.Find(ch.strs[i]);
      }
      std::string& o = out[met.part[d]];
      PutKey(o, coding, dict.KeyAt(d));
      Put(o, met.uuids[fresh_of[d]]);
      Put(o, base + rec_lines[i]);
    }
    stats_.records_parsed += ch.num_ids(file.mode);
  }
}

absl::Status VertexRounds::TakeListings(const std::vector<std::string>& batches) {
  for (uint32_t p = 0; p < frame_.size; ++p) {
    ByteReader r(std::string_view(batches[p]).substr(1));
    IdCoding coding;
    if (!GetCoding(r, coding)) return Malformed();
    while (!r.empty()) {
      TextKey k;
      VertexId uuid;
      uint64_t line;
      if (!GetKey(r, coding, k) || !r.Get(uuid) || !r.Get(line)) return Malformed();
      const auto [v, added] = table_.Intern(k, frame_.rank);
      if (added) {
        table_.owned[v] = 1;
        table_.uuid[v] = uuid;
        listed_at_.emplace_back(p, line);
      } else {
        relisted_.emplace_back(v, p, line);
      }
    }
  }
  return absl::OkStatus();
}

void VertexRounds::NoteRelisted() {
  if (relisted_.empty()) return;
  std::sort(relisted_.begin(), relisted_.end());
  for (size_t i = 0; i < relisted_.size();) {
    const uint32_t v = std::get<0>(relisted_[i]);
    std::vector<std::pair<uint32_t, uint64_t>> at = {listed_at_[v]};
    for (; i < relisted_.size() && std::get<0>(relisted_[i]) == v; ++i) {
      at.emplace_back(std::get<1>(relisted_[i]), std::get<2>(relisted_[i]));
    }
    std::sort(at.begin(), at.end());
    Failure f;
    f.kind = kListedTwice;
    f.share = at[1].first;
    f.line = at[1].second;
    f.aux_share = at[0].first;
    f.aux_line = at[0].second;
    f.code = static_cast<int32_t>(absl::StatusCode::kInvalidArgument);
    f.text = NameOf(table_.KeyAt(v));
    Note(tally_.failure, std::move(f));
  }
}

}  // namespace lockstep::load::partitioned
