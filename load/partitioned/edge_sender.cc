#include "partitioned/edge_sender.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <span>
#include <utility>

#include "lockstep/bsp/bytes.h"
#include "tbb/parallel_for.h"
#include "text/messages.h"

namespace lockstep::load::partitioned {
namespace {

using bsp::Put;
using text::IdMode;
using text::ParsedChunk;
using text::TextKey;

// The most workers RouteParts serves (more than a direct table's): its cursors sit in a local
// array, not the heap, so that the compiler knows that a record's store through a char pointer
// does not move them.
constexpr uint32_t kRouteParts = 128;

// The common case of a sender's round (records of coding C, kNarrowParts or kSlimParts, of
// narrow IDs with their partitions, the IDs' partitions in the share's direct table, no weights),
// for `parts` workers: writes one chunk's records to `out`, a fresh buffer per destination, the
// kSlimParts IDs less `id_base` (kSlimBased; 0 for kSlimParts). False, with `out` emptied, if an
// ID's entry is not a partition (an unlisted vertex): the general walk then writes the chunk and
// says why. (Also false, `out` untouched, past kRouteParts workers.)
template <IdCoding C>
bool RouteParts(const ShareIds& share_ids, uint32_t parts, const std::vector<uint32_t>& ids,
                uint32_t part_shift, uint32_t id_base, bool both_ends,
                std::vector<RecordBuffer>& out) {
  static_assert(C == IdCoding::kNarrowParts || C == IdCoding::kSlimParts);
  constexpr size_t kBytes = C == IdCoding::kSlimParts ? kSlimRecord : sizeof(uint64_t);
  if (parts > kRouteParts) return false;
  struct Cursor {
    char* next;
    char* end;
    char* begin;
  };
  std::array<Cursor, kRouteParts> cursor;
  for (uint32_t q = 0; q < parts; ++q) {
    const std::span<char> room = out[q].Room();
    cursor[q] = {room.data(), room.data() + room.size(), room.data()};
  }
  auto put = [&](uint32_t q, uint64_t record) {
    Cursor& at = cursor[q];
    if (at.end - at.next < static_cast<ptrdiff_t>(sizeof record)) [[unlikely]] {
      out[q].WroteBytes(static_cast<size_t>(at.next - at.begin));
      const std::span<char> room = out[q].Room();
      at = {room.data(), room.data() + room.size(), room.data()};
    }
    std::memcpy(at.next, &record, sizeof record);  // 8 bytes stored, kBytes kept
    at.next += kBytes;
  };
  const uint8_t* table = share_ids.DirectTable();
  const uint64_t start = share_ids.DirectStart();
  const uint32_t* id = ids.data();
  const size_t m = ids.size() / 2;
  constexpr size_t kAhead = 16;  // edges: their table entries arrive meanwhile
  for (size_t i = 0; i < m; ++i) {
    if (i + kAhead < m) {
      __builtin_prefetch(table + (id[2 * (i + kAhead)] - start));
      __builtin_prefetch(table + (id[2 * (i + kAhead) + 1] - start));
    }
    const uint32_t s = id[2 * i], d = id[2 * i + 1];
    const uint32_t ps = table[s - start], pd = table[d - start];
    if (std::max(ps, pd) >= parts) [[unlikely]] {
      // The general walk writes this chunk from its start.
      for (RecordBuffer& b : out) b = RecordBuffer();
      return false;
    }
    const uint64_t record = C == IdCoding::kSlimParts
                                ? SlimPartsRecord(s - id_base, ps, d - id_base, pd, part_shift)
                                : NarrowPartsRecord(s, ps, d, pd, part_shift);
    put(ps, record);
    if (both_ends && pd != ps) put(pd, record);
  }
  for (uint32_t q = 0; q < parts; ++q) {
    out[q].WroteBytes(static_cast<size_t>(cursor[q].next - cursor[q].begin));
  }
  return true;
}

}  // namespace

EdgeSender::EdgeSender(const LoadFrame& frame, const text::ParsedFile& file, const RoundIds& ids,
                       const ShareIds& share_ids, bool both_ends, const std::string& vertex_file,
                       uint64_t id_base)
    : frame_(frame),
      file_(file),
      ids_(ids),
      share_ids_(share_ids),
      both_ends_(both_ends),
      keep_weights_(frame.keep_weights()),
      vertex_file_(vertex_file),
      id_base_(id_base),
      unlisted_(file.chunks.size()),
      bad_weight_(file.chunks.size()) {}

SentRound EdgeSender::AppendTo(std::vector<std::string>& batches) {
  const Coding coding = ChooseCoding();
  if (coding.edge != IdCoding::kTagged) {
    AppendFixed(coding, batches);
  } else {
    AppendTagged(batches);
  }
  SentRound sent;
  const size_t chunks = file_.chunks.size();
  for (size_t c = 0; c < chunks; ++c) {
    for (auto* f : {&unlisted_[c], &bad_weight_[c]}) {
      if (*f) sent.failures.push_back(std::move(**f));
    }
  }
  // The first weight and the first missing one of the round, for the all-or-none rule.
  for (size_t c = 0; c < chunks; ++c) {
    const ParsedChunk& ch = file_.chunks[c];
    if (sent.first_with_weight == 0 && ch.first_with_weight != 0) {
      sent.first_with_weight = file_.LineOf(c, ch.first_with_weight);
    }
    if (sent.first_without_weight == 0 && ch.first_without_weight != 0) {
      sent.first_without_weight = file_.LineOf(c, ch.first_without_weight);
    }
    sent.records += ch.num_ids(file_.mode) / 2;
  }
  return sent;
}

EdgeSender::Coding EdgeSender::ChooseCoding() const {
  // Narrow IDs that leave room for a partition at their top carry their ends' partitions.
  Coding coding{ids_.coding, 0};
  const uint64_t max_id = ids_.max_id;
  const uint32_t part_bits = PartitionBits(frame_.size);
  if (ids_.coding == IdCoding::kNarrow && part_bits < 32 && max_id >> (32 - part_bits) == 0) {
    coding.edge = IdCoding::kNarrowParts;
    // Three bytes an end where they hold the IDs and the partitions (a quarter fewer bytes);
    // for IDs far from 0, less the load's base (a direct round knows its least ID; its
    // table's start may have moved below the base, by as much as the table holds).
    if (part_bits < kSlimBits && max_id >> (kSlimBits - part_bits) == 0) {
      coding.edge = IdCoding::kSlimParts;
    } else if (part_bits < kSlimBits && id_base_ != 0 && ids_.direct &&
               share_ids_.RoundLeast() >= id_base_ &&
               (max_id - id_base_) >> (kSlimBits - part_bits) == 0) {
      coding.edge = IdCoding::kSlimBased;
      coding.record_base = static_cast<uint32_t>(id_base_);  // (at most max_id, below 2^32)
    }
  }
  return coding;
}

void EdgeSender::AppendFixed(Coding coding, std::vector<std::string>& batches) {
  const size_t chunks = file_.chunks.size();
  std::vector<std::vector<RecordBuffer>> buffers(chunks);
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) { WriteChunk(c, coding, buffers[c]); });
  for (uint32_t q = 0; q < frame_.size; ++q) {
    size_t total = 1 + sizeof(uint64_t);
    for (size_t c = 0; c < chunks; ++c) total += buffers[c][q].size();
    batches[q].reserve(batches[q].size() + total);
    batches[q].push_back(static_cast<char>(coding.edge));
    if (coding.edge == IdCoding::kSlimBased) Put(batches[q], uint64_t{coding.record_base});
    for (size_t c = 0; c < chunks; ++c) {
      batches[q].append(buffers[c][q].data(), buffers[c][q].size());
      buffers[c][q] = RecordBuffer();
    }
  }
}

