// The failures of a partitioned load (docs/design.md §4.4), kept as (kind, position) so that every
// worker can pick the one LoadGraph reports: each worker keeps its first of each kind with its
// share and its line in the share, and the agreement (agreement.h) picks among everyone's.
// Private to the load library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "lockstep/bsp/bytes.h"
#include "text/parse.h"

namespace lockstep::load::partitioned {

// In the order LoadGraph reports them: any error of a kind before any of the next.
enum Kind : uint32_t {
  kIo = 0,
  kVertexParse,
  kEdgeParse,
  kListedTwice,
  kUnlisted,
  kMissingWeight,
  kBadWeight,
  kInternal,
};

struct Failure {
  bool set = false;
  uint32_t kind = 0;
  // The line in share `share` of the file (1-based), and for some kinds a second line.
  uint32_t share = 0;
  uint64_t line = 0;
  uint32_t aux_share = 0;
  uint64_t aux_line = 0;
  int32_t code = 0;
  // The message after "file:line: ", or a token the message quotes (kListedTwice).
  std::string text;

  bool Before(const Failure& o) const {
    return std::tie(kind, share, line) < std::tie(o.kind, o.share, o.line);
  }
  void Encode(std::string& out) const;
  bool Decode(bsp::ByteReader& in);
};

// Keeps `f` in `best` if it comes first.
void Note(Failure& best, Failure f);

Failure FromStatus(const absl::Status& st, uint32_t kind = kIo);

// The lines of a parsed round.
uint64_t LinesOf(const text::ParsedFile& file);

// A failure's text at line `line` of chunk `c`: a table's row is named by its fields there, since
// the line number of a share of rows means nothing to a reader.
std::string AtRow(const text::ParsedFile& file, size_t c, uint64_t line, std::string text);

// The first parse error of a round as a failure of `kind`, its line counted from `lines_before`.
std::optional<Failure> ParseFailure(const text::ParsedFile& file, uint32_t kind, uint32_t share,
                                    uint64_t lines_before);

}  // namespace lockstep::load::partitioned
