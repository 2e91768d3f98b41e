#include "partitioned/ranking.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <utility>

#include "lockstep/bsp/bytes.h"
#include "lockstep/bsp/collectives.h"
#include "partitioned/leave_raw.h"
#include "partitioned/records.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"

namespace lockstep::load::partitioned {
namespace {

using bsp::ByteReader;
using bsp::Put;
using bsp::VertexId;
using text::kNoIndex;
using text::TextKey;

bool KeyLess(const TextKey& a, const TextKey& b) { return a < b; }

// The union of every worker's bitmap of owned positions (`owned`, `words` long on each): worker q
// merges words [seg(q), seg(q + 1)) of everyone's bitmap (each vertex is owned once), then all
// gather the pieces.
absl::StatusOr<std::vector<uint64_t>> UnionOfOwned(const LoadFrame& frame,
                                                   std::vector<uint64_t> owned, size_t words) {
  const uint32_t size = frame.size;
  auto seg = [&](uint32_t q) { return static_cast<size_t>(uint64_t{q} * words / size); };
  std::vector<std::string> out(size);
  for (uint32_t q = 0; q < size; ++q) {
    out[q].assign(reinterpret_cast<const char*>(owned.data() + seg(q)),
                  (seg(q + 1) - seg(q)) * sizeof(uint64_t));
  }
  owned = {};
  auto in = frame.exchange.AllToAll(std::move(out));
  if (!in.ok()) return in.status();
  std::vector<uint64_t> merged(seg(frame.rank + 1) - seg(frame.rank), 0);
  for (const std::string& piece : *in) {
    if (piece.size() != merged.size() * sizeof(uint64_t)) return Malformed();
    for (size_t w = 0; w < merged.size(); ++w) {
      uint64_t bits;
      std::memcpy(&bits, piece.data() + w * sizeof bits, sizeof bits);
      if ((merged[w] & bits) != 0) return Malformed();  // a vertex owned twice
      merged[w] |= bits;
    }
  }
  in->clear();
  auto gathered = bsp::AllGather(
      frame.exchange,
      std::string(reinterpret_cast<const char*>(merged.data()), merged.size() * sizeof(uint64_t)));
  if (!gathered.ok()) return gathered.status();
  merged = {};
  std::vector<uint64_t> union_words(words);
  for (uint32_t q = 0; q < size; ++q) {
    const std::string& piece = (*gathered)[q];
    if (piece.size() != (seg(q + 1) - seg(q)) * sizeof(uint64_t)) return Malformed();
    if (!piece.empty()) std::memcpy(union_words.data() + seg(q), piece.data(), piece.size());
  }
  return union_words;
}

// The names of this worker's equal share of the ranks (RankNames), found in the union.
void NameRanks(const LoadFrame& frame, const RankedBits& every_id, uint64_t id_base, Ranks& ranks) {
  const uint64_t total = every_id.size();
  const uint32_t size = frame.size, rank = frame.rank;
  ranks.starts.assign(size + 1, 0);
  for (uint32_t q = 0; q <= size; ++q) ranks.starts[q] = total * q / size;
  for (uint64_t g = ranks.starts[rank]; g < ranks.starts[rank + 1];) {
    size_t w = every_id.WordOfRank(g);
    uint64_t bits = every_id.Bits(w);
    for (uint64_t skip = g - every_id.Before(w); skip > 0; --skip) bits &= bits - 1;
    for (; bits != 0 && g < ranks.starts[rank + 1]; bits &= bits - 1, ++g) {
      ranks.names_ints.push_back(id_base + uint64_t{w} * 64 +
                                 static_cast<uint64_t>(std::countr_zero(bits)));
    }
  }
}

}  // namespace

absl::StatusOr<std::optional<Ranks>> RankRaw(const LoadFrame& frame, const Agreement& agreement,
                                             Received& got, bsp::PartitionLoadStats& stats) {
  using RawEnd = bsp::PartitionLoadStats::RawEnd;
  if (!agreement.every_raw) {
    if (auto st = LeaveRaw(got, frame.rank, RawEnd::kRanking, stats); !st.ok()) return st;
    return std::nullopt;
  }
  const uint64_t limit = agreement.raw_limit;
  // Every worker's owned IDs (their positions from the one base) as bitmaps of the same length,
  // covering the largest anyone met. The union of the bitmaps is the set of all vertices, and a
  // vertex's global index is the number of members below its position (integers rank
  // numerically).
  const size_t words = (limit + 63) / 64;
  auto owned = LeaveRawForBitmaps(got, frame.rank, words, stats);
  if (!owned.ok()) return owned.status();
  auto union_words = UnionOfOwned(frame, *std::move(owned), words);
  if (!union_words.ok()) return union_words.status();
  // No ID at or past the largest anyone met (which also keeps the counts below 2^32).
  if (limit % 64 != 0 && (union_words->back() >> (limit % 64)) != 0) return Malformed();
  const RankedBits every_id(*std::move(union_words));
  if (every_id.size() >= kNoIndex) return absl::OutOfRangeError("more than 2^32-1 vertices");
  Ranks ranks;
  NameRanks(frame, every_id, got.raw.id_base, ranks);
  // The owned vertices' global indexes (each in the union, unless a peer merged it away); the
  // owners tell the remote ones' (AskRemotes).
  const VertexTable& table = got.table;
  const uint64_t id_base = got.raw.id_base;
  ranks.rank_of.assign(table.size(), kNoIndex);
  std::atomic<bool> missing{false};
  tbb::parallel_for(uint32_t{0}, table.size(), [&](uint32_t v) {
    if (!table.owned[v]) return;
    const uint64_t at = table.KeyAt(v).value - id_base;  // (the table's IDs, all at or past it)
    if (!every_id.Has(at)) {
      missing = true;
      return;
    }
    ranks.rank_of[v] = every_id.Rank(at);
  });
  if (missing) return Malformed();
  return ranks;
}

namespace {

// The sample sort of RankBySample, step by step. The keys it handles point into the batches it
// received, which it keeps while they are read.
class SampleSort {
 public:
  SampleSort(const LoadFrame& frame, const VertexTable& table) : frame_(frame), table_(table) {}

