#include "partitioned/rounds.h"

#include <utility>

#include "partitioned/records.h"

namespace lockstep::load::partitioned {

absl::StatusOr<RoundStep> FirstStep(bsp::Exchange& exchange, std::vector<std::string> out,
                                    bsp::PartitionLoadStats& stats) {
  auto in = exchange.AllToAll(std::move(out));
  if (!in.ok()) return in.status();
  ++stats.rounds;
  RoundStep step;
  for (const std::string& batch : *in) {
    if (batch.empty()) return Malformed();
    step.more |= (batch[0] & 1) != 0;
    step.stop |= (batch[0] & 2) != 0;
  }
  step.batches = std::move(*in);
  return step;
}

text::ParsedFile ParseRound(const LoadFrame& frame, const std::string& path, std::string text,
                            text::FileKind kind, bool keep_weights) {
  text::ParsedFile file =
      text::ParseTextKeepingErrors(path, std::move(text), kind, keep_weights, true);
  file.rows = frame.source.text != nullptr;
  return file;
}

uint64_t FinishShare(const LoadFrame& frame, ShareText& reader, text::FileKind kind, uint64_t lines,
                     Failure& failure) {
  const uint32_t parse_kind = kind == text::FileKind::kVertices ? kVertexParse : kEdgeParse;
  if (failure.set && failure.kind <= parse_kind) return lines;
  // A table's rows have no line numbers for another share's error to count: nothing to read on.
  if (frame.source.text != nullptr) return lines;
  while (!reader.done()) {
    auto text = reader.Next(frame.options.round_bytes);
    if (!text.ok()) {
      Note(failure, FromStatus(text.status()));
      return lines;
    }
    text::ParsedFile file = ParseRound(frame, "", std::move(*text), kind, false);
    if (auto f = ParseFailure(file, parse_kind, frame.rank, lines)) {
      Note(failure, *f);
      return lines;
    }
    lines += LinesOf(file);
  }
  return lines;
}

}  // namespace lockstep::load::partitioned