void EdgeSender::WriteChunk(size_t c, Coding coding, std::vector<RecordBuffer>& buffers) {
  const IdCoding edge_coding = coding.edge;
  const uint32_t record_base = coding.record_base;
  const bool slim = edge_coding == IdCoding::kSlimParts || edge_coding == IdCoding::kSlimBased;
  const bool parts_in_ids = slim || edge_coding == IdCoding::kNarrowParts;
  const size_t key_bytes = ids_.coding == IdCoding::kNarrow ? 4 : 8;
  const size_t record =
      (slim ? kSlimRecord : 2 * key_bytes + (parts_in_ids ? 0 : 4)) + (keep_weights_ ? 8 : 0);
  const uint32_t part_shift = (slim ? kSlimBits : 32) - PartitionBits(frame_.size);
  const bool direct = ids_.direct;
  const ParsedChunk& ch = file_.chunks[c];
  const size_t records = ch.num_ids(file_.mode) / 2;
  // A destination's share of an edge's two records, with room to spare; at most one record per
  // edge.
  buffers.resize(frame_.size);
  for (RecordBuffer& b : buffers)
    b.Reserve(std::min(records, 2 * records / frame_.size + 16) * record);
  if (parts_in_ids && direct && file_.mode == IdMode::kNarrow && !keep_weights_ &&
      (slim ? RouteParts<IdCoding::kSlimParts>(share_ids_, frame_.size, ch.narrow, part_shift,
                                               record_base, both_ends_, buffers)
            : RouteParts<IdCoding::kNarrowParts>(share_ids_, frame_.size, ch.narrow, part_shift, 0,
                                                 both_ends_, buffers))) {
    return;
  }
  uint32_t ends[2] = {0, 0};  // the partitions of the record being written
  auto look_up = [&](const ParsedChunk&, size_t i, size_t m) {
    Ends e;
    if (direct && file_.mode == IdMode::kNarrow) {  // the common case, inline
      constexpr size_t kAhead = 16;                 // edges: their table entries arrive meanwhile
      const uint32_t* ids = ch.narrow.data();
      if (i + kAhead < m) {
        share_ids_.PrefetchDirect(ids[2 * (i + kAhead)]);
        share_ids_.PrefetchDirect(ids[2 * (i + kAhead) + 1]);
      }
      e = {share_ids_.DirectAt(ids[2 * i]), share_ids_.DirectAt(ids[2 * i + 1])};
    } else {
      e = PartitionsOf(ch, i, m);
    }
    ends[0] = e.ps;
    ends[1] = e.pd;
    return e;
  };
  Walk(c, look_up, [&](uint32_t to, uint32_t other, size_t i, double w) {
    char* rec = buffers[to].Take(record);
    if (parts_in_ids) {
      const uint32_t s = ch.narrow[2 * i], d = ch.narrow[2 * i + 1];
      const uint64_t ids =
          slim ? SlimPartsRecord(s - record_base, ends[0], d - record_base, ends[1], part_shift)
               : NarrowPartsRecord(s, ends[0], d, ends[1], part_shift);
      const size_t bytes = slim ? kSlimRecord : sizeof ids;
      std::memcpy(rec, &ids, bytes);
      if (keep_weights_) std::memcpy(rec + bytes, &w, 8);
      return;
    }
    const uint64_t keys[2] = {KeyOf(ch, i, 0).value, KeyOf(ch, i, 1).value};
    for (int k = 0; k < 2; ++k, rec += key_bytes) {
      if (key_bytes == 4) {
        const uint32_t v = static_cast<uint32_t>(keys[k]);
        std::memcpy(rec, &v, 4);
      } else {
        std::memcpy(rec, &keys[k], 8);
      }
    }
    std::memcpy(rec, &other, 4);
    if (keep_weights_) std::memcpy(rec + 4, &w, 8);
  });
}