  absl::StatusOr<Ranks> Run() {
    SortOwned();
    if (auto st = ChooseSplitters(); !st.ok()) return st;
    FindRuns();
    auto in = frame_.exchange.AllToAll(NamesByRun());
    if (!in.ok()) return in.status();
    Ranks ranks;
    auto replies = RankRange(*std::move(in), ranks);
    if (!replies.ok()) return replies.status();
    auto back = frame_.exchange.AllToAll(*std::move(replies));
    if (!back.ok()) return back.status();
    ranks.rank_of.assign(table_.size(), kNoIndex);
    for (uint32_t b = 0; b < frame_.size; ++b) {
      ByteReader r((*back)[b]);
      for (size_t i = run_begin_[b]; i < run_begin_[b + 1]; ++i) {
        if (!r.Get(ranks.rank_of[own_[i]])) return Malformed();
      }
    }
    return ranks;
  }

 private:
  // This worker's vertices in ID order.
  void SortOwned() {
    for (uint32_t v = 0; v < table_.size(); ++v) {
      if (table_.owned[v]) own_.push_back(v);
    }
    tbb::parallel_sort(own_.begin(), own_.end(), [&](uint32_t a, uint32_t b) {
      return KeyLess(table_.KeyAt(a), table_.KeyAt(b));
    });
  }

  // Samples, evenly spaced; the same splitters everywhere.
  absl::Status ChooseSplitters() {
    const size_t samples = std::min<size_t>(own_.size(), 64);
    std::string mine;
    for (size_t j = 0; j < samples; ++j) {
      PutKey(mine, IdCoding::kTagged, table_.KeyAt(own_[j * own_.size() / samples]));
    }
    auto gathered = bsp::AllGather(frame_.exchange, mine);
    if (!gathered.ok()) return gathered.status();
    samples_ = *std::move(gathered);
    std::vector<TextKey> all;
    for (const std::string& s : samples_) {
      ByteReader r(s);
      while (!r.empty()) {
        TextKey k;
        if (!GetKey(r, IdCoding::kTagged, k)) return Malformed();
        all.push_back(k);
      }
    }
    std::sort(all.begin(), all.end(), KeyLess);
    if (!all.empty()) {
      for (uint32_t b = 1; b < frame_.size; ++b) {
        splitters_.push_back(all[b * all.size() / frame_.size]);
      }
    }
    return absl::OkStatus();
  }

