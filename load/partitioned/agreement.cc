#include "partitioned/agreement.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/bytes.h"
#include "lockstep/bsp/collectives.h"
#include "text/messages.h"

namespace lockstep::load::partitioned {
namespace {

using bsp::ByteReader;
using bsp::Put;
using FileLines = std::vector<std::pair<uint32_t, uint64_t>>;

// One worker's tally, as every worker reads it.
struct PeerTally {
  uint64_t vertex_lines = 0, edge_lines = 0;
  uint64_t first_with_weight = 0, first_without_weight = 0;
  Failure failure;
  FileLines share_lines;  // a directory's edge files: the share's lines per file
  // Whether it still receives raw, from which base, and how far its byte table reaches.
  uint8_t raw = 0;
  uint64_t raw_base = 0, raw_limit = 0;
};

std::string EncodeTally(const ShareTally& tally, const RawIds& raw) {
  std::string mine;
  Put(mine, tally.vertex_lines);
  Put(mine, tally.edge_lines);
  Put(mine, tally.first_with_weight);
  Put(mine, tally.first_without_weight);
  tally.failure.Encode(mine);
  Put(mine, static_cast<uint32_t>(tally.edge_share_lines.size()));
  for (const auto& [file, lines] : tally.edge_share_lines) {
    Put(mine, file);
    Put(mine, lines);
  }
  Put(mine, uint8_t{raw.active});
  Put(mine, raw.id_base);
  Put(mine, uint64_t{raw.part.size()});
  return mine;
}

// A peer's tally, unless malformed. `edge_files`: the edge input's files (a directory's).
std::optional<PeerTally> DecodeTally(std::string_view bytes, size_t edge_files) {
  ByteReader r(bytes);
  PeerTally t;
  uint32_t pieces;
  if (!r.Get(t.vertex_lines) || !r.Get(t.edge_lines) || !r.Get(t.first_with_weight) ||
      !r.Get(t.first_without_weight) || !t.failure.Decode(r) || !r.Get(pieces)) {
    return std::nullopt;
  }
  for (uint32_t i = 0; i < pieces; ++i) {
    std::pair<uint32_t, uint64_t> piece;
    if (!r.Get(piece.first) || !r.Get(piece.second) || piece.first >= edge_files) {
      return std::nullopt;
    }
    t.share_lines.push_back(piece);
  }
  if (!r.Get(t.raw) || !r.Get(t.raw_base) || !r.Get(t.raw_limit) || !r.empty() ||
      t.raw_limit > text::kNoIndex) {
    return std::nullopt;
  }
  return t;
}

// Every share's tally, summed: where each share's lines start in the whole file, the first
// failure of all, and what all agree on.
struct Gathered {
  std::vector<uint64_t> vbase, ebase;
  std::vector<FileLines> share_lines;
  Failure best;
  Agreement agreement;
};

absl::StatusOr<Gathered> Gather(const LoadFrame& frame, const ShareTally& tally,
                                const RawIds& raw) {
  const uint32_t size = frame.size;
  auto all = bsp::AllGather(frame.exchange, EncodeTally(tally, raw));
  if (!all.ok()) return all.status();
  Gathered g;
  g.vbase.assign(size + 1, 0);
  g.ebase.assign(size + 1, 0);
  g.share_lines.resize(size);
  Failure with, without;
  g.agreement.every_raw = true;
  for (uint32_t p = 0; p < size; ++p) {
    std::optional<PeerTally> t = DecodeTally((*all)[p], tally.edge_paths.size());
    if (!t) return Malformed();
    // (Every worker chose the same base from the same batches; the bitmaps merge only so.)
    g.agreement.every_raw = g.agreement.every_raw && t->raw != 0 && t->raw_base == raw.id_base;
    g.agreement.raw_limit = std::max(g.agreement.raw_limit, t->raw_limit);
    g.share_lines[p] = std::move(t->share_lines);
    g.vbase[p + 1] = g.vbase[p] + t->vertex_lines;
    g.ebase[p + 1] = g.ebase[p] + t->edge_lines;
    if (t->failure.set) Note(g.best, t->failure);
    if (t->first_with_weight != 0 && !with.set) {
      with.set = true;
      with.share = p;
      with.line = t->first_with_weight;
    }
    if (t->first_without_weight != 0 && !without.set) {
      without.set = true;
      without.share = p;
      without.line = t->first_without_weight;
    }
  }
  g.agreement.weighted = frame.keep_weights() && with.set;
  if (g.agreement.weighted && without.set) {
    Failure f;
    f.kind = kMissingWeight;
    f.share = without.share;
    f.line = without.line;
    f.aux_share = with.share;
    f.aux_line = with.line;
    f.code = static_cast<int32_t>(absl::StatusCode::kInvalidArgument);
    Note(g.best, std::move(f));
  }
  return g;
}

// Line `line` of share `share` as a file and a line in it: the whole file's line, or for a
// directory, the file of the share's lines it falls in and its line counted over every share.
std::pair<std::string, uint64_t> Locate(const Gathered& g, const InputPlan& plan,
                                        const ShareTally& tally, bool in_vertices, uint32_t share,
                                        uint64_t line) {
  if (in_vertices) return {plan.vertex_file, g.vbase[share] + line};
  const std::vector<FileLines>& share_lines = g.share_lines;
  if (!tally.edge_dir || share_lines[share].empty()) return {plan.edge_file, g.ebase[share] + line};
  uint32_t file = share_lines[share].back().first;
  uint64_t in_share = line;
  for (const auto& [f, n] : share_lines[share]) {
    file = f;
    if (in_share <= n) break;
    in_share -= n;
  }
  uint64_t before = 0;
  for (uint32_t p = 0; p < share; ++p) {
    for (const auto& [f, n] : share_lines[p]) before += f == file ? n : 0;
  }
  return {tally.edge_paths[file], before + in_share};
}

// The failure all picked, as the whole-graph loader words it.
absl::Status StatusOf(const Gathered& g, const LoadFrame& frame, const InputPlan& plan,
                      const ShareTally& tally) {
  const Failure& best = g.best;
  const auto code = static_cast<absl::StatusCode>(best.code);
  if (best.kind == kIo || best.kind == kInternal) return absl::Status(code, best.text);
  const bool in_vertices = best.kind == kVertexParse || best.kind == kListedTwice;
  if (frame.source.text) {
    // A table's rows: the failure names the row by its fields already (AtRow).
    const std::string name =
        in_vertices ? frame.source.text->VerticesName() : frame.source.text->EdgesName();
    const std::string message = best.kind == kListedTwice
                                    ? absl::StrCat("vertex ", best.text, " is listed twice")
                                    : best.text;
    return absl::Status(code, absl::StrCat(name, ", ", message));
  }
  const auto [file, line] = Locate(g, plan, tally, in_vertices, best.share, best.line);
  const auto [aux_file, aux] = Locate(g, plan, tally, in_vertices, best.aux_share, best.aux_line);
  std::string message = best.kind == kListedTwice ? text::ListedTwiceMessage(best.text, aux)
                        : best.kind == kMissingWeight
                            ? text::MissingWeightMessage(file, aux_file, aux)
                            : best.text;
  return absl::Status(code, absl::StrCat(file, ":", line, ": ", message));
}

}  // namespace

absl::StatusOr<Agreement> AgreeOnInput(const LoadFrame& frame, const InputPlan& plan,
                                       const ShareTally& tally, const RawIds& raw) {
  auto gathered = Gather(frame, tally, raw);
  if (!gathered.ok()) return gathered.status();
  if (!gathered->best.set) return gathered->agreement;
  return StatusOf(*gathered, frame, plan, tally);
}

}  // namespace lockstep::load::partitioned