void EdgeSender::AppendTagged(std::vector<std::string>& batches) {
  const size_t chunks = file_.chunks.size();
  const IdCoding coding = ids_.coding;
  std::vector<std::vector<std::string>> pieces(chunks, std::vector<std::string>(frame_.size));
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    const ParsedChunk& ch = file_.chunks[c];
    Walk(
        c, [&](const ParsedChunk& chunk, size_t i, size_t m) { return PartitionsOf(chunk, i, m); },
        [&](uint32_t to, uint32_t other, size_t i, double w) {
          std::string& o = pieces[c][to];
          PutKey(o, coding, KeyOf(ch, i, 0));
          PutKey(o, coding, KeyOf(ch, i, 1));
          Put(o, other);
          if (keep_weights_) Put(o, w);
        });
  });
  for (uint32_t q = 0; q < frame_.size; ++q) {
    size_t total = 1;
    for (size_t c = 0; c < chunks; ++c) total += pieces[c][q].size();
    batches[q].reserve(batches[q].size() + total);
    Put(batches[q], static_cast<uint8_t>(coding));
    for (size_t c = 0; c < chunks; ++c) {
      batches[q] += pieces[c][q];
      std::string().swap(pieces[c][q]);
    }
  }
}

EdgeSender::Ends EdgeSender::PartitionsOf(const ParsedChunk& ch, size_t i, size_t m) const {
  constexpr size_t kAhead = 16;  // edges: their table entries arrive meanwhile
  const std::vector<uint32_t>& part = ids_.part;
  const text::Dictionary& dict = ids_.dict;
  if (file_.mode == IdMode::kNarrow) {
    const uint32_t* ids = ch.narrow.data();
    if (ids_.direct) {
      if (i + kAhead < m) {
        share_ids_.PrefetchDirect(ids[2 * (i + kAhead)]);
        share_ids_.PrefetchDirect(ids[2 * (i + kAhead) + 1]);
      }
      return {share_ids_.DirectAt(ids[2 * i]), share_ids_.DirectAt(ids[2 * i + 1])};
    }
    if (i + kAhead < m) {
      dict.Prefetch(ids[2 * (i + kAhead)]);
      dict.Prefetch(ids[2 * (i + kAhead) + 1]);
    }
    return {part[dict.Find(uint64_t{ids[2 * i]})], part[dict.Find(uint64_t{ids[2 * i + 1]})]};
  }
  if (file_.mode == IdMode::kWide) {
    if (ids_.direct) {
      return {share_ids_.DirectAt(ch.wide[2 * i]), share_ids_.DirectAt(ch.wide[2 * i + 1])};
    }
    return {part[dict.Find(ch.wide[2 * i])], part[dict.Find(ch.wide[2 * i + 1])]};
  }
  return {part[dict.Find(ch.strs[2 * i])], part[dict.Find(ch.strs[2 * i + 1])]};
}