  // The run of owned names that goes to each worker: those in its rank range.
  void FindRuns() {
    const uint32_t size = frame_.size;
    run_begin_.assign(size + 1, own_.size());
    run_begin_[0] = 0;
    size_t i = 0;
    for (uint32_t b = 0; b < size; ++b) {
      run_begin_[b] = i;
      while (i < own_.size() && (b + 1 >= size || splitters_.empty() ||
                                 KeyLess(table_.KeyAt(own_[i]), splitters_[b]))) {
        ++i;
      }
    }
    run_begin_[size] = own_.size();
  }

  std::vector<std::string> NamesByRun() const {
    std::vector<std::string> out(frame_.size);
    for (uint32_t b = 0; b < frame_.size; ++b) {
      for (size_t i = run_begin_[b]; i < run_begin_[b + 1]; ++i) {
        PutKey(out[b], IdCoding::kTagged, table_.KeyAt(own_[i]));
      }
    }
    return out;
  }

  // Ranks the names this worker's range received (its start counted from every worker's count),
  // keeps their names, and returns each sender's ranks, in the order its run came.
  absl::StatusOr<std::vector<std::string>> RankRange(std::vector<std::string> in, Ranks& ranks) {
    const uint32_t size = frame_.size;
    struct Entry {
      TextKey key;
      uint32_t from;
      uint32_t pos;
    };
    std::vector<Entry> range;
    std::vector<uint32_t> run_size(size, 0);
    for (uint32_t p = 0; p < size; ++p) {
      ByteReader r(in[p]);
      while (!r.empty()) {
        TextKey k;
        if (!GetKey(r, IdCoding::kTagged, k)) return Malformed();
        range.push_back({k, p, run_size[p]++});
      }
    }
    tbb::parallel_sort(range.begin(), range.end(),
                       [](const Entry& a, const Entry& b) { return KeyLess(a.key, b.key); });
    if (auto st = CountRanges(range.size(), ranks); !st.ok()) return st;
    std::vector<std::vector<uint32_t>> rank_of(size);
    for (uint32_t p = 0; p < size; ++p) rank_of[p].resize(run_size[p]);
    for (size_t i = 0; i < range.size(); ++i) {
      rank_of[range[i].from][range[i].pos] = static_cast<uint32_t>(ranks.starts[frame_.rank] + i);
      if (range[i].key.is_int) {
        ranks.names_ints.push_back(range[i].key.value);
      } else {
        ranks.names_texts.emplace_back(range[i].key.text);
      }
    }
    range = {};
    in.clear();
    std::vector<std::string> replies(size);
    for (uint32_t p = 0; p < size; ++p) {
      replies[p].assign(reinterpret_cast<const char*>(rank_of[p].data()),
                        rank_of[p].size() * sizeof(uint32_t));
    }
    return replies;
  }

  // Where each worker's range starts, from every worker's count.
  absl::Status CountRanges(size_t mine, Ranks& ranks) {
    std::string count;
    Put(count, static_cast<uint64_t>(mine));
    auto counts = bsp::AllGather(frame_.exchange, count);
    if (!counts.ok()) return counts.status();
    ranks.starts.assign(frame_.size + 1, 0);
    for (uint32_t p = 0; p < frame_.size; ++p) {
      ByteReader r((*counts)[p]);
      uint64_t n;
      if (!r.Get(n)) return Malformed();
      ranks.starts[p + 1] = ranks.starts[p] + n;
    }
    if (ranks.starts[frame_.size] >= kNoIndex) {
      return absl::OutOfRangeError("more than 2^32-1 vertices");
    }
    return absl::OkStatus();
  }

  const LoadFrame& frame_;
  const VertexTable& table_;
  std::vector<uint32_t> own_;  // owned entries, in ID order
  std::vector<std::string> samples_;
  std::vector<TextKey> splitters_;  // (into samples_)
  std::vector<size_t> run_begin_;
};

}  // namespace

absl::StatusOr<Ranks> RankBySample(const LoadFrame& frame, const VertexTable& table) {
  return SampleSort(frame, table).Run();
}

namespace {

// An owner's answers to one step's questions about its vertices: each one's rank and UUID
// (kNoIndex and none for a vertex it does not own).
struct Answers {
  std::vector<std::string> replies;
  bool more = false;     // some worker has more to ask
  bool unknown = false;  // a vertex asked about is not this worker's
};

absl::StatusOr<Answers> Answer(const std::vector<std::string>& in, const VertexTable& table,
                               const std::vector<uint32_t>& rank_of) {
  Answers a;
  a.replies.resize(in.size());
  // The questions' table entries first, then the answers: each step reads the tables at random
  // (beyond the caches for a large part), so the entries a few ahead are fetched meanwhile.
  std::vector<uint32_t> entries;
  for (size_t p = 0; p < in.size(); ++p) {
    ByteReader r(in[p]);
    uint8_t has_more;
    if (!r.Get(has_more)) return Malformed();
    a.more = a.more || has_more != 0;
    entries.clear();
    while (!r.empty()) {
      TextKey k;
      if (!GetKey(r, IdCoding::kTagged, k)) return Malformed();
      entries.push_back(table.Find(k));
    }
    std::string& reply = a.replies[p];
    reply.reserve(entries.size() * (sizeof(uint32_t) + sizeof(VertexId)));
    constexpr size_t kAhead = 8;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i + kAhead < entries.size() && entries[i + kAhead] != kNoIndex) {
        __builtin_prefetch(rank_of.data() + entries[i + kAhead]);
        __builtin_prefetch(table.uuid.data() + entries[i + kAhead]);
        __builtin_prefetch(table.owned.data() + entries[i + kAhead]);
      }
      const uint32_t v = entries[i];
      const bool owned = v != kNoIndex && table.owned[v];
      a.unknown |= !owned;
      Put(reply, owned ? rank_of[v] : kNoIndex);
      Put(reply, owned ? table.uuid[v] : VertexId{});
    }
  }
  return a;
}

}  // namespace

absl::Status AskRemotes(const LoadFrame& frame, VertexTable& table,
                        std::vector<uint32_t>& rank_of) {
  const uint32_t size = frame.size;
  std::vector<std::vector<uint32_t>> asked(size);
  for (uint32_t v = 0; v < table.size(); ++v) {
    if (!table.owned[v]) asked[table.part[v]].push_back(v);
  }
  // In steps of at most options.list_step questions per owner, so that the questions and the
  // answers (20 bytes each) are never all held at once beside the received edges. Each step's
  // batch is led by a byte: whether its sender has more to ask.
  const size_t step = std::max<uint64_t>(1, frame.options.list_step);
  std::vector<size_t> done(size, 0);
  bool unknown = false;
  for (bool more = true; more;) {
    std::vector<std::string> out(size);
    std::vector<size_t> end(size);
    bool mine = false;
    for (uint32_t p = 0; p < size; ++p) {
      end[p] = std::min(asked[p].size(), done[p] + step);
      mine = mine || end[p] < asked[p].size();
    }
    for (uint32_t p = 0; p < size; ++p) {
      Put(out[p], uint8_t{mine});
      for (size_t i = done[p]; i < end[p]; ++i) {
        PutKey(out[p], IdCoding::kTagged, table.KeyAt(asked[p][i]));
      }
    }
    auto in = frame.exchange.AllToAll(std::move(out));
    if (!in.ok()) return in.status();
    auto answers = Answer(*in, table, rank_of);
    if (!answers.ok()) return answers.status();
    in->clear();
    more = answers->more;
    unknown = unknown || answers->unknown;
    auto back = frame.exchange.AllToAll(std::move(answers->replies));
    if (!back.ok()) return back.status();
    for (uint32_t p = 0; p < size; ++p) {
      ByteReader r((*back)[p]);
      for (size_t i = done[p]; i < end[p]; ++i) {
        const uint32_t v = asked[p][i];
        if (!r.Get(rank_of[v]) || !r.Get(table.uuid[v])) return Malformed();
      }
      done[p] = end[p];
    }
  }
  return unknown ? absl::InternalError("partitioned load: a vertex has no owner")
                 : absl::OkStatus();
}

}  // namespace lockstep::load::partitioned