TextKey EdgeSender::KeyOf(const ParsedChunk& ch, size_t i, int end) const {
  switch (file_.mode) {
    case IdMode::kNarrow:
      return TextKey{true, ch.narrow[2 * i + end], {}};
    case IdMode::kWide:
      return TextKey{true, ch.wide[2 * i + end], {}};
    default:
      return TextKey::Of(ch.strs[2 * i + end]);
  }
}

template <class TextOf>
Failure EdgeSender::FailureAt(uint32_t kind, size_t c, size_t i, TextOf&& text_of) const {
  std::string_view tok[3];
  Failure f;
  f.kind = kind;
  f.share = frame_.rank;
  const uint64_t line = file_.RecordLine(c, i, tok);
  f.line = file_.LineOf(c, line);
  f.code = static_cast<int32_t>(absl::StatusCode::kInvalidArgument);
  f.text = AtRow(file_, c, line, text_of(tok));
  return f;
}

template <class EndsOf, class Emit>
void EdgeSender::Walk(size_t c, EndsOf&& ends_of, Emit&& emit) {
  const ParsedChunk& ch = file_.chunks[c];
  const size_t m = ch.num_ids(file_.mode) / 2;
  for (size_t i = 0; i < m; ++i) {
    const Ends e = ends_of(ch, i, m);
    const uint32_t ps = e.ps, pd = e.pd;
    if (((ps | pd) & kUnlistedBit) != 0) {
      if (!unlisted_[c]) {
        unlisted_[c] = FailureAt(kUnlisted, c, i, [&](const std::string_view* tok) {
          return text::UnlistedVertexMessage((ps & kUnlistedBit) ? tok[0] : tok[1], vertex_file_);
        });
      }
      continue;
    }
    const double w = keep_weights_ ? ch.weights[i] : 0.0;
    if (keep_weights_ && (w < 0 || std::isinf(w)) && !bad_weight_[c]) {
      bad_weight_[c] = FailureAt(kBadWeight, c, i, [&](const std::string_view* tok) {
        return text::BadWeightMessage(w, tok[2]);
      });
    }
    emit(ps, pd, i, w);
    if (both_ends_ && pd != ps) emit(pd, ps, i, w);
  }
}

}  // namespace lockstep::load::partitioned
