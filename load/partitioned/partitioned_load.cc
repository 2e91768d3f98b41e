// Loading by partition (docs/design.md §4).
//
// Worker r of P reads share r of each file: the lines that start in bytes [r*S/P, (r+1)*S/P) of
// a file of S bytes, in rounds of a bounded number of bytes. Each round is parsed in parallel by
// the whole-graph loader's parser (io/parse.h); each distinct ID of the round is hashed to its
// UUID once per share (a per-share dictionary), which gives its owner; then, through the
// Exchange, vertices go to their owners (with the UUID) and every stored edge goes to the owner
// of its source and, when the program needs in-edges or the input is symmetric, of its target,
// as compact records (integer IDs as 4 or 8 bytes). Every worker runs the same number of rounds:
// each round's first step tells all whether anyone has more.
//
// A worker keeps the stored edges it receives per sender; senders are shares and shares are in
// file order, so the concatenation is in input order. Global indexes are ranks in ExternalIdLess
// order, found by a sample sort over the exchange: the owners send their sorted names to the
// workers whose rank range they fall in, which count, rank and answer; each worker then asks the
// owners of its remote vertices for their rank and UUID. The worker's GraphInput (its vertices
// in rank order, its edges in input order) then builds exactly the part Topology::Build makes
// from the whole input.
//
// Errors are collective: each worker keeps its first failure of each kind with its position
// (share, line in the share); all exchange them with their line counts at the end of the input,
// and every worker picks the same failure, in the order the whole-graph loader would report it,
// with its line in the whole file.
#include "lockstep/load/partitioned_load.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/bytes.h"
#include "lockstep/bsp/collectives.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/bsp/oom_safe.h"
#include "lockstep/bsp/radix_sort.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/load/input_form.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"
#include "text/dictionary.h"
#include "text/messages.h"
#include "text/parse.h"
#include "text/share_reader.h"

namespace lockstep::load {
namespace {

using bsp::AgreeOnStatus;
using bsp::AllGather;
using bsp::ByteReader;
using bsp::Exchange;
using bsp::GraphInput;
using bsp::GraphSource;
using bsp::GraphTextShare;
using bsp::GrowOrAbandon;
using bsp::PartEdges;
using bsp::PartitionLoadStats;
using bsp::PartVertices;
using bsp::Put;
using bsp::ReturnFreedMemory;
using bsp::SortByHighWord;
using bsp::VertexId;
using bsp::VertexIdFromExternal;
using bsp::VertexIdFromInteger;
using bsp::WeightUse;
using text::Dictionary;
using text::FileKind;
using text::IdMode;
using text::kNoIndex;
using text::ParsedChunk;
using text::ParsedFile;
using text::TextKey;

absl::Status Malformed() {
  return absl::InternalError("partitioned load: a peer sent a malformed record");
}

// How a batch of records spells its IDs: 4- or 8-byte integers, or a tag per ID (an integer's
// value, or the text of any other ID). kNarrowParts (edge records only): 4-byte integers that
// carry their end's partition in their top PartitionBits() bits instead of a partition field,
// which makes a record 8 bytes instead of 12. kSlimParts (edge records only): the same in 3
// bytes per end, a record of 6 bytes, while the IDs leave room for the partition in 24 bits
// (below 2^22 for 3 or 4 workers). kSlimBased (edge records only): kSlimParts of the IDs less a
// base, which the batch gives (8 bytes) before its records, for IDs far from 0 but close together.
enum class IdCoding : uint8_t {
  kNarrow = 0,
  kWide = 1,
  kTagged = 2,
  kNarrowParts = 3,
  kSlimParts = 4,
  kSlimBased = 5
};
constexpr auto kLastCoding = static_cast<uint8_t>(IdCoding::kSlimBased);

// The bits a partition below `partitions` takes at the top of a kNarrowParts ID.
uint32_t PartitionBits(uint32_t partitions) {
  return static_cast<uint32_t>(std::bit_width(std::max<uint32_t>(partitions, 1) - 1));
}

// A kNarrowParts edge record: the source's then the target's ID, each with its end's partition
// in its top bits (`shift` = 32 - PartitionBits), as a little-endian 64-bit word.
inline uint64_t NarrowPartsRecord(uint32_t src, uint32_t ps, uint32_t dst, uint32_t pd,
                                  uint32_t shift) {
  return (src | static_cast<uint32_t>(uint64_t{ps} << shift)) |
         uint64_t{dst | static_cast<uint32_t>(uint64_t{pd} << shift)} << 32;
}

// The bits of a kSlimParts end, and a record's bytes. Records are little-endian (a 6-byte record
// is written as the low bytes of an 8-byte store).
constexpr uint32_t kSlimBits = 24;
constexpr size_t kSlimRecord = 6;

// An edge list's round batch leads with its flags (a byte), the length of its announcements, and
// in the first round its sender's least ID (kNoLeast in later rounds, or for none known), each in
// 8 bytes; then the announcements and the edge records.
constexpr uint64_t kNoLeast = std::numeric_limits<uint64_t>::max();
constexpr size_t kLeastAt = 1 + sizeof(uint64_t);
constexpr size_t kRoundLead = kLeastAt + sizeof(uint64_t);
static_assert(std::endian::native == std::endian::little);

// A kSlimParts edge record: the source's then the target's ID, each with its end's partition in
// the top bits of its 24 (`shift` = 24 - PartitionBits), as a little-endian 48-bit value.
inline uint64_t SlimPartsRecord(uint32_t src, uint32_t ps, uint32_t dst, uint32_t pd,
                                uint32_t shift) {
  return (src | ps << shift) | uint64_t{dst | pd << shift} << kSlimBits;
}

// The 48-bit value of the kSlimParts record at `rec`, assembled in registers (a 6-byte copy into a
// zeroed word stalls the load that reads it back).
inline uint64_t LoadSlim(const char* rec) {
  uint32_t low;
  uint16_t high;
  std::memcpy(&low, rec, sizeof low);
  std::memcpy(&high, rec + sizeof low, sizeof high);
  return low | uint64_t{high} << 32;
}

// Of a record whose ends have partitions ps and pd, the one the receiver `self` does not own (its
// own if it owns both), or `parts` (never a partition) if it owns neither: a malformed record.
inline uint32_t OtherPartition(uint32_t ps, uint32_t pd, uint32_t self, uint32_t parts) {
  return ps == self ? pd : pd == self ? ps : parts;
}

IdCoding CodingOf(IdMode mode) {
  return mode == IdMode::kNarrow ? IdCoding::kNarrow
         : mode == IdMode::kWide ? IdCoding::kWide
                                 : IdCoding::kTagged;
}

void PutKey(std::string& out, IdCoding coding, const TextKey& k) {
  switch (coding) {
    case IdCoding::kNarrow:
    case IdCoding::kNarrowParts:  // never a vertex's key: its partition is not in the key
    case IdCoding::kSlimParts:
    case IdCoding::kSlimBased:
      Put(out, static_cast<uint32_t>(k.value));
      return;
    case IdCoding::kWide:
      Put(out, k.value);
      return;
    case IdCoding::kTagged:
      break;
  }
  if (k.is_int) {
    Put(out, uint8_t{0});
    Put(out, k.value);
  } else {
    Put(out, uint8_t{1});
    Put(out, static_cast<uint32_t>(k.text.size()));
    out.append(k.text);
  }
}

bool GetKey(ByteReader& in, IdCoding coding, TextKey& k) {
  k = TextKey{true, 0, {}};
  if (coding == IdCoding::kNarrow) {
    uint32_t v;
    if (!in.Get(v)) return false;
    k.value = v;
    return true;
  }
  if (coding == IdCoding::kWide) return in.Get(k.value);
  if (coding == IdCoding::kNarrowParts || coding == IdCoding::kSlimParts ||
      coding == IdCoding::kSlimBased) {
    return false;  // edge records only, read as records
  }
  uint8_t tag;
  if (!in.Get(tag)) return false;
  if (tag == 0) return in.Get(k.value);
  uint32_t n;
  k.is_int = false;
  return tag == 1 && in.Get(n) && in.GetBytes(n, k.text);
}

bool GetCoding(ByteReader& in, IdCoding& coding) {
  uint8_t c;
  if (!in.Get(c) || c > kLastCoding) return false;
  coding = static_cast<IdCoding>(c);
  return true;
}

std::string NameOf(const TextKey& k) {
  if (!k.is_int) return std::string(k.text);
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, k.value);
  return std::string(buf, end);
}

// ---------------------------------------------------------------------------------------------
// Failures, kept as (kind, position) so that every worker can pick the one LoadGraph reports.

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
  void Encode(std::string& out) const {
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
  bool Decode(ByteReader& in) {
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
};

void Note(Failure& best, Failure f) {
  f.set = true;
  if (!best.set || f.Before(best)) best = std::move(f);
}

Failure FromStatus(const absl::Status& st, uint32_t kind = kIo) {
  Failure f;
  f.set = true;
  f.kind = kind;
  f.code = static_cast<int32_t>(st.code());
  f.text = std::string(st.message());
  return f;
}

// ---------------------------------------------------------------------------------------------
// The IDs a share has met (sender side): each hashed once, with its owner.

constexpr uint32_t kUnlistedBit = 0x80000000u;

// absl's maps hash absl::string_view, which need not be std::string_view.
absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// The partition of each ID this worker's share has met (sender side), so that each is hashed to
// its UUID once per share; a partition may carry kUnlistedBit. Integer IDs below a bound are held
// in a direct table of 8-bit entries (an array indexed by the ID: a load looks up both ends of
// every edge of every round here, at random, so a byte rather than two keeps twice the IDs in L2);
// the bound grows with the IDs met, at most 8 entries per ID held, so a sparse ID space, or more
// than 126 workers, falls back to the hash map. The table starts at or below the smallest ID the
// direct rounds have met (at 0 if that is below 2^20): a dense ID space far from 0 is covered.
class ShareIds {
 public:
  explicit ShareIds(uint32_t partitions) : direct_ok_(partitions < kPending) {}

  std::optional<uint32_t> Find(const TextKey& k) const {
    if (k.is_int) {
      if (InDirect(k.value) && direct_[k.value - lo_] != kAbsent) {
        return Decode(direct_[k.value - lo_]);
      }
      if (ints_.empty()) return std::nullopt;
      auto it = ints_.find(k.value);
      return it == ints_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
    }
    auto it = texts_.find(Absl(k.text));
    return it == texts_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
  }
  // Adds an ID not held yet with its partition.
  void Add(const TextKey& k, uint32_t partition) {
    if (!k.is_int) {
      GrowOrAbandon(texts_, [&] { return texts_.emplace(std::string(k.text), partition); });
      return;
    }
    ++held_;
    const uint64_t bound = direct_ok_ ? std::max<uint64_t>(uint64_t{1} << 20, 8 * held_) : 0;
    if (k.value >= lo_ && k.value - lo_ >= direct_.size() && k.value - lo_ < bound) {
      direct_.resize(
          std::min<uint64_t>(bound, std::max<uint64_t>(k.value - lo_ + 1, 2 * direct_.size())),
          kAbsent);
    }
    if (InDirect(k.value)) {
      direct_[k.value - lo_] = static_cast<uint8_t>(partition);
      hi_ = std::max(hi_, k.value);
    } else {
      GrowOrAbandon(ints_, [&] { return ints_.emplace(k.value, partition); });
    }
  }
  // Sets kUnlistedBit on a held ID.
  void MarkUnlisted(const TextKey& k) {
    if (k.is_int && InDirect(k.value) && direct_[k.value - lo_] != kAbsent) {
      direct_[k.value - lo_] |= kUnlisted8;
    } else if (k.is_int) {
      ints_.at(k.value) |= kUnlistedBit;
    } else {
      texts_.find(Absl(k.text))->second |= kUnlistedBit;
    }
  }

  // The direct path of a round of integer IDs (no dictionary of the round): whether the direct
  // table can cover the round's IDs, up to `max_id`, for a round of `ends` edge ends (every
  // integer ID held so far is in it, and it stays within 8 entries per ID held or met); if so it
  // then covers them, its start moved down if the round's IDs begin below it. `min_id()` gives
  // the round's smallest ID (the largest uint64_t for none), asked only if the table does not
  // start at 0 or cannot cover the round from 0.
  template <class MinId>
  bool CoverDirect(uint64_t max_id, uint64_t ends, MinId&& min_id_of_round) {
    if (!direct_ok_ || !ints_.empty()) return false;
    const uint64_t bound = std::max<uint64_t>(uint64_t{1} << 20, 8 * (held_ + ends));
    const uint64_t min_id = lo_ == 0 && max_id < bound ? 0 : min_id_of_round();
    if (min_id > max_id) return false;
    least_ = min_id;
    uint64_t lo = min_id < (uint64_t{1} << 20) ? 0 : min_id;
    if (!direct_.empty() && lo >= lo_) lo = lo_;
    const uint64_t top = std::max(max_id, hi_);
    if (top - lo >= bound) return false;
    if (!direct_.empty() && lo < lo_) {
      // Moved down with room to spare below (as much as the table holds, within the bound), so
      // that rounds of falling IDs move it a few times, not once a round.
      lo -= std::min({lo, static_cast<uint64_t>(direct_.size()), bound - 1 - (top - lo)});
      direct_.insert(direct_.begin(), lo_ - lo, kAbsent);
    }
    lo_ = lo;
    hi_ = top;
    if (max_id - lo_ >= direct_.size()) {
      direct_.resize(
          std::min<uint64_t>(bound, std::max<uint64_t>(max_id - lo_ + 1, 2 * direct_.size())),
          kAbsent);
    }
    return true;
  }
  // Between CoverDirect and Place: true for exactly one caller per ID not held yet (callers may
  // run in parallel).
  bool Claim(uint64_t id) {
    std::atomic_ref<uint8_t> e(direct_[id - lo_]);
    uint8_t absent = kAbsent;
    return e.load(std::memory_order_relaxed) == kAbsent &&
           e.compare_exchange_strong(absent, kPending, std::memory_order_relaxed);
  }
  // Holds a claimed ID with its partition (distinct IDs may be placed in parallel).
  void Place(uint64_t id, uint32_t partition) {
    direct_[id - lo_] = static_cast<uint8_t>(partition);
  }
  void CountPlaced(size_t n) { held_ += n; }
  // The partition of a covered, held ID (with kUnlistedBit).
  uint32_t DirectAt(uint64_t id) const { return Decode(direct_[id - lo_]); }
  void PrefetchDirect(uint64_t id) const { __builtin_prefetch(direct_.data() + (id - lo_)); }
  // The direct table's entries, ID DirectStart() first: a partition below kPending, else
  // kAbsent, kPending, or a partition with kUnlisted8.
  const uint8_t* DirectTable() const { return direct_.data(); }
  uint64_t DirectStart() const { return lo_; }
  // After a round CoverDirect covered: at most its least ID (the least itself where the table
  // does not start at 0 or could not cover the round from 0, else 0).
  uint64_t RoundLeast() const { return least_; }

 private:
  static constexpr uint8_t kUnlisted8 = 0x80;
  static constexpr uint8_t kAbsent = 0xff;   // not a partition below kPending, with or without
  static constexpr uint8_t kPending = 0x7f;  // flag: claimed, its partition still coming
  static uint32_t Decode(uint8_t v) {
    return (v & ~uint32_t{kUnlisted8}) | ((v & kUnlisted8) != 0 ? kUnlistedBit : 0);
  }
  bool InDirect(uint64_t id) const { return id >= lo_ && id - lo_ < direct_.size(); }

  bool direct_ok_;
  std::vector<uint8_t> direct_;  // the entry of ID lo_ + i at i
  uint64_t lo_ = 0;
  uint64_t hi_ = 0;  // the largest ID the table covers for a round or holds
  uint64_t least_ = 0;
  uint64_t held_ = 0;
  absl::flat_hash_map<uint64_t, uint32_t> ints_;
  absl::flat_hash_map<std::string, uint32_t> texts_;
};

// ---------------------------------------------------------------------------------------------
// Sets of integers as bitmaps.

#if defined(__x86_64__) && !defined(__POPCNT__)
// Whether the CPU has the popcnt instruction (every x86-64 since 2008; the build targets the
// baseline, which lacks it).
const bool kCpuPopcnt = [] {
  __builtin_cpu_init();  // (before main)
  return __builtin_cpu_supports("popcnt") != 0;
}();
#endif

// The bits set in x, inline: without -mpopcnt, std::popcount is a call into libgcc, which the
// rank lookup of every received edge end would pay; the instruction where the CPU has it (a
// branch the same way every time), else by arithmetic.
inline uint32_t Popcount(uint64_t x) {
#if defined(__POPCNT__)
  return static_cast<uint32_t>(__builtin_popcountll(x));
#else
#if defined(__x86_64__)
  if (kCpuPopcnt) {
    uint64_t bits;
    asm("popcntq %1, %0" : "=r"(bits) : "rm"(x));
    return static_cast<uint32_t>(bits);
  }
#endif
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<uint32_t>((x * 0x0101010101010101ull) >> 56);
#endif
}

// A set of integers below a bound, as a bitmap with the count of members before each 64-bit word:
// membership and rank (the members below a value) at the cost of two reads, from 3/16 of a byte
// per integer below the bound (192 KiB for 2^20: in L2).
class RankedBits {
 public:
  RankedBits() = default;
  explicit RankedBits(std::vector<uint64_t> words)
      : words_(std::move(words)), before_(words_.size() + 1) {
    uint32_t n = 0;
    for (size_t i = 0; i < words_.size(); ++i) {
      before_[i] = n;
      n += Popcount(words_[i]);
    }
    before_[words_.size()] = n;
  }
  uint64_t limit() const { return uint64_t{words_.size()} * 64; }
  uint32_t size() const { return before_.empty() ? 0 : before_.back(); }
  bool Has(uint64_t v) const { return v < limit() && ((words_[v >> 6] >> (v & 63)) & 1) != 0; }
  // The members below v (v < limit()).
  uint32_t Rank(uint64_t v) const { return view().Rank(v); }
  // The members before word w.
  uint32_t Before(size_t w) const { return before_[w]; }
  // The word that holds the member of rank k (k < size()).
  size_t WordOfRank(uint64_t k) const {
    return static_cast<size_t>(std::upper_bound(before_.begin(), before_.end(), k) -
                               before_.begin()) -
           1;
  }
  uint64_t Bits(size_t w) const { return words_[w]; }
  const std::vector<uint64_t>& words() const { return words_; }
  // Has and Rank of members below limit(), through pointers a loop keeps in registers (a write
  // through char* in the loop would make it reload a vector's).
  struct View {
    const uint64_t* words;
    const uint32_t* before;
    bool Has(uint64_t v) const { return ((words[v >> 6] >> (v & 63)) & 1) != 0; }
    uint32_t Rank(uint64_t v) const {
      return before[v >> 6] + Popcount(words[v >> 6] & ((uint64_t{1} << (v & 63)) - 1));
    }
  };
  View view() const { return View{words_.data(), before_.data()}; }

 private:
  std::vector<uint64_t> words_;
  std::vector<uint32_t> before_;
};

// ---------------------------------------------------------------------------------------------
// The vertices a worker knows (receiver side): its own and the remote ends of its edges.

class VertexTable {
 public:
  uint32_t Find(const TextKey& k) const { return k.is_int ? FindInt(k.value) : FindText(k.text); }
  // A hint that FindInt(value) comes soon (the direct table is larger than the caches).
  void PrefetchInt(uint64_t value) const {
    if (value < direct_.size()) __builtin_prefetch(direct_.data() + value);
  }
  uint32_t FindInt(uint64_t value) const {
    if (const uint32_t v = FindSorted(value); v != kNoIndex) return v;
    if (value < direct_.size()) return direct_[value];
    auto it = ints_.find(value);
    return it == ints_.end() ? kNoIndex : it->second;
  }
  uint32_t FindText(std::string_view text) const {
    auto it = texts_.find(Absl(text));
    return it == texts_.end() ? kNoIndex : it->second;
  }
  // Integer IDs below `limit` are then looked up in a direct table (an array indexed by the ID),
  // not hashed: the receiving side of a load looks up two IDs per edge. The caller bounds the
  // table by what it holds anyway (docs/design.md §4), so the table never follows the ID space
  // of a sparse-ID graph.
  void CoverIntegersBelow(uint64_t limit) {
    if (limit <= direct_.size()) return;
    const uint64_t old = direct_.size();
    direct_.resize(limit, kNoIndex);
    for (auto it = ints_.begin(); it != ints_.end();) {
      if (it->first >= old && it->first < limit) {
        direct_[it->first] = it->second;
        ints_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  // The index of `k`, added (not owned, partition `part`) if new.
  uint32_t Intern(const TextKey& k, uint32_t owner, bool& added) {
    const uint32_t next = static_cast<uint32_t>(value_.size());
    added = false;
    if (k.is_int) {
      if (const uint32_t v = FindSorted(k.value); v != kNoIndex) return v;
      if (k.value < direct_.size()) {
        if (direct_[k.value] != kNoIndex) return direct_[k.value];
        direct_[k.value] = next;
      } else {
        auto [it, inserted] = GrowOrAbandon(ints_, [&] { return ints_.emplace(k.value, next); });
        if (!inserted) return it->second;
      }
      value_.push_back(k.value);
      text_.push_back(kNoIndex);
    } else {
      auto it = texts_.find(Absl(k.text));
      if (it != texts_.end()) return it->second;
      storage_.emplace_back(k.text);
      GrowOrAbandon(texts_, [&] { return texts_.emplace(Absl(storage_.back()), next); });
      value_.push_back(0);
      text_.push_back(static_cast<uint32_t>(storage_.size() - 1));
    }
    added = true;
    owned.push_back(0);
    uuid.emplace_back();
    part.push_back(owner);
    return next;
  }
  // Makes an empty table the members of `ids` in increasing order (entry i its i-th smallest),
  // looked up through `ids` itself. The members are positions, ID - `base` (as `owned_ids`,
  // `owned_uuids`' keys and part_of's argument); `owned_uuids`: the UUIDs of the owned ones, by
  // position. `part(v)`: the partition of a member v that is not owned.
  template <class PartOf>
  void AdoptSorted(RankedBits ids, uint64_t base, const std::vector<uint64_t>& owned_ids,
                   const std::vector<std::pair<uint64_t, VertexId>>& owned_uuids, uint32_t self,
                   PartOf&& part_of) {
    const uint32_t n = ids.size();
    value_.resize(n);
    text_.assign(n, kNoIndex);
    owned.assign(n, 0);
    uuid.resize(n);
    part.resize(n);
    const std::vector<uint64_t>& words = ids.words();
    tbb::parallel_for(size_t{0}, words.size(), [&](size_t w) {
      uint32_t at = ids.Before(w);
      for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1, ++at) {
        const uint64_t v = uint64_t{w} * 64 + static_cast<uint64_t>(std::countr_zero(bits));
        value_[at] = base + v;
        const bool mine = w < owned_ids.size() && ((owned_ids[w] >> (v & 63)) & 1) != 0;
        owned[at] = mine;
        part[at] = mine ? self : part_of(v);
      }
    });
    for (const auto& [v, id] : owned_uuids) uuid[ids.Rank(v)] = id;
    sorted_ = std::move(ids);
    sorted_base_ = base;
  }
  TextKey KeyAt(uint32_t i) const {
    if (text_[i] == kNoIndex) return TextKey{true, value_[i], {}};
    return TextKey{false, 0, storage_[text_[i]]};
  }
  uint32_t size() const { return static_cast<uint32_t>(value_.size()); }
  // The sorted IDs (AdoptSorted), as positions (IDs less the base it was given).
  const RankedBits& sorted() const { return sorted_; }
  RankedBits TakeSorted() { return std::move(sorted_); }

  std::vector<uint8_t> owned;
  std::vector<VertexId> uuid;
  std::vector<uint32_t> part;

 private:
  // The entry of an integer ID among the sorted ones, or kNoIndex.
  uint32_t FindSorted(uint64_t value) const {
    if (value < sorted_base_ || !sorted_.Has(value - sorted_base_)) return kNoIndex;
    return sorted_.Rank(value - sorted_base_);
  }

  // Entries 0..sorted_.size()-1: these integer IDs, less sorted_base_ (AdoptSorted).
  RankedBits sorted_;
  uint64_t sorted_base_ = 0;
  std::vector<uint32_t> direct_;                  // integer ID -> index, for IDs below its size
  absl::flat_hash_map<uint64_t, uint32_t> ints_;  // the other integer IDs
  absl::flat_hash_map<absl::string_view, uint32_t> texts_;
  std::deque<std::string> storage_;  // a deque: the map's keys point into its strings
  std::vector<uint64_t> value_;
  std::vector<uint32_t> text_;
};

// An append-only array in fixed-size blocks: growing it never copies what it holds nor leaves
// more than one block's slack, which a vector's doubling would. The blocks are mapped from the
// kernel, not taken from malloc, so that they never sit between a round's temporaries in the heap
// (which malloc could then not give back) and are returned as soon as they are drained.
template <class T>
class Blocks {
 public:
  static constexpr size_t kBlock = size_t{1} << 18;
  static constexpr size_t kBlockBytes = kBlock * sizeof(T);
  Blocks() = default;
  Blocks(const Blocks&) = delete;
  Blocks& operator=(const Blocks&) = delete;
  Blocks(Blocks&& o) noexcept
      : blocks_(std::move(o.blocks_)), size_(o.size_), next_(o.next_), end_(o.end_) {
    o.blocks_.clear();
    o.size_ = 0;
    o.next_ = o.end_ = nullptr;
  }
  ~Blocks() { Clear(); }

  size_t size() const { return size_; }
  T& operator[](size_t i) { return blocks_[i / kBlock][i % kBlock]; }
  void push_back(T v) {
    if (next_ == end_) Grow();
    *next_++ = v;
    ++size_;
  }
  // For a loop that appends through a cursor of its own (its state then stays in registers):
  // the free room of the last block (of a new block if it is full), then Appended(n) once n
  // elements are written at its start.
  std::span<T> Room() {
    if (next_ == end_) Grow();
    return {next_, end_};
  }
  void Appended(size_t n) {
    next_ += n;
    size_ += n;
  }
  // Calls f(data, n) for each block in order, unmapping each block after it.
  template <class F>
  void Drain(F&& f) {
    for (size_t b = 0; b < blocks_.size(); ++b) {
      f(static_cast<const T*>(blocks_[b]), std::min(kBlock, size_ - b * kBlock));
      ::munmap(blocks_[b], kBlockBytes);
      blocks_[b] = nullptr;
    }
    Clear();
  }
  // Calls f(data, n) for each block in order, which may change its elements.
  template <class F>
  void Update(F&& f) {
    for (size_t b = 0; b < blocks_.size(); ++b) f(blocks_[b], std::min(kBlock, size_ - b * kBlock));
  }
  // Calls f(a, b, n) for each pair of blocks of this and `other` (as many elements), in order.
  template <class F>
  void VisitWith(const Blocks& other, F&& f) const {
    for (size_t b = 0; b < blocks_.size(); ++b) {
      f(static_cast<const T*>(blocks_[b]), static_cast<const T*>(other.blocks_[b]),
        std::min(kBlock, size_ - b * kBlock));
    }
  }
  // Calls f(a, b, n) for each pair of blocks of this and `other` (as many elements), in order,
  // then hands both to give(block, kBlockBytes), which takes them (maps them elsewhere or
  // unmaps them).
  template <class F, class Give>
  void DrainWith(Blocks& other, F&& f, Give&& give) {
    for (size_t b = 0; b < blocks_.size(); ++b) {
      f(static_cast<const T*>(blocks_[b]), static_cast<const T*>(other.blocks_[b]),
        std::min(kBlock, size_ - b * kBlock));
      T* mine = std::exchange(blocks_[b], nullptr);
      T* theirs = std::exchange(other.blocks_[b], nullptr);
      give(static_cast<void*>(mine), kBlockBytes);
      give(static_cast<void*>(theirs), kBlockBytes);
    }
    Clear();
    other.Clear();
  }
  void Clear() {
    for (T* b : blocks_) {
      if (b != nullptr) ::munmap(b, kBlockBytes);
    }
    blocks_.clear();
    size_ = 0;
    next_ = end_ = nullptr;
  }

 private:
  void Grow() {
    // Populated at once: the block is about to be filled, and one call maps its pages for less
    // than a fault per page.
    void* p = ::mmap(nullptr, kBlockBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    blocks_.push_back(static_cast<T*>(p));
    next_ = blocks_.back();
    end_ = next_ + kBlock;
  }

  std::vector<T*> blocks_;
  size_t size_ = 0;
  T* next_ = nullptr;  // where the next element goes in the last block
  T* end_ = nullptr;
};

// Moves the pages of drained blocks into a PartEdges' mapped bytes (PartEdges::Mapped) ahead of
// where its pairs are written next, instead of unmapping them: mremap moves a block's pages with
// no copy, where the pairs' own bytes would fault fresh, zeroed pages in one by one. The pairs
// are written as runs, each in order from its first pair (an oriented part's heads, then its
// reverses): a page is moved only where its run has written nothing yet and wholly inside one
// run, so that the page two runs share and the last one (with the slack) fault in as before.
// What the pages held before is overwritten by the pairs (a moved page is never read before).
class PageMover {
 public:
  // `starts`: each run's first pair, in increasing order; the last run ends at the last pair.
  PageMover(PartEdges& edges, std::initializer_list<size_t> starts)
      : base_(edges.mapped_data()),
        stride_(edges.stride()),
        page_(static_cast<size_t>(::sysconf(_SC_PAGESIZE))) {
    std::vector<size_t> bounds(starts);
    bounds.push_back(edges.size());
    for (size_t r = 0; r + 1 < bounds.size(); ++r) {
      const size_t first = bounds[r] * stride_, last = bounds[r + 1] * stride_;
      runs_.push_back({first, RoundUp(first), last / page_ * page_});
    }
  }
  PageMover(const PageMover&) = delete;
  PageMover& operator=(const PageMover&) = delete;

  // The bytes moved so far.
  uint64_t moved() const { return moved_; }
  // Run r has written its pairs up to (not including) pair `next`.
  void Wrote(size_t r, size_t next) { runs_[r].written = next * stride_; }

  // Takes a mapped block of `bytes` (a multiple of the page size): its pages go to the runs
  // that have the fewest moved ahead of where they write, the rest is unmapped.
  void Give(void* block, size_t bytes) {
    auto* from = static_cast<uint8_t*>(block);
    size_t done = 0;
    while (base_ != nullptr && done < bytes) {
      Run* to = nullptr;
      for (Run& run : runs_) {
        run.next = std::max(run.next, RoundUp(run.written));
        if (run.next < run.end &&
            (to == nullptr || run.next - run.written < to->next - to->written)) {
          to = &run;
        }
      }
      if (to == nullptr) break;
      const size_t n = std::min(bytes - done, to->end - to->next);
      if (moves_ == kMaxMoves || ::mremap(from + done, n, n, MREMAP_MAYMOVE | MREMAP_FIXED,
                                          base_ + to->next) == MAP_FAILED) {
        // The rest of the pages fault in as they would have. (A failed mremap may have unmapped
        // the place already: it is mapped again, so that no pair lands in a hole.)
        if (moves_ != kMaxMoves) {
          ::mmap(base_ + to->next, n, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        }
        base_ = nullptr;
        break;
      }
      ++moves_;
      to->next += n;
      done += n;
      moved_ += n;
    }
    if (done < bytes) ::munmap(from + done, bytes - done);
  }

 private:
  struct Run {
    size_t written;  // bytes from the start: the run's pairs are written up to here
    size_t next;     // where the next moved page goes (page-aligned)
    size_t end;      // the end of the last page wholly inside the run
  };
  size_t RoundUp(size_t at) const { return (at + page_ - 1) / page_ * page_; }

  // Each move leaves a mapping of its own (moved pages do not merge with their neighbours'),
  // so they stop short of the kernel's limit of mappings a process (vm.max_map_count, 65,530 by
  // default): 4 GiB of pairs moved at most.
  static constexpr size_t kMaxMoves = 4096;

  uint8_t* base_;
  size_t stride_;
  size_t page_;
  std::vector<Run> runs_;
  uint64_t moved_ = 0;
  size_t moves_ = 0;
};

// The records one chunk of a round has for one destination, in a buffer grown by doubling from a
// first guess (a sender does not know how many a destination gets without a pass to count them).
class RecordBuffer {
 public:
  void Reserve(size_t bytes) { Grow(bytes); }
  // Room for the next n bytes.
  char* Take(size_t n) {
    if (capacity() - size_ < n) Grow(std::max(2 * capacity(), size_ + n));
    char* at = bytes() + size_;
    size_ += n;
    return at;
  }
  // For a loop that writes records with 8-byte stores, each keeping up to 8 bytes (the next
  // record overwrites the rest): the free bytes after them (at least 8); it says how many it kept
  // with WroteBytes.
  std::span<char> Room() {
    if (capacity() - size_ < sizeof(uint64_t)) Grow(std::max(2 * capacity(), size_ + 8));
    return {bytes() + size_, capacity() - size_};
  }
  void WroteBytes(size_t n) { size_ += n; }
  const char* data() const { return reinterpret_cast<const char*>(data_.get()); }
  size_t size() const { return size_; }

 private:
  char* bytes() { return reinterpret_cast<char*>(data_.get()); }
  size_t capacity() const { return words_ * sizeof(uint64_t); }
  void Grow(size_t bytes) {
    const size_t words = (bytes + 7) / 8;
    auto more = std::make_unique_for_overwrite<uint64_t[]>(words);
    if (size_ != 0) std::memcpy(more.get(), data_.get(), size_);
    data_ = std::move(more);
    words_ = words;
  }

  std::unique_ptr<uint64_t[]> data_;
  size_t words_ = 0;
  size_t size_ = 0;  // bytes
};

// The stored edges a worker received from one sender, in the sender's (input) order.
struct EdgesFrom {
  Blocks<uint32_t> src, dst;
  Blocks<double> weights;
  // What OrientEdges counts, counted as the first `counted` edges came (TakeRawParts,
  // which reads each end's partition in its record): the edges from a vertex the receiver owns,
  // those into one that are not loops, and whether one is a loop at an owned vertex.
  size_t counted = 0, heads = 0, reverses = 0;
  bool owned_loop = false;
};

// ---------------------------------------------------------------------------------------------
// The load.

// A worker's share of one input: the lines starting in its byte range of a file (or of a
// directory's files), or its rows of a table (GraphTextSource).
class ShareText {
 public:
  absl::Status Open(const GraphSource& source, const std::string& path, bool vertices, bool weights,
                    uint32_t rank, uint32_t size, bool directories) {
    if (!source.text) return file_.Open(path, rank, size, directories);
    auto share = source.text->OpenShare(vertices, weights, rank, size);
    if (!share.ok()) return share.status();
    rows_ = *std::move(share);
    return absl::OkStatus();
  }
  absl::Status Adopt(std::unique_ptr<GraphTextShare> rows) {
    rows_ = std::move(rows);
    return absl::OkStatus();
  }
  bool done() const { return rows_ ? rows_->done() : file_.done(); }
  absl::StatusOr<std::string> Next(uint64_t max_bytes) {
    return rows_ ? rows_->Next(max_bytes) : file_.Next(max_bytes);
  }
  // Only a file's share has these.
  bool directory() const { return !rows_ && file_.directory(); }
  std::vector<std::string> paths() const { return file_.paths(); }
  const std::vector<std::pair<uint32_t, uint64_t>>& lines() const { return file_.lines(); }

 private:
  text::ShareReader file_;
  std::unique_ptr<GraphTextShare> rows_;
};

class PartitionLoader {
 public:
  PartitionLoader(const GraphSource& source, WeightUse use, Exchange& exchange, bool in_edges,
                  const PartitionLoadOptions& options)
      : source_(source),
        use_(use),
        exchange_(exchange),
        in_edges_(in_edges),
        options_(options),
        rank_(exchange.rank()),
        size_(exchange.size()),
        from_(exchange.size()) {}

  absl::StatusOr<PartitionInput> Run();

 private:
  bool keep_weights() const { return use_ != WeightUse::kIgnore; }

  // The first step of a round: each worker's batches, each led by a byte saying whether its
  // sender has more rounds (1) and whether it met a bad line (2), which ends the rounds.
  struct RoundStep {
    std::vector<std::string> batches;
    bool more = false;
    bool stop = false;
  };
  absl::StatusOr<RoundStep> FirstStep(std::vector<std::string> out);
  absl::Status LoadVertexFile(const std::string& path);
  absl::Status LoadEdgeFile(const std::string& path, bool graphalytics);
  // After a parse error anywhere: parses the rest of this share alone, for its first error and
  // its line count.
  void FinishShare(ShareText& reader, FileKind kind, uint64_t& lines);
  // Parses a round's text; a table's rows name errors by their fields.
  ParsedFile ParseRound(const std::string& path, std::string text, FileKind kind,
                        bool keep_weights) const;
  // Files the edges of a round's last step under their senders.
  // (Each batch: the records' coding, a kSlimBased batch's base, then the records; the caller
  // frees them after.)
  absl::Status TakeEdges(const std::vector<std::string_view>& batches);
  absl::Status Resolve(bool& weighted);
  // The load's ID base (id_base_), from the first round's batches (each led by its sender's least
  // ID then, or kNoLeast): the senders' least, less some room, or 0 for IDs that begin near 0.
  // Every worker gets the same batches' leads, so every worker chooses the same.
  void ChooseIdBase(const std::vector<std::string>& batches);
  // Whether this worker can go on receiving raw with IDs up to `max_id` (at least id_base_),
  // covering them if so.
  bool RawCovers(uint64_t max_id);
  // Numbers the IDs received raw, in increasing order, as the table's first entries, and the
  // edges received so far with them (at the ranking, when every edge has come, the assembly does:
  // raw_ends_); the load then goes on through the table. `owned_words`, if given: the owned IDs'
  // bitmap.
  // `why`: the stats' record of where (PartitionLoadStats::RawEnd); `min_words`: the bitmaps'
  // least length in 64-bit words.
  absl::Status LeaveRaw(PartitionLoadStats::RawEnd why,
                        std::vector<uint64_t>* owned_words = nullptr, size_t min_words = 0);
  // The received ends, IDs, become their table entries (their ranks in `ids`).
  void RewriteRawEnds(const RankedBits& ids);
  // After Resolve (which gathers each worker's raw state): if every worker is still receiving
  // raw, global indexes from the union of the owned IDs' bitmaps, with no sort (ranked); else
  // each leaves raw and nothing more is done.
  absl::Status RankRaw(bool& ranked);
  absl::Status Rank();
  absl::Status AskRemotes();
  absl::StatusOr<PartitionInput> Assemble(bool weighted);
  // Lays out a symmetric part's received edges as oriented pairs (PartEdges), returning the
  // received blocks, unless it has a self-loop and needs in-edges (false: nothing done); an error
  // (malformed) if the pairs disagree with the counts made as the records came.
  // `ids`: the table's sorted() (the table is gone by then), for ends left raw (raw_ends_).
  absl::StatusOr<bool> OrientEdges(const std::vector<uint32_t>& local_order, uint32_t n,
                                   const RankedBits& ids, PartEdges& edges);
  // OrientEdges for ends read through `ends` (Owned, Local, Entry and Prefetch of an end).
  template <class Ends>
  absl::StatusOr<bool> OrientWith(const Ends& ends, size_t owned, uint32_t n, PartEdges& edges);

  // Hashes the IDs of `dict` that this share has not met; fills part[i] (with kUnlistedBit for an
  // ID its owner does not list) and returns the indexes of the new ones with their UUIDs.
  void MeetIds(const Dictionary& dict, std::vector<uint32_t>& part, std::vector<uint32_t>& fresh,
               std::vector<VertexId>& fresh_uuids);
  // The same for a round of integer IDs that the share's direct table covers, without a
  // dictionary of the round: returns false (having done nothing) if the table cannot cover them;
  // else the IDs this share had not met, in increasing order, with their UUIDs and partitions
  // (which the table then holds). `max_id`: the round's largest ID (MaxIntegerId).
  bool MeetIdsDirect(const ParsedFile& file, uint64_t max_id, std::vector<uint64_t>& fresh,
                     std::vector<uint32_t>& fresh_part, std::vector<VertexId>& fresh_uuids);
  // The common case of a sender's round (records of coding C, kNarrowParts or kSlimParts, of
  // narrow IDs with their partitions, the IDs' partitions in the direct table, no weights): writes
  // one chunk's records to `out`, a fresh buffer per destination, the kSlimParts IDs less
  // `id_base` (kSlimBased; 0 for kSlimParts). False, with `out` emptied, if an ID's entry is not
  // a partition (an unlisted vertex): the general walk then writes the chunk and says why. (Also
  // false, `out` untouched, past kRouteParts workers.)
  template <IdCoding C>
  bool RouteParts(const std::vector<uint32_t>& ids, uint32_t part_shift, uint32_t id_base,
                  bool both_ends, std::vector<RecordBuffer>& out) const;
  // The common case of TakeEdges while raw: n records of coding C (kNarrowParts, 8 bytes, or
  // kSlimParts, 6) of narrow IDs with their partitions, no weights, from one sender (run in
  // parallel per sender). False if a record is malformed.
  // Its ends are kept as positions: what a record spells plus `offset`, modulo 2^32.
  template <IdCoding C>
  bool TakeRawParts(const char* records, size_t n, uint32_t offset, EdgesFrom& to);

  const GraphSource& source_;
  WeightUse use_;
  Exchange& exchange_;
  bool in_edges_;
  PartitionLoadOptions options_;
  uint32_t rank_;
  uint32_t size_;

  bool graphalytics_ = false;
  // The edges are sorted by (source, target, weight) once ranked: a table's rows have no order.
  bool sorted_ = false;
  // A table's vertex share, opened when the load looked for the vertex table.
  std::unique_ptr<GraphTextShare> vertex_share_;
  bool symmetric_ = false;
  std::string vertex_file_, edge_file_;
  // An edge input that is a directory: its files, and the lines of this share in each.
  bool edge_dir_ = false;
  std::vector<std::string> edge_paths_;
  std::vector<std::pair<uint32_t, uint64_t>> edge_share_lines_;
  std::map<std::string, std::string> properties_;

  ShareIds share_ids_{size_};  // after size_
  VertexTable table_;
  std::vector<EdgesFrom> from_;
  // Graphalytics: where each owned vertex was first listed, and any further listings.
  std::vector<std::pair<uint32_t, uint64_t>> listed_at_;
  std::vector<std::tuple<uint32_t, uint32_t, uint64_t>> relisted_;

  Failure failure_;
  bool vertex_stopped_ = false;
  uint64_t vertex_lines_ = 0, edge_lines_ = 0;
  uint64_t first_with_weight_ = 0, first_without_weight_ = 0;  // lines in this share

  uint64_t received_ends_ = 0;  // edge ends received so far (bounds the direct table)
  uint64_t text_read_ = 0;      // bytes of its shares read so far (bounds raw_part_)
  // Receiving raw (docs/design.md §4): while every ID a worker receives is an integer in a range
  // [id_base_, id_base_ + bound), it keeps the received edges' IDs as they come, less id_base_
  // (positions), and a byte per position below the bound, raw_part_ (the ID's partition, or
  // kRawUnknown for one not met), instead of looking each up in the table; the IDs are numbered
  // in increasing order once all have come (LeaveRaw). The owned ones' UUIDs wait in raw_owned_,
  // by position. The base is every worker's (ChooseIdBase), so that their bitmaps of positions
  // merge (RankRaw).
  static constexpr uint8_t kRawUnknown = 0xff;
  // The least bound on positions (RawCovers).
  static constexpr uint64_t kRawBound = uint64_t{1} << 22;
  // TakeRawParts' check of one end of partition `p` (`mine`: p is this worker's): 1 if its
  // entry is p, or unknown for another's end (which it then notes), else 0. Senders in parallel
  // write the same partition for an ID: atomic, not a race.
  static uint32_t TakeRawEnd(uint8_t& entry, uint32_t p, uint32_t mine) {
    std::atomic_ref<uint8_t> slot(entry);
    const uint8_t was = slot.load(std::memory_order_relaxed);
    if (was == kRawUnknown && mine == 0) [[unlikely]] {
      slot.store(static_cast<uint8_t>(p), std::memory_order_relaxed);
      return 1;
    }
    return static_cast<uint32_t>(was == p);
  }
  // Notes in an ID's raw_part_ entry that a record from partition `other` (or this worker's,
  // `self`) names it; false if the entry holds another partition. Only an announcement makes an
  // entry this worker's (an end it owns is announced to it before any record names it): false
  // for an unknown entry that a record names this worker's. Senders in parallel write the same
  // partition for an ID: atomic, not a race.
  static bool NoteRawPartition(uint8_t& entry, uint8_t self, uint32_t other) {
    std::atomic_ref<uint8_t> slot(entry);
    const uint8_t was = slot.load(std::memory_order_relaxed);
    if (was == kRawUnknown) {
      if (other == self) return false;
      slot.store(static_cast<uint8_t>(other), std::memory_order_relaxed);
      return true;
    }
    return was == self || was == other;  // else two partitions for one ID
  }
  bool raw_ = false;
  // Receiving raw keeps IDs less it; a sender's kSlimBased records spell them less it.
  uint64_t id_base_ = 0;
  std::vector<uint8_t> raw_part_;
  // Left raw once every edge had come (LeaveRaw at the ranking): the received ends are still
  // positions, an ID's table entry is its position's rank among the positions met (the table's
  // sorted()), and these are the owned positions. The assembly lays the ends out from the IDs
  // (OrientEdges), or RewriteRawEnds.
  bool raw_ends_ = false;
  RankedBits raw_owned_ids_;
  // Gathered by Resolve: whether every worker still received raw (from one base), and the largest
  // raw_part_.
  bool every_raw_ = false;
  uint64_t raw_limit_ = 0;
  std::vector<std::pair<uint64_t, VertexId>> raw_owned_;
  std::vector<uint32_t> rank_of_;  // per table entry
  std::vector<uint64_t> starts_;
  std::vector<uint64_t> names_ints_;
  std::vector<std::string> names_texts_;
  PartitionLoadStats stats_;
};

absl::StatusOr<PartitionLoader::RoundStep> PartitionLoader::FirstStep(
    std::vector<std::string> out) {
  auto in = exchange_.AllToAll(std::move(out));
  if (!in.ok()) return in.status();
  ++stats_.rounds;
  RoundStep step;
  for (const std::string& batch : *in) {
    if (batch.empty()) return Malformed();
    step.more |= (batch[0] & 1) != 0;
    step.stop |= (batch[0] & 2) != 0;
  }
  step.batches = std::move(*in);
  return step;
}

void PartitionLoader::MeetIds(const Dictionary& dict, std::vector<uint32_t>& part,
                              std::vector<uint32_t>& fresh, std::vector<VertexId>& fresh_uuids) {
  const size_t n = dict.size();
  part.assign(n, 0);
  fresh.clear();
  for (size_t i = 0; i < n; ++i) {
    if (const std::optional<uint32_t> known = share_ids_.Find(dict.KeyAt(i))) {
      part[i] = *known;
    } else {
      fresh.push_back(static_cast<uint32_t>(i));
    }
  }
  // The one SHA-1 of each ID in this share, in parallel.
  auto split = partition::Range::Whole(size_);
  fresh_uuids.assign(fresh.size(), VertexId{});
  tbb::parallel_for(size_t{0}, fresh.size(), [&](size_t j) {
    const TextKey k = dict.KeyAt(fresh[j]);
    fresh_uuids[j] = k.is_int ? VertexIdFromInteger(k.value) : VertexIdFromExternal(k.text);
    part[fresh[j]] = static_cast<uint32_t>(split->PartitionForUnchecked(fresh_uuids[j]));
  });
  for (uint32_t i : fresh) share_ids_.Add(dict.KeyAt(i), part[i]);
}

// The most workers RouteParts serves (more than a direct table's): its cursors sit in a local
// array, not the heap, so that the compiler knows that a record's store through a char pointer
// does not move them.
constexpr uint32_t kRouteParts = 128;

template <IdCoding C>
bool PartitionLoader::RouteParts(const std::vector<uint32_t>& ids, uint32_t part_shift,
                                 uint32_t id_base, bool both_ends,
                                 std::vector<RecordBuffer>& out) const {
  static_assert(C == IdCoding::kNarrowParts || C == IdCoding::kSlimParts);
  constexpr size_t kBytes = C == IdCoding::kSlimParts ? kSlimRecord : sizeof(uint64_t);
  if (size_ > kRouteParts) return false;
  struct Cursor {
    char* next;
    char* end;
    char* begin;
  };
  std::array<Cursor, kRouteParts> cursor;
  for (uint32_t q = 0; q < size_; ++q) {
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
  const uint8_t* table = share_ids_.DirectTable();
  const uint64_t start = share_ids_.DirectStart();
  const uint32_t* id = ids.data();
  const size_t m = ids.size() / 2;
  const uint32_t parts = size_;
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
  for (uint32_t q = 0; q < size_; ++q) {
    out[q].WroteBytes(static_cast<size_t>(cursor[q].next - cursor[q].begin));
  }
  return true;
}

template <IdCoding C>
bool PartitionLoader::TakeRawParts(const char* records, size_t n, uint32_t offset, EdgesFrom& to) {
  static_assert(C == IdCoding::kNarrowParts || C == IdCoding::kSlimParts);
  constexpr bool kSlim = C == IdCoding::kSlimParts;
  constexpr size_t kBytes = kSlim ? kSlimRecord : sizeof(uint64_t);
  constexpr uint32_t kEndBits = kSlim ? kSlimBits : 32;  // an end's ID and partition
  constexpr uint64_t kEndMask = (uint64_t{1} << kEndBits) - 1;
  auto load = [records](size_t i) {
    if constexpr (kSlim) {
      return LoadSlim(records + kBytes * i);
    } else {
      uint64_t record;
      std::memcpy(&record, records + kBytes * i, kBytes);
      return record;
    }
  };
  const uint32_t shift = kEndBits - std::min(PartitionBits(size_), kEndBits);
  const uint32_t mask = static_cast<uint32_t>((uint64_t{1} << shift) - 1);
  const uint32_t self = rank_, parts = size_;
  uint8_t* part = raw_part_.data();
  // The blocks' free room, taken when the first record needs it (none for a silent sender).
  std::span<uint32_t> src, dst;
  size_t room = 0, k = 0;
  size_t heads = 0, reverses = 0;
  uint32_t owned_loop = 0;
  constexpr size_t kAhead = 16;  // records: their bytes arrive while these are taken
  size_t fails = 0;
  for (size_t i = 0; i < n; ++i) {
    if (k == room) {
      to.src.Appended(k);
      to.dst.Appended(k);
      src = to.src.Room();
      dst = to.dst.Room();
      room = std::min(src.size(), dst.size());
      k = 0;
    }
    if (i + kAhead < n) {
      const uint64_t ahead = load(i + kAhead);
      __builtin_prefetch(part + ((static_cast<uint32_t>(ahead) & mask) + offset));
      __builtin_prefetch(part + ((static_cast<uint32_t>(ahead >> kEndBits) & mask) + offset));
    }
    const uint64_t record = load(i);
    const auto a = static_cast<uint32_t>(record & kEndMask);
    const auto b = static_cast<uint32_t>((record >> kEndBits) & kEndMask);
    const uint32_t pa = static_cast<uint32_t>(uint64_t{a} >> shift);
    const uint32_t pb = static_cast<uint32_t>(uint64_t{b} >> shift);
    const uint32_t ends[2] = {(a & mask) + offset, (b & mask) + offset};
    const uint32_t mine_a = pa == self, mine_b = pb == self;
    // At least one end this worker's, both ends' partitions real, and each end's entry agrees:
    // as NoteRawPartition with OtherPartition's rule, and an end owned exactly when announced
    // (its entry this worker's partition, for good), which the edge counts below assume.
    const uint32_t ok = (mine_a | mine_b) & static_cast<uint32_t>(pa < parts) &
                        static_cast<uint32_t>(pb < parts) & TakeRawEnd(part[ends[0]], pa, mine_a) &
                        TakeRawEnd(part[ends[1]], pb, mine_b);
    fails += ok ^ 1;
    src[k] = ends[0];
    dst[k] = ends[1];
    ++k;
    const uint32_t loop = ends[0] == ends[1];
    heads += mine_a;
    reverses += mine_b & (loop ^ 1);
    owned_loop |= mine_a & loop;
  }
  to.src.Appended(k);
  to.dst.Appended(k);
  if (to.counted + n == to.src.size()) {  // every edge before counted too
    to.counted += n;
    to.heads += heads;
    to.reverses += reverses;
    to.owned_loop = to.owned_loop || owned_loop != 0;
  }
  return fails == 0;
}

// The largest ID of a round of integer IDs (0 for none).
uint64_t MaxIntegerId(const ParsedFile& file) {
  uint64_t m = 0;
  for (const ParsedChunk& ch : file.chunks) m = std::max(m, ch.max_id);
  return m;
}

bool PartitionLoader::MeetIdsDirect(const ParsedFile& file, uint64_t max_id,
                                    std::vector<uint64_t>& fresh, std::vector<uint32_t>& fresh_part,
                                    std::vector<VertexId>& fresh_uuids) {
  const size_t chunks = file.chunks.size();
  auto each_id = [&](size_t c, auto&& f) {
    const ParsedChunk& ch = file.chunks[c];
    if (file.mode == IdMode::kNarrow) {
      for (uint32_t v : ch.narrow) f(uint64_t{v});
    } else {
      for (uint64_t v : ch.wide) f(v);
    }
  };
  uint64_t ends = 0;
  for (const ParsedChunk& ch : file.chunks) ends += ch.num_ids(file.mode);
  // The round's smallest ID, a pass over its IDs, wanted only where a table from 0 does not serve.
  auto min_id = [&] {
    std::vector<uint64_t> least(chunks, std::numeric_limits<uint64_t>::max());
    tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
      each_id(c, [&](uint64_t v) { least[c] = std::min(least[c], v); });
    });
    return std::accumulate(least.begin(), least.end(), std::numeric_limits<uint64_t>::max(),
                           [](uint64_t a, uint64_t b) { return std::min(a, b); });
  };
  if (!share_ids_.CoverDirect(max_id, ends, min_id)) return false;
  // Each new ID claimed by one chunk; sorted after, so that the order is the thread count's no
  // more than a dictionary's would be.
  std::vector<std::vector<uint64_t>> claimed(chunks);
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    each_id(c, [&](uint64_t v) {
      if (share_ids_.Claim(v)) claimed[c].push_back(v);
    });
  });
  fresh.clear();
  for (auto& v : claimed) fresh.insert(fresh.end(), v.begin(), v.end());
  claimed = {};
  if (max_id <= std::numeric_limits<uint32_t>::max()) {
    // By a radix sort of the IDs moved to the high words: no comparison.
    std::vector<uint64_t> scratch;
    for (uint64_t& v : fresh) v <<= 32;
    SortByHighWord(fresh, static_cast<uint32_t>(max_id), scratch);
    for (uint64_t& v : fresh) v >>= 32;
  } else {
    tbb::parallel_sort(fresh.begin(), fresh.end());
  }
  // The one SHA-1 of each ID in this share, in parallel.
  auto split = partition::Range::Whole(size_);
  fresh_uuids.assign(fresh.size(), VertexId{});
  fresh_part.assign(fresh.size(), 0);
  tbb::parallel_for(size_t{0}, fresh.size(), [&](size_t j) {
    fresh_uuids[j] = VertexIdFromInteger(fresh[j]);
    fresh_part[j] = static_cast<uint32_t>(split->PartitionForUnchecked(fresh_uuids[j]));
    share_ids_.Place(fresh[j], fresh_part[j]);
  });
  share_ids_.CountPlaced(fresh.size());
  return true;
}

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

uint64_t LinesOf(const ParsedFile& file) {
  uint64_t n = 0;
  for (const auto& c : file.chunks) n += c.lines;
  return n;
}

// The first parse error of a round as a failure of `kind`, its line counted from `lines_before`.
// A failure's text at line `line` of chunk `c`: a table's row is named by its fields there, since
// the line number of a share of rows means nothing to a reader.
std::string AtRow(const ParsedFile& file, size_t c, uint64_t line, std::string text) {
  if (!file.rows) return text;
  return absl::StrCat("row (", file.RowFields(c, line), "): ", text);
}

std::optional<Failure> ParseFailure(const ParsedFile& file, uint32_t kind, uint32_t share,
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

ParsedFile PartitionLoader::ParseRound(const std::string& path, std::string text, FileKind kind,
                                       bool keep_weights) const {
  ParsedFile file = text::ParseTextKeepingErrors(path, std::move(text), kind, keep_weights, true);
  file.rows = source_.text != nullptr;
  return file;
}

void PartitionLoader::FinishShare(ShareText& reader, FileKind kind, uint64_t& lines) {
  const uint32_t parse_kind = kind == FileKind::kVertices ? kVertexParse : kEdgeParse;
  if (failure_.set && failure_.kind <= parse_kind) return;
  // A table's rows have no line numbers for another share's error to count: nothing to read on.
  if (source_.text != nullptr) return;
  while (!reader.done()) {
    auto text = reader.Next(options_.round_bytes);
    if (!text.ok()) return Note(failure_, FromStatus(text.status()));
    ParsedFile file = ParseRound("", std::move(*text), kind, false);
    if (auto f = ParseFailure(file, parse_kind, rank_, lines)) return Note(failure_, *f);
    lines += LinesOf(file);
  }
}

absl::Status PartitionLoader::LoadVertexFile(const std::string& path) {
  ShareText reader;
  const absl::Status opened = vertex_share_
                                  ? reader.Adopt(std::move(vertex_share_))
                                  : reader.Open(source_, path, true, false, rank_, size_, false);
  if (auto st = AgreeOnStatus(exchange_, opened); !st.ok()) return st;
  uint64_t lines = 0;
  while (true) {
    // 1. Parse this round's lines; hash each distinct ID once.
    auto text = reader.Next(options_.round_bytes);
    std::optional<ParsedFile> file;
    if (!text.ok()) {
      Note(failure_, FromStatus(text.status()));
    } else {
      file = ParseRound(path, std::move(*text), FileKind::kVertices, false);
      if (auto f = ParseFailure(*file, kVertexParse, rank_, lines)) Note(failure_, *f);
    }
    const bool stop_here = failure_.set;
    std::vector<std::string> out(size_);
    for (auto& o : out)
      Put(o, uint8_t{static_cast<uint8_t>((reader.done() ? 0 : 1) | (stop_here ? 2 : 0))});
    if (!stop_here) {
      Dictionary dict;
      if (file->integer_mode()) {
        dict.BuildIntegers(file->chunks, file->mode);
      } else {
        dict.BuildText(file->chunks);
      }
      // Every listing travels (a repeat is an error the owner finds), each with its UUID and line.
      std::vector<uint32_t> part, fresh;
      std::vector<VertexId> uuids;
      // Within a round a repeated ID is hashed once; across rounds only a repeat meets it again.
      share_ids_ = ShareIds(size_);
      MeetIds(dict, part, fresh, uuids);
      std::vector<uint32_t> fresh_of(dict.size(), kNoIndex);
      for (uint32_t j = 0; j < fresh.size(); ++j) fresh_of[fresh[j]] = j;
      const IdCoding coding = CodingOf(file->mode);
      for (auto& o : out) Put(o, static_cast<uint8_t>(coding));
      for (size_t c = 0; c < file->chunks.size(); ++c) {
        const ParsedChunk& ch = file->chunks[c];
        const std::vector<uint64_t> rec_lines = RecordLines(*file, c);
        const uint64_t base = lines + file->LineOf(c, 0);
        for (size_t i = 0; i < ch.num_ids(file->mode); ++i) {
          uint32_t d;
          if (file->mode == IdMode::kNarrow) {
            d = dict.Find(uint64_t{ch.narrow[i]});
          } else if (file->mode == IdMode::kWide) {
            d = dict.Find(ch.wide[i]);
          } else {
            d = dict.Find(ch.strs[i]);
          }
          std::string& o = out[part[d]];
          PutKey(o, coding, dict.KeyAt(d));
          Put(o, uuids[fresh_of[d]]);
          Put(o, base + rec_lines[i]);
        }
        stats_.records_parsed += ch.num_ids(file->mode);
      }
      lines += LinesOf(*file);
    }
    file.reset();
    auto in = FirstStep(std::move(out));
    if (!in.ok()) return in.status();
    const bool more = in->more, stop = in->stop;
    if (stop) {
      vertex_stopped_ = true;
      vertex_lines_ = lines;
      FinishShare(reader, FileKind::kVertices, vertex_lines_);
      break;
    }
    for (uint32_t p = 0; p < size_; ++p) {
      ByteReader r(std::string_view(in->batches[p]).substr(1));
      IdCoding coding;
      if (!GetCoding(r, coding)) return Malformed();
      while (!r.empty()) {
        TextKey k;
        VertexId uuid;
        uint64_t line;
        if (!GetKey(r, coding, k) || !r.Get(uuid) || !r.Get(line)) return Malformed();
        bool added;
        const uint32_t v = table_.Intern(k, rank_, added);
        if (added) {
          table_.owned[v] = 1;
          table_.uuid[v] = uuid;
          listed_at_.emplace_back(p, line);
        } else {
          relisted_.emplace_back(v, p, line);
        }
      }
    }
    in->batches.clear();
    if (!more) {
      vertex_lines_ = lines;
      break;
    }
  }
  stats_.lines_parsed += vertex_lines_;
  share_ids_ = ShareIds(size_);
  // A vertex listed more than once: the error is at its second listing in file order.
  if (!relisted_.empty()) {
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
      Note(failure_, std::move(f));
    }
  }
  std::vector<std::pair<uint32_t, uint64_t>>().swap(listed_at_);
  std::vector<std::tuple<uint32_t, uint32_t, uint64_t>>().swap(relisted_);
  return absl::OkStatus();
}

absl::Status PartitionLoader::LoadEdgeFile(const std::string& path, bool graphalytics) {
  ShareText reader;
  if (auto st = AgreeOnStatus(exchange_, reader.Open(source_, path, false, keep_weights(), rank_,
                                                     size_, !graphalytics));
      !st.ok()) {
    return st;
  }
  const bool both_ends = in_edges_ || symmetric_;
  // A table's rows and a listed graph's vertices go through the vertex table from the start.
  raw_ = options_.raw_integer_ids && !graphalytics && !source_.text && size_ < kRawUnknown &&
         table_.size() == 0;
  uint64_t lines = 0;
  bool first_round = true;
  while (true) {
    // 1. Parse; hash the IDs this share has not met; tell their owners (the vertex of an edge
    // list, with its UUID; the question "is it listed?" for a Graphalytics graph).
    auto text = reader.Next(options_.round_bytes);
    std::optional<ParsedFile> file;
    const bool parse_failed_before = failure_.set && failure_.kind <= kEdgeParse;
    if (!text.ok()) {
      Note(failure_, FromStatus(text.status()));
    } else if (!parse_failed_before) {
      text_read_ += text->size();
      file = ParseRound(path, std::move(*text), FileKind::kEdges, keep_weights());
      if (auto f = ParseFailure(*file, kEdgeParse, rank_, lines)) Note(failure_, *f);
    }
    const bool stop_here = failure_.set && failure_.kind <= kEdgeParse;
    std::vector<std::string> out(size_);
    for (auto& o : out) {
      Put(o, uint8_t{static_cast<uint8_t>((reader.done() ? 0 : 1) | (stop_here ? 2 : 0))});
      Put(o, uint64_t{0});  // the announcements' length, set below
      Put(o, kNoLeast);     // the least ID, set below in the first round
    }
    // The partitions of the round's IDs: integer IDs straight from the share's direct table
    // where it covers them, else through a dictionary of the round (part[i] for its i-th ID).
    bool direct = false;
    Dictionary dict;
    std::vector<uint32_t> part;
    // The IDs this share meets for the first time, with their partitions.
    std::vector<TextKey> fresh;
    std::vector<uint32_t> fresh_dict, fresh_part;
    IdCoding coding = IdCoding::kTagged;
    uint64_t max_id = 0;  // of a round of integer IDs
    if (!stop_here) {
      coding = CodingOf(file->mode);
      std::vector<VertexId> uuids;
      std::vector<uint64_t> fresh_ints;
      if (file->integer_mode()) max_id = MaxIntegerId(*file);
      if (file->integer_mode() && MeetIdsDirect(*file, max_id, fresh_ints, fresh_part, uuids)) {
        direct = true;
        ++stats_.direct_rounds;
        if (first_round &&
            std::any_of(file->chunks.begin(), file->chunks.end(),
                        [&](const ParsedChunk& ch) { return ch.num_ids(file->mode) > 0; })) {
          // The direct table's start: at most the round's least ID (0 for IDs near 0, or where
          // a table from 0 covers the round). A round without IDs (a share of comments, or none)
          // says nothing.
          const uint64_t least = share_ids_.DirectStart();
          for (auto& o : out) std::memcpy(o.data() + kLeastAt, &least, sizeof least);
        }
        fresh.reserve(fresh_ints.size());
        for (uint64_t v : fresh_ints) fresh.push_back(TextKey{true, v, {}});
      } else {
        if (file->integer_mode()) {
          dict.BuildIntegers(file->chunks, file->mode);
        } else {
          dict.BuildText(file->chunks);
        }
        MeetIds(dict, part, fresh_dict, uuids);
        for (uint32_t i : fresh_dict) {
          fresh.push_back(dict.KeyAt(i));
          fresh_part.push_back(part[i]);
        }
      }
      for (auto& o : out) Put(o, static_cast<uint8_t>(coding));
      for (uint32_t j = 0; j < fresh.size(); ++j) {
        std::string& o = out[fresh_part[j]];
        PutKey(o, coding, fresh[j]);
        if (!graphalytics) Put(o, uuids[j]);
      }
    }
    // 3. Edges to the owners of their ends, with the partition of the end the receiver does not
    // own, appended to edges_out[owner] (led by the records' coding); weights and bad-weight
    // checks on the way. The round's parsed text goes once they are out.
    auto send_edges = [&](std::vector<std::string>& edges_out) {
      const size_t chunks = file->chunks.size();
      // Per chunk, the first edge naming an unlisted vertex and the first bad weight (kinds that
      // LoadGraph reports in this order, whatever their lines).
      std::vector<std::optional<Failure>> unlisted(chunks), bad_weight(chunks);
      // The partitions of the ends of record i of chunk c (with kUnlistedBit).
      auto partitions = [&](const ParsedChunk& ch, size_t i, size_t m, uint32_t& ps, uint32_t& pd) {
        constexpr size_t kAhead = 16;  // edges: their table entries arrive meanwhile
        if (file->mode == IdMode::kNarrow) {
          const uint32_t* ids = ch.narrow.data();
          if (direct) {
            if (i + kAhead < m) {
              share_ids_.PrefetchDirect(ids[2 * (i + kAhead)]);
              share_ids_.PrefetchDirect(ids[2 * (i + kAhead) + 1]);
            }
            ps = share_ids_.DirectAt(ids[2 * i]);
            pd = share_ids_.DirectAt(ids[2 * i + 1]);
            return;
          }
          if (i + kAhead < m) {
            dict.Prefetch(ids[2 * (i + kAhead)]);
            dict.Prefetch(ids[2 * (i + kAhead) + 1]);
          }
          ps = part[dict.Find(uint64_t{ids[2 * i]})];
          pd = part[dict.Find(uint64_t{ids[2 * i + 1]})];
        } else if (file->mode == IdMode::kWide) {
          if (direct) {
            ps = share_ids_.DirectAt(ch.wide[2 * i]);
            pd = share_ids_.DirectAt(ch.wide[2 * i + 1]);
            return;
          }
          ps = part[dict.Find(ch.wide[2 * i])];
          pd = part[dict.Find(ch.wide[2 * i + 1])];
        } else {
          ps = part[dict.Find(ch.strs[2 * i])];
          pd = part[dict.Find(ch.strs[2 * i + 1])];
        }
      };
      // The key of end `end` of record i of chunk c.
      auto key_of = [&](const ParsedChunk& ch, size_t i, int end) {
        switch (file->mode) {
          case IdMode::kNarrow:
            return TextKey{true, ch.narrow[2 * i + end], {}};
          case IdMode::kWide:
            return TextKey{true, ch.wide[2 * i + end], {}};
          default:
            return TextKey::Of(ch.strs[2 * i + end]);
        }
      };
      // Calls emit(to, other, i, w) for each record i of chunk c, its ends' partitions from
      // ends_of(ch, i, m, ps, pd).
      // The failure of `kind` at record i of chunk c, its text made from the record's fields.
      auto failure_at = [&](uint32_t kind, size_t c, size_t i, auto&& text_of) {
        std::string_view tok[3];
        Failure f;
        f.kind = kind;
        f.share = rank_;
        const uint64_t line = file->RecordLine(c, i, tok);
        f.line = file->LineOf(c, line);
        f.code = static_cast<int32_t>(absl::StatusCode::kInvalidArgument);
        f.text = AtRow(*file, c, line, text_of(tok));
        return f;
      };
      auto walk_with = [&](size_t c, auto&& ends_of, auto&& emit) {
        const ParsedChunk& ch = file->chunks[c];
        const size_t m = ch.num_ids(file->mode) / 2;
        for (size_t i = 0; i < m; ++i) {
          uint32_t ps, pd;
          ends_of(ch, i, m, ps, pd);
          if (((ps | pd) & kUnlistedBit) != 0) {
            if (!unlisted[c]) {
              unlisted[c] = failure_at(kUnlisted, c, i, [&](const std::string_view* tok) {
                return text::UnlistedVertexMessage((ps & kUnlistedBit) ? tok[0] : tok[1],
                                                   vertex_file_);
              });
            }
            continue;
          }
          const double w = keep_weights() ? ch.weights[i] : 0.0;
          if (keep_weights() && (w < 0 || std::isinf(w)) && !bad_weight[c]) {
            bad_weight[c] = failure_at(kBadWeight, c, i, [&](const std::string_view* tok) {
              return text::BadWeightMessage(w, tok[2]);
            });
          }
          emit(ps, pd, i, w);
          if (both_ends && pd != ps) emit(pd, ps, i, w);
        }
      };
      auto walk = [&](size_t c, auto&& emit) { walk_with(c, partitions, emit); };
      // Narrow IDs that leave room for a partition at their top carry their ends' partitions.
      IdCoding edge_coding = coding;
      uint32_t record_base = 0;  // kSlimBased: what its records' IDs are less
      const uint32_t part_bits = PartitionBits(size_);
      if (coding == IdCoding::kNarrow && part_bits < 32 && max_id >> (32 - part_bits) == 0) {
        edge_coding = IdCoding::kNarrowParts;
        // Three bytes an end where they hold the IDs and the partitions (a quarter fewer bytes);
        // for IDs far from 0, less the load's base (a direct round knows its least ID; its
        // table's start may have moved below the base, by as much as the table holds).
        if (part_bits < kSlimBits && max_id >> (kSlimBits - part_bits) == 0) {
          edge_coding = IdCoding::kSlimParts;
        } else if (part_bits < kSlimBits && id_base_ != 0 && direct &&
                   share_ids_.RoundLeast() >= id_base_ &&
                   (max_id - id_base_) >> (kSlimBits - part_bits) == 0) {
          edge_coding = IdCoding::kSlimBased;
          record_base = static_cast<uint32_t>(id_base_);  // (at most max_id, below 2^32)
        }
      }
      if (edge_coding != IdCoding::kTagged) {
        // Fixed-size records, in one pass per chunk: each record's partitions looked up once (at
        // random, in a table larger than L2) and the record written to a buffer per destination,
        // which gets at most one record per edge; then each destination's batch is the chunks'
        // buffers in chunk order.
        const bool slim =
            edge_coding == IdCoding::kSlimParts || edge_coding == IdCoding::kSlimBased;
        const bool parts_in_ids = slim || edge_coding == IdCoding::kNarrowParts;
        const size_t key_bytes = coding == IdCoding::kNarrow ? 4 : 8;
        const size_t record = (slim ? kSlimRecord : 2 * key_bytes + (parts_in_ids ? 0 : 4)) +
                              (keep_weights() ? 8 : 0);
        const uint32_t part_shift = (slim ? kSlimBits : 32) - part_bits;
        std::vector<std::vector<RecordBuffer>> buffers(chunks);
        tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
          const ParsedChunk& ch = file->chunks[c];
          const size_t records = ch.num_ids(file->mode) / 2;
          // A destination's share of an edge's two records, with room to spare; at most one
          // record per edge.
          buffers[c].resize(size_);
          for (RecordBuffer& b : buffers[c]) {
            b.Reserve(std::min(records, 2 * records / size_ + 16) * record);
          }
          if (parts_in_ids && direct && file->mode == IdMode::kNarrow && !keep_weights() &&
              (slim ? RouteParts<IdCoding::kSlimParts>(ch.narrow, part_shift, record_base,
                                                       both_ends, buffers[c])
                    : RouteParts<IdCoding::kNarrowParts>(ch.narrow, part_shift, 0, both_ends,
                                                         buffers[c]))) {
            return;
          }
          uint32_t ends[2] = {0, 0};  // the partitions of the record being written
          auto look_up = [&](const ParsedChunk&, size_t i, size_t m, uint32_t& ps, uint32_t& pd) {
            if (direct && file->mode == IdMode::kNarrow) {  // the common case, inline
              constexpr size_t kAhead = 16;  // edges: their table entries arrive meanwhile
              const uint32_t* ids = ch.narrow.data();
              if (i + kAhead < m) {
                share_ids_.PrefetchDirect(ids[2 * (i + kAhead)]);
                share_ids_.PrefetchDirect(ids[2 * (i + kAhead) + 1]);
              }
              ps = share_ids_.DirectAt(ids[2 * i]);
              pd = share_ids_.DirectAt(ids[2 * i + 1]);
            } else {
              partitions(ch, i, m, ps, pd);
            }
            ends[0] = ps;
            ends[1] = pd;
          };
          walk_with(c, look_up, [&](uint32_t to, uint32_t other, size_t i, double w) {
            char* rec = buffers[c][to].Take(record);
            if (parts_in_ids) {
              const uint32_t s = ch.narrow[2 * i], d = ch.narrow[2 * i + 1];
              const uint64_t ids = slim ? SlimPartsRecord(s - record_base, ends[0], d - record_base,
                                                          ends[1], part_shift)
                                        : NarrowPartsRecord(s, ends[0], d, ends[1], part_shift);
              const size_t bytes = slim ? kSlimRecord : sizeof ids;
              std::memcpy(rec, &ids, bytes);
              if (keep_weights()) std::memcpy(rec + bytes, &w, 8);
              return;
            }
            const uint64_t keys[2] = {key_of(ch, i, 0).value, key_of(ch, i, 1).value};
            for (int k = 0; k < 2; ++k, rec += key_bytes) {
              if (key_bytes == 4) {
                const uint32_t v = static_cast<uint32_t>(keys[k]);
                std::memcpy(rec, &v, 4);
              } else {
                std::memcpy(rec, &keys[k], 8);
              }
            }
            std::memcpy(rec, &other, 4);
            if (keep_weights()) std::memcpy(rec + 4, &w, 8);
          });
        });
        for (uint32_t q = 0; q < size_; ++q) {
          size_t total = 1 + sizeof(uint64_t);
          for (size_t c = 0; c < chunks; ++c) total += buffers[c][q].size();
          edges_out[q].reserve(edges_out[q].size() + total);
          edges_out[q].push_back(static_cast<char>(edge_coding));
          if (edge_coding == IdCoding::kSlimBased) Put(edges_out[q], uint64_t{record_base});
          for (size_t c = 0; c < chunks; ++c) {
            edges_out[q].append(buffers[c][q].data(), buffers[c][q].size());
            buffers[c][q] = RecordBuffer();
          }
        }
      } else {
        std::vector<std::vector<std::string>> pieces(chunks, std::vector<std::string>(size_));
        tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
          const ParsedChunk& ch = file->chunks[c];
          walk(c, [&](uint32_t to, uint32_t other, size_t i, double w) {
            std::string& o = pieces[c][to];
            PutKey(o, coding, key_of(ch, i, 0));
            PutKey(o, coding, key_of(ch, i, 1));
            Put(o, other);
            if (keep_weights()) Put(o, w);
          });
        });
        for (uint32_t q = 0; q < size_; ++q) {
          size_t total = 1;
          for (size_t c = 0; c < chunks; ++c) total += pieces[c][q].size();
          edges_out[q].reserve(edges_out[q].size() + total);
          Put(edges_out[q], static_cast<uint8_t>(coding));
          for (size_t c = 0; c < chunks; ++c) {
            edges_out[q] += pieces[c][q];
            std::string().swap(pieces[c][q]);
          }
        }
      }
      for (size_t c = 0; c < chunks; ++c) {
        for (auto* f : {&unlisted[c], &bad_weight[c]}) {
          if (!*f) continue;
          (*f)->line += lines;
          Note(failure_, std::move(**f));
        }
      }
      // The first weight and the first missing one of the share, for the all-or-none rule.
      for (size_t c = 0; c < chunks; ++c) {
        const ParsedChunk& ch = file->chunks[c];
        if (first_with_weight_ == 0 && ch.first_with_weight != 0) {
          first_with_weight_ = lines + file->LineOf(c, ch.first_with_weight);
        }
        if (first_without_weight_ == 0 && ch.first_without_weight != 0) {
          first_without_weight_ = lines + file->LineOf(c, ch.first_without_weight);
        }
        stats_.records_parsed += ch.num_ids(file->mode) / 2;
      }
      lines += LinesOf(*file);
      file.reset();
    };
    // An edge list's edges ride with the announcements, one step a round; a listed graph's wait
    // for the owners' answers about their vertices. Each batch: the flags, the announcements'
    // length, the announcements, then any edges.
    for (std::string& o : out) {
      const uint64_t announced = o.size() - kRoundLead;
      std::memcpy(o.data() + 1, &announced, sizeof announced);
    }
    if (!graphalytics && !stop_here) send_edges(out);
    auto in = FirstStep(std::move(out));
    if (!in.ok()) return in.status();
    const bool more = in->more, stop = in->stop;
    for (const std::string& batch : in->batches) {
      if (batch.size() < kRoundLead) return Malformed();
    }
    if (first_round) ChooseIdBase(in->batches);
    first_round = false;
    if (stop) {
      if (file && !stop_here) lines += LinesOf(*file);
      file.reset();
      edge_lines_ = lines;
      FinishShare(reader, FileKind::kEdges, edge_lines_);
      break;
    }
    // 2. Owners take the vertices, or answer whether they list them.
    std::vector<std::string> answers(size_);
    std::vector<std::string_view> edges_in(size_);
    for (uint32_t p = 0; p < size_; ++p) {
      const std::string_view batch = in->batches[p];
      uint64_t announced;
      std::memcpy(&announced, batch.data() + 1, sizeof announced);
      if (announced > batch.size() - kRoundLead) return Malformed();
      ByteReader r(batch.substr(kRoundLead, announced));
      edges_in[p] = batch.substr(kRoundLead + announced);
      IdCoding c;
      if (!GetCoding(r, c)) return Malformed();
      while (!r.empty()) {
        TextKey k;
        if (!GetKey(r, c, k)) return Malformed();
        if (graphalytics) {
          const uint32_t v = table_.Find(k);
          Put(answers[p], uint8_t{v != kNoIndex && table_.owned[v]});
          continue;
        }
        VertexId uuid;
        if (!r.Get(uuid)) return Malformed();
        if (raw_ && !(k.is_int && k.value >= id_base_ && RawCovers(k.value))) {
          if (auto st = LeaveRaw(PartitionLoadStats::RawEnd::kAnnouncement); !st.ok()) return st;
        }
        if (raw_) {
          uint8_t& at = raw_part_[k.value - id_base_];
          // Shares each announce the IDs they meet: the first one counts. An ID a record has
          // named as another partition's is malformed (two partitions for one ID).
          if (at != rank_) {
            if (at != kRawUnknown) return Malformed();
            at = static_cast<uint8_t>(rank_);
            raw_owned_.emplace_back(k.value - id_base_, uuid);
          }
          continue;
        }
        bool added;
        const uint32_t v = table_.Intern(k, rank_, added);
        if (added) table_.uuid[v] = uuid;
        table_.owned[v] = 1;
      }
    }
    if (graphalytics) {
      in->batches.clear();
      auto replies = exchange_.AllToAll(std::move(answers));
      if (!replies.ok()) return replies.status();
      std::vector<size_t> next(size_, 0);
      for (uint32_t j = 0; j < fresh.size(); ++j) {
        const std::string& reply = (*replies)[fresh_part[j]];
        size_t& at = next[fresh_part[j]];
        if (at >= reply.size()) return Malformed();
        if (reply[at++] == 0) {
          if (!direct) part[fresh_dict[j]] |= kUnlistedBit;
          share_ids_.MarkUnlisted(fresh[j]);
        }
      }
    }

    if (graphalytics) {
      std::vector<std::string> edges_out(size_);
      send_edges(edges_out);
      auto sent = exchange_.AllToAll(std::move(edges_out));
      if (!sent.ok()) return sent.status();
      edges_in.assign(sent->begin(), sent->end());
      if (auto st = TakeEdges(edges_in); !st.ok()) return st;
    } else if (auto st = TakeEdges(edges_in); !st.ok()) {
      return st;
    }
    in->batches.clear();
    if (!more) {
      edge_lines_ = lines;
      break;
    }
  }
  stats_.lines_parsed += edge_lines_;
  edge_dir_ = reader.directory();
  if (edge_dir_) {
    edge_paths_ = reader.paths();
    edge_share_lines_ = reader.lines();
  }
  share_ids_ = ShareIds(size_);
  return absl::OkStatus();
}

absl::Status PartitionLoader::TakeEdges(const std::vector<std::string_view>& batches) {
  // Integer IDs (the common case) are looked up through a dictionary of the round's distinct IDs,
  // as LoadGraph's are: a hash lookup per distinct ID instead of two per edge.
  std::vector<IdCoding> coding(size_, IdCoding::kNarrow);
  // A batch's records follow its coding (`head` bytes with a kSlimBased batch's base), and their
  // IDs are what they spell plus `base_of` (a kSlimBased batch's base, else 0): a kSlimBased
  // batch is read as kSlimParts from there.
  std::vector<size_t> head(size_, 1);
  std::vector<uint64_t> base_of(size_, 0);
  for (uint32_t p = 0; p < size_; ++p) {
    ByteReader r(batches[p]);
    if (!GetCoding(r, coding[p])) return Malformed();
    if (coding[p] == IdCoding::kSlimBased) {
      // (Narrow IDs: the base and any 24 bits stay below 2^32.)
      if (!r.Get(base_of[p]) || base_of[p] > (uint64_t{1} << 32) - (uint64_t{1} << kSlimBits)) {
        return Malformed();
      }
      coding[p] = IdCoding::kSlimParts;
      head[p] = 1 + sizeof(uint64_t);
    }
  }
  // kNarrowParts and kSlimParts: a record's IDs carry their partitions in their top bits.
  const uint32_t part_shift = 32 - PartitionBits(size_);
  const uint64_t id_mask = (uint64_t{1} << part_shift) - 1;
  // (No kSlimParts batch is valid past 2^23 workers: a partition alone would fill its 24 bits.)
  const uint32_t slim_shift = kSlimBits - std::min(PartitionBits(size_), kSlimBits);
  const uint64_t slim_mask = (uint64_t{1} << slim_shift) - 1;
  auto narrow = [](IdCoding c) { return c == IdCoding::kNarrow || c == IdCoding::kNarrowParts; };
  auto with_parts = [](IdCoding c) {
    return c == IdCoding::kNarrowParts || c == IdCoding::kSlimParts;
  };
  // A record's bytes before its weight, and with it.
  auto ids_bytes = [&](IdCoding c) {
    if (c == IdCoding::kSlimParts) return kSlimRecord;
    return 2 * (narrow(c) ? size_t{4} : size_t{8}) + (c == IdCoding::kNarrowParts ? 0 : 4);
  };
  auto record_bytes = [&](IdCoding c) { return ids_bytes(c) + (keep_weights() ? 8 : 0); };
  // An end's 24 bits of a kSlimParts record.
  auto slim_end = [](const char* rec, int end) {
    return (LoadSlim(rec) >> (kSlimBits * end)) & ((uint64_t{1} << kSlimBits) - 1);
  };
  auto key_at = [&](IdCoding c, const char* rec, int end) {
    if (c == IdCoding::kSlimParts) return slim_end(rec, end) & slim_mask;
    if (narrow(c)) {
      uint32_t v;
      std::memcpy(&v, rec + 4 * end, 4);
      return c == IdCoding::kNarrowParts ? v & id_mask : uint64_t{v};
    }
    uint64_t v;
    std::memcpy(&v, rec + 8 * end, 8);
    return v;
  };
  // The partition of the end of a record that the receiver does not own (its own if it owns
  // both).
  auto other_of = [&](IdCoding c, const char* rec) {
    if (c == IdCoding::kSlimParts) {
      return OtherPartition(static_cast<uint32_t>(slim_end(rec, 0) >> slim_shift),
                            static_cast<uint32_t>(slim_end(rec, 1) >> slim_shift), rank_, size_);
    }
    if (c != IdCoding::kNarrowParts) {
      uint32_t other;
      std::memcpy(&other, rec + 2 * (narrow(c) ? 4 : 8), 4);
      return other;
    }
    uint32_t ids[2];
    std::memcpy(ids, rec, 8);
    return OtherPartition(static_cast<uint32_t>(uint64_t{ids[0]} >> part_shift),
                          static_cast<uint32_t>(uint64_t{ids[1]} >> part_shift), rank_, size_);
  };
  const bool text =
      std::any_of(coding.begin(), coding.end(), [](IdCoding c) { return c == IdCoding::kTagged; });
  if (text && raw_) {
    if (auto st = LeaveRaw(PartitionLoadStats::RawEnd::kRecord); !st.ok()) return st;
  }
  if (text) {
    for (uint32_t p = 0; p < size_; ++p) {
      ByteReader r(batches[p].substr(head[p]));
      EdgesFrom& to = from_[p];
      while (!r.empty()) {
        TextKey ks, kd;
        uint32_t other;
        double w = 0;
        if (with_parts(coding[p])) {
          std::string_view rec;
          if (!r.GetBytes(ids_bytes(coding[p]), rec)) return Malformed();
          ++stats_.records_with_partitions;
          if (coding[p] == IdCoding::kSlimParts) ++stats_.slim_records;
          if (base_of[p] != 0) ++stats_.based_records;
          ks = TextKey{true, key_at(coding[p], rec.data(), 0) + base_of[p], {}};
          kd = TextKey{true, key_at(coding[p], rec.data(), 1) + base_of[p], {}};
          other = other_of(coding[p], rec.data());
        } else if (!GetKey(r, coding[p], ks) || !GetKey(r, coding[p], kd) || !r.Get(other)) {
          return Malformed();
        }
        if ((keep_weights() && !r.Get(w)) || other >= size_) return Malformed();
        bool added;
        to.src.push_back(table_.Intern(ks, other, added));
        to.dst.push_back(table_.Intern(kd, other, added));
        if (keep_weights()) to.weights.push_back(w);
      }
    }
    return absl::OkStatus();
  }
  // Fixed-size records of integer IDs. Each end is looked up in the vertex table (directly, where
  // its direct part covers the ID), in parallel per sender; the ends the table does not know yet
  // (remote ends met for the first time) are then added in sender and record order, so the table
  // does not depend on the thread count.
  // Calls f with sender p's coding as a constant, so that each loop over its records is compiled
  // for that coding.
  auto with_coding = [&](uint32_t p, auto&& f) {
    switch (coding[p]) {
      case IdCoding::kNarrow:
        return f(std::integral_constant<IdCoding, IdCoding::kNarrow>{});
      case IdCoding::kWide:
        return f(std::integral_constant<IdCoding, IdCoding::kWide>{});
      case IdCoding::kNarrowParts:
        return f(std::integral_constant<IdCoding, IdCoding::kNarrowParts>{});
      case IdCoding::kSlimParts:
        return f(std::integral_constant<IdCoding, IdCoding::kSlimParts>{});
      case IdCoding::kSlimBased:  // (read as kSlimParts, above)
      case IdCoding::kTagged:
        break;
    }
  };
  std::vector<size_t> records(size_);
  for (uint32_t p = 0; p < size_; ++p) {
    const size_t record = record_bytes(coding[p]);
    if ((batches[p].size() - head[p]) % record != 0) return Malformed();
    records[p] = (batches[p].size() - head[p]) / record;
    received_ends_ += 2 * records[p];
    if (with_parts(coding[p])) stats_.records_with_partitions += records[p];
    if (coding[p] == IdCoding::kSlimParts) stats_.slim_records += records[p];
    if (base_of[p] != 0) stats_.based_records += records[p];
  }
  // The direct table covers the IDs up to the largest received so far while it stays within 4
  // bytes per end received (the edge arrays take 4 per end): a dense-ID graph is never hashed
  // here, a sparse-ID one falls back to the hash map.
  // (And, from a base, the least, which receiving raw keeps at or above it.)
  std::vector<uint64_t> max_of(size_, 0), min_of(size_, kNoLeast);
  auto extremes = [&](auto with_least) {
    tbb::parallel_for(uint32_t{0}, size_, [&](uint32_t p) {
      with_coding(p, [&](auto c) {
        const char* rec = batches[p].data() + head[p];
        const size_t bytes = record_bytes(c);
        uint64_t m = 0, least = kNoLeast;
        for (size_t i = 0; i < records[p]; ++i, rec += bytes) {
          const uint64_t a = key_at(c, rec, 0) + base_of[p], b = key_at(c, rec, 1) + base_of[p];
          m = std::max({m, a, b});
          if constexpr (decltype(with_least)::value) least = std::min({least, a, b});
        }
        max_of[p] = m;
        min_of[p] = least;  // (not wanted: no ID is below a base of 0, or no base is asked)
      });
    });
  };
  if (raw_ && id_base_ != 0) {
    extremes(std::true_type{});
  } else {
    extremes(std::false_type{});
  }
  const uint64_t max_id = *std::max_element(max_of.begin(), max_of.end());
  const uint64_t min_id = *std::min_element(min_of.begin(), min_of.end());
  // (Without records, nothing to check: max_id and min_id are no IDs.)
  const bool any = std::any_of(records.begin(), records.end(), [](size_t n) { return n > 0; });
  if (raw_ && any && (min_id < id_base_ || !RawCovers(max_id))) {
    if (auto st = LeaveRaw(PartitionLoadStats::RawEnd::kRecord); !st.ok()) return st;
  }
  std::atomic<bool> malformed{false};
  if (raw_) {
    // The IDs as they come, and each end's partition unless it is this worker's: one byte read
    // (and at most one written) per end, in a table a byte per ID, where the table's lookups read
    // four and added the ends met for the first time one by one.
    tbb::parallel_for(uint32_t{0}, size_, [&](uint32_t p) {
      if (with_parts(coding[p]) && !keep_weights()) {
        const char* rec = batches[p].data() + head[p];
        // Positions are IDs less the base, which no ID here is below (above), each below 2^32:
        // what a record spells plus this, modulo 2^32.
        const auto offset = static_cast<uint32_t>(base_of[p] - id_base_);
        const bool ok =
            coding[p] == IdCoding::kSlimParts
                ? TakeRawParts<IdCoding::kSlimParts>(rec, records[p], offset, from_[p])
                : TakeRawParts<IdCoding::kNarrowParts>(rec, records[p], offset, from_[p]);
        if (!ok) malformed = true;
        return;
      }
      with_coding(p, [&](auto c) {
        const char* rec = batches[p].data() + head[p];
        const size_t bytes = record_bytes(c);
        const size_t weight_at = bytes - 8;
        const size_t n = records[p];
        EdgesFrom& to = from_[p];
        uint8_t* part = raw_part_.data();
        const auto self = static_cast<uint8_t>(rank_);
        const uint64_t spelt = base_of[p], base = id_base_;
        constexpr size_t kAhead = 16;  // records: their bytes arrive while these are taken
        for (size_t i = 0; i < n; ++i, rec += bytes) {
          if (i + kAhead < n) {
            __builtin_prefetch(part + (key_at(c, rec + kAhead * bytes, 0) + spelt - base));
            __builtin_prefetch(part + (key_at(c, rec + kAhead * bytes, 1) + spelt - base));
          }
          const uint32_t other = other_of(c, rec);
          if (other >= size_) {
            malformed = true;
            return;
          }
          // Positions: IDs less the base.
          const uint64_t ends[2] = {key_at(c, rec, 0) + spelt - base,
                                    key_at(c, rec, 1) + spelt - base};
          for (const uint64_t v : ends) {
            if (!NoteRawPartition(part[v], self, other)) malformed = true;
          }
          to.src.push_back(static_cast<uint32_t>(ends[0]));
          to.dst.push_back(static_cast<uint32_t>(ends[1]));
          if (keep_weights()) {
            double w;
            std::memcpy(&w, rec + weight_at, 8);
            to.weights.push_back(w);
          }
        }
      });
    });
    if (malformed) return Malformed();
    return absl::OkStatus();
  }
  if (max_id < std::max<uint64_t>(uint64_t{1} << 20, received_ends_)) {
    table_.CoverIntegersBelow(max_id + 1);
  }
  struct Miss {
    size_t at;  // the edge's place among the sender's
    uint64_t key;
    uint32_t owner;
    bool dst;
  };
  std::vector<std::vector<Miss>> misses(size_);
  tbb::parallel_for(uint32_t{0}, size_, [&](uint32_t p) {
    with_coding(p, [&](auto c) {
      const char* rec = batches[p].data() + head[p];
      const size_t bytes = record_bytes(c);
      const size_t weight_at = bytes - 8;
      const size_t n = records[p];
      EdgesFrom& to = from_[p];
      const uint64_t spelt = base_of[p];
      constexpr size_t kAhead = 16;  // records: the table's lines arrive while these are taken
      for (size_t i = 0; i < n; ++i, rec += bytes) {
        if (i + kAhead < n) {
          table_.PrefetchInt(key_at(c, rec + kAhead * bytes, 0) + spelt);
          table_.PrefetchInt(key_at(c, rec + kAhead * bytes, 1) + spelt);
        }
        const uint32_t other = other_of(c, rec);
        if (other >= size_) {
          malformed = true;
          return;
        }
        const size_t at = to.src.size();
        for (int end = 0; end < 2; ++end) {
          const uint64_t key = key_at(c, rec, end) + spelt;
          const uint32_t v = table_.FindInt(key);
          if (v == kNoIndex) misses[p].push_back({at, key, other, end == 1});
          (end == 0 ? to.src : to.dst).push_back(v);
        }
        if (keep_weights()) {
          double w;
          std::memcpy(&w, rec + weight_at, 8);
          to.weights.push_back(w);
        }
      }
    });
  });
  if (malformed) return Malformed();
  for (uint32_t p = 0; p < size_; ++p) {
    for (const Miss& m : misses[p]) {
      bool added;
      const uint32_t v = table_.Intern(TextKey{true, m.key, {}}, m.owner, added);
      (m.dst ? from_[p].dst : from_[p].src)[m.at] = v;
    }
  }
  return absl::OkStatus();
}

absl::Status PartitionLoader::Resolve(bool& weighted) {
  std::string mine;
  Put(mine, vertex_lines_);
  Put(mine, edge_lines_);
  Put(mine, first_with_weight_);
  Put(mine, first_without_weight_);
  failure_.Encode(mine);
  Put(mine, static_cast<uint32_t>(edge_share_lines_.size()));
  for (const auto& [file, lines] : edge_share_lines_) {
    Put(mine, file);
    Put(mine, lines);
  }
  // Whether this worker still receives raw, from which base, and how far its byte table reaches
  // (RankRaw).
  Put(mine, uint8_t{raw_});
  Put(mine, id_base_);
  Put(mine, uint64_t{raw_part_.size()});
  auto all = AllGather(exchange_, mine);
  if (!all.ok()) return all.status();
  std::vector<uint64_t> vbase(size_ + 1, 0), ebase(size_ + 1, 0);
  // A directory's edge files: each share's lines per file.
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> share_lines(size_);
  Failure best, with, without;
  every_raw_ = true;
  raw_limit_ = 0;
  for (uint32_t p = 0; p < size_; ++p) {
    ByteReader r((*all)[p]);
    uint64_t vl, el, fw, fwo;
    Failure f;
    uint32_t pieces;
    if (!r.Get(vl) || !r.Get(el) || !r.Get(fw) || !r.Get(fwo) || !f.Decode(r) || !r.Get(pieces)) {
      return Malformed();
    }
    for (uint32_t i = 0; i < pieces; ++i) {
      std::pair<uint32_t, uint64_t> piece;
      if (!r.Get(piece.first) || !r.Get(piece.second) || piece.first >= edge_paths_.size()) {
        return Malformed();
      }
      share_lines[p].push_back(piece);
    }
    uint8_t raw;
    uint64_t raw_base, raw_limit;
    if (!r.Get(raw) || !r.Get(raw_base) || !r.Get(raw_limit) || !r.empty() ||
        raw_limit > kNoIndex) {
      return Malformed();
    }
    // (Every worker chose the same base from the same batches; the bitmaps merge only so.)
    every_raw_ = every_raw_ && raw != 0 && raw_base == id_base_;
    raw_limit_ = std::max(raw_limit_, raw_limit);
    vbase[p + 1] = vbase[p] + vl;
    ebase[p + 1] = ebase[p] + el;
    if (f.set) Note(best, f);
    if (fw != 0 && !with.set) {
      with.set = true;
      with.share = p;
      with.line = fw;
    }
    if (fwo != 0 && !without.set) {
      without.set = true;
      without.share = p;
      without.line = fwo;
    }
  }
  weighted = keep_weights() && with.set;
  if (weighted && without.set) {
    Failure f;
    f.kind = kMissingWeight;
    f.share = without.share;
    f.line = without.line;
    f.aux_share = with.share;
    f.aux_line = with.line;
    f.code = static_cast<int32_t>(absl::StatusCode::kInvalidArgument);
    Note(best, std::move(f));
  }
  if (!best.set) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(best.code);
  if (best.kind == kIo || best.kind == kInternal) return absl::Status(code, best.text);
  const bool in_vertices = best.kind == kVertexParse || best.kind == kListedTwice;
  // Line `line` of share `share` as a file and a line in it: the whole file's line, or for a
  // directory, the file of the share's lines it falls in and its line counted over every share.
  const auto locate = [&](uint32_t share, uint64_t line) -> std::pair<std::string, uint64_t> {
    if (in_vertices) return {vertex_file_, vbase[share] + line};
    if (!edge_dir_ || share_lines[share].empty()) return {edge_file_, ebase[share] + line};
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
    return {edge_paths_[file], before + in_share};
  };
  if (source_.text) {
    // A table's rows: the failure names the row by its fields already (AtRow).
    const std::string name = in_vertices ? source_.text->VerticesName() : source_.text->EdgesName();
    const std::string message = best.kind == kListedTwice
                                    ? absl::StrCat("vertex ", best.text, " is listed twice")
                                    : best.text;
    return absl::Status(code, absl::StrCat(name, ", ", message));
  }
  const auto [file, line] = locate(best.share, best.line);
  const auto [aux_file, aux] = locate(best.aux_share, best.aux_line);
  std::string message = best.kind == kListedTwice ? text::ListedTwiceMessage(best.text, aux)
                        : best.kind == kMissingWeight
                            ? text::MissingWeightMessage(file, aux_file, aux)
                            : best.text;
  return absl::Status(code, absl::StrCat(file, ":", line, ": ", message));
}

bool KeyLess(const TextKey& a, const TextKey& b) { return a < b; }

void PartitionLoader::ChooseIdBase(const std::vector<std::string>& batches) {
  uint64_t least = kNoLeast;
  for (const std::string& batch : batches) {
    uint64_t l;
    std::memcpy(&l, batch.data() + kLeastAt, sizeof l);
    least = std::min(least, l);
  }
  // IDs that begin within receiving raw's least bound keep positions equal to IDs. Else some room
  // below the least (a later round's IDs may begin a little lower), the base a whole word of the
  // bitmaps.
  constexpr uint64_t kRoom = uint64_t{1} << 16;
  id_base_ = least == kNoLeast || least < kRawBound ? 0 : (least - kRoom) & ~uint64_t{63};
  stats_.id_base = id_base_;
}

bool PartitionLoader::RawCovers(uint64_t max_id) {
  const uint64_t at = max_id - id_base_;
  if (at < raw_part_.size()) return true;
  // A byte per position below the largest, bounded by what this worker has read and received:
  // a sparse ID space goes through the table instead.
  const uint64_t bound = std::max<uint64_t>(kRawBound, text_read_ + received_ends_);
  if (at >= bound || at >= kNoIndex) return false;
  raw_part_.resize(at + 1, kRawUnknown);
  return true;
}

absl::Status PartitionLoader::LeaveRaw(PartitionLoadStats::RawEnd why,
                                       std::vector<uint64_t>* owned_words, size_t min_words) {
  if (!raw_) return absl::OkStatus();
  raw_ = false;
  stats_.raw_end = why;
  const size_t words = std::max((raw_part_.size() + 63) / 64, min_words);
  std::vector<uint64_t> known(words), owned(words);
  const auto self = static_cast<uint8_t>(rank_);
  tbb::parallel_for(size_t{0}, words, [&](size_t w) {
    uint64_t k = 0, o = 0;
    const size_t end = std::min(raw_part_.size(), (w + 1) * 64);
    for (size_t v = w * 64; v < end; ++v) {  // (none past raw_part_: padding)
      k |= uint64_t{raw_part_[v] != kRawUnknown} << (v & 63);
      o |= uint64_t{raw_part_[v] == self} << (v & 63);
    }
    known[w] = k;
    owned[w] = o;
  });
  // Every owned ID came with its UUID, once: an ID that a record alone calls this worker's is
  // malformed.
  uint64_t owned_ids = 0;
  for (uint64_t w : owned) owned_ids += Popcount(w);
  if (owned_ids != raw_owned_.size()) return Malformed();
  table_.AdoptSorted(RankedBits(std::move(known)), id_base_, owned, raw_owned_, rank_,
                     [&](uint64_t v) -> uint32_t { return raw_part_[v]; });
  raw_owned_ = {};
  raw_part_ = {};
  if (why == PartitionLoadStats::RawEnd::kRanking || why == PartitionLoadStats::RawEnd::kBitmaps) {
    // Every edge has come: the ends stay IDs until the assembly, which lays them out once.
    raw_ends_ = true;
    raw_owned_ids_ = owned_words != nullptr ? RankedBits(owned) : RankedBits(std::move(owned));
  } else {
    RewriteRawEnds(table_.sorted());
  }
  if (owned_words != nullptr) *owned_words = std::move(owned);
  return absl::OkStatus();
}

void PartitionLoader::RewriteRawEnds(const RankedBits& ids) {
  for (EdgesFrom& e : from_) {
    for (Blocks<uint32_t>* ends : {&e.src, &e.dst}) {
      ends->Update([&](uint32_t* v, size_t n) {
        tbb::parallel_for(size_t{0}, n, [&](size_t i) { v[i] = ids.Rank(v[i]); });
      });
    }
  }
  raw_ends_ = false;
  raw_owned_ids_ = RankedBits();
}

absl::Status PartitionLoader::RankRaw(bool& ranked) {
  ranked = false;
  // Every worker's state, gathered by Resolve.
  if (!every_raw_) return LeaveRaw(PartitionLoadStats::RawEnd::kRanking);
  const uint64_t limit = raw_limit_;
  // Every worker's owned IDs (their positions from the one base) as bitmaps of the same length,
  // covering the largest anyone met. The union of the bitmaps is the set of all vertices, and a
  // vertex's global index is the number of members below its position (integers rank
  // numerically). Worker q merges words [seg(q),
  // seg(q + 1)) of everyone's bitmap (each vertex is owned once), then all gather the pieces.
  const size_t words = (limit + 63) / 64;
  std::vector<uint64_t> owned;
  if (auto st = LeaveRaw(PartitionLoadStats::RawEnd::kBitmaps, &owned, words); !st.ok()) return st;
  auto seg = [&](uint32_t q) { return static_cast<size_t>(uint64_t{q} * words / size_); };
  std::vector<std::string> out(size_);
  for (uint32_t q = 0; q < size_; ++q) {
    out[q].assign(reinterpret_cast<const char*>(owned.data() + seg(q)),
                  (seg(q + 1) - seg(q)) * sizeof(uint64_t));
  }
  owned = {};
  auto in = exchange_.AllToAll(std::move(out));
  if (!in.ok()) return in.status();
  std::vector<uint64_t> merged(seg(rank_ + 1) - seg(rank_), 0);
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
  auto gathered = AllGather(exchange_, std::string(reinterpret_cast<const char*>(merged.data()),
                                                   merged.size() * sizeof(uint64_t)));
  if (!gathered.ok()) return gathered.status();
  merged = {};
  std::vector<uint64_t> union_words(words);
  for (uint32_t q = 0; q < size_; ++q) {
    const std::string& piece = (*gathered)[q];
    if (piece.size() != (seg(q + 1) - seg(q)) * sizeof(uint64_t)) return Malformed();
    if (!piece.empty()) std::memcpy(union_words.data() + seg(q), piece.data(), piece.size());
  }
  gathered->clear();
  // No ID at or past the largest anyone met (which also keeps the counts below 2^32).
  if (limit % 64 != 0 && (union_words.back() >> (limit % 64)) != 0) return Malformed();
  const RankedBits every_id(std::move(union_words));
  if (every_id.size() >= kNoIndex) return absl::OutOfRangeError("more than 2^32-1 vertices");
  // Each worker keeps the names of an equal share of the ranks (RankNames), found in the union.
  const uint64_t total = every_id.size();
  starts_.assign(size_ + 1, 0);
  for (uint32_t q = 0; q <= size_; ++q) starts_[q] = total * q / size_;
  for (uint64_t g = starts_[rank_]; g < starts_[rank_ + 1];) {
    size_t w = every_id.WordOfRank(g);
    uint64_t bits = every_id.Bits(w);
    for (uint64_t skip = g - every_id.Before(w); skip > 0; --skip) bits &= bits - 1;
    for (; bits != 0 && g < starts_[rank_ + 1]; bits &= bits - 1, ++g) {
      names_ints_.push_back(id_base_ + uint64_t{w} * 64 +
                            static_cast<uint64_t>(std::countr_zero(bits)));
    }
  }
  // The owned vertices' global indexes (each in the union, unless a peer merged it away); the
  // owners tell the remote ones' (AskRemotes).
  rank_of_.assign(table_.size(), kNoIndex);
  std::atomic<bool> missing{false};
  tbb::parallel_for(uint32_t{0}, table_.size(), [&](uint32_t v) {
    if (!table_.owned[v]) return;
    const uint64_t at = table_.KeyAt(v).value - id_base_;  // (the table's IDs, all at or past it)
    if (!every_id.Has(at)) {
      missing = true;
      return;
    }
    rank_of_[v] = every_id.Rank(at);
  });
  if (missing) return Malformed();
  ranked = true;
  return absl::OkStatus();
}

absl::Status PartitionLoader::Rank() {
  // This worker's vertices in ID order.
  std::vector<uint32_t> own;
  for (uint32_t v = 0; v < table_.size(); ++v) {
    if (table_.owned[v]) own.push_back(v);
  }
  tbb::parallel_sort(own.begin(), own.end(), [&](uint32_t a, uint32_t b) {
    return KeyLess(table_.KeyAt(a), table_.KeyAt(b));
  });
  // Samples, evenly spaced; the same splitters everywhere.
  const size_t samples = std::min<size_t>(own.size(), 64);
  std::string mine;
  for (size_t j = 0; j < samples; ++j) {
    PutKey(mine, IdCoding::kTagged, table_.KeyAt(own[j * own.size() / samples]));
  }
  auto gathered = AllGather(exchange_, mine);
  if (!gathered.ok()) return gathered.status();
  std::vector<TextKey> all;
  for (const std::string& s : *gathered) {
    ByteReader r(s);
    while (!r.empty()) {
      TextKey k;
      if (!GetKey(r, IdCoding::kTagged, k)) return Malformed();
      all.push_back(k);
    }
  }
  std::sort(all.begin(), all.end(), KeyLess);
  std::vector<TextKey> splitters;
  if (!all.empty()) {
    for (uint32_t b = 1; b < size_; ++b) splitters.push_back(all[b * all.size() / size_]);
  }
  // Send each name to the worker whose rank range it falls in (a contiguous run per worker).
  std::vector<size_t> run_begin(size_ + 1, own.size());
  run_begin[0] = 0;
  {
    size_t i = 0;
    for (uint32_t b = 0; b < size_; ++b) {
      run_begin[b] = i;
      while (i < own.size() &&
             (b + 1 >= size_ || splitters.empty() || KeyLess(table_.KeyAt(own[i]), splitters[b])))
        ++i;
    }
    run_begin[size_] = own.size();
  }
  std::vector<std::string> out(size_);
  for (uint32_t b = 0; b < size_; ++b) {
    for (size_t i = run_begin[b]; i < run_begin[b + 1]; ++i) {
      PutKey(out[b], IdCoding::kTagged, table_.KeyAt(own[i]));
    }
  }
  auto in = exchange_.AllToAll(std::move(out));
  if (!in.ok()) return in.status();
  struct Entry {
    TextKey key;
    uint32_t from;
    uint32_t pos;
  };
  std::vector<Entry> range;
  std::vector<uint32_t> run_size(size_, 0);
  for (uint32_t p = 0; p < size_; ++p) {
    ByteReader r((*in)[p]);
    while (!r.empty()) {
      TextKey k;
      if (!GetKey(r, IdCoding::kTagged, k)) return Malformed();
      range.push_back({k, p, run_size[p]++});
    }
  }
  tbb::parallel_sort(range.begin(), range.end(),
                     [](const Entry& a, const Entry& b) { return KeyLess(a.key, b.key); });
  std::string count;
  Put(count, static_cast<uint64_t>(range.size()));
  auto counts = AllGather(exchange_, count);
  if (!counts.ok()) return counts.status();
  starts_.assign(size_ + 1, 0);
  for (uint32_t p = 0; p < size_; ++p) {
    ByteReader r((*counts)[p]);
    uint64_t n;
    if (!r.Get(n)) return Malformed();
    starts_[p + 1] = starts_[p] + n;
  }
  if (starts_[size_] >= kNoIndex) return absl::OutOfRangeError("more than 2^32-1 vertices");
  // Ranks back to the owners, in the order their runs came.
  std::vector<std::vector<uint32_t>> ranks(size_);
  for (uint32_t p = 0; p < size_; ++p) ranks[p].resize(run_size[p]);
  for (size_t i = 0; i < range.size(); ++i) {
    ranks[range[i].from][range[i].pos] = static_cast<uint32_t>(starts_[rank_] + i);
    if (range[i].key.is_int) {
      names_ints_.push_back(range[i].key.value);
    } else {
      names_texts_.emplace_back(range[i].key.text);
    }
  }
  range = {};
  in->clear();
  std::vector<std::string> replies(size_);
  for (uint32_t p = 0; p < size_; ++p) {
    replies[p].assign(reinterpret_cast<const char*>(ranks[p].data()),
                      ranks[p].size() * sizeof(uint32_t));
  }
  ranks.clear();
  auto back = exchange_.AllToAll(std::move(replies));
  if (!back.ok()) return back.status();
  rank_of_.assign(table_.size(), kNoIndex);
  for (uint32_t b = 0; b < size_; ++b) {
    ByteReader r((*back)[b]);
    for (size_t i = run_begin[b]; i < run_begin[b + 1]; ++i) {
      if (!r.Get(rank_of_[own[i]])) return Malformed();
    }
  }
  return absl::OkStatus();
}

absl::Status PartitionLoader::AskRemotes() {
  std::vector<std::vector<uint32_t>> asked(size_);
  for (uint32_t v = 0; v < table_.size(); ++v) {
    if (!table_.owned[v]) asked[table_.part[v]].push_back(v);
  }
  // In steps of at most options_.list_step questions per owner, so that the questions and the
  // answers (20 bytes each) are never all held at once beside the received edges. Each step's
  // batch is led by a byte: whether its sender has more to ask.
  const size_t step = std::max<uint64_t>(1, options_.list_step);
  std::vector<size_t> done(size_, 0);
  bool unknown = false;
  for (bool more = true; more;) {
    std::vector<std::string> out(size_);
    std::vector<size_t> end(size_);
    bool mine = false;
    for (uint32_t p = 0; p < size_; ++p) {
      end[p] = std::min(asked[p].size(), done[p] + step);
      mine = mine || end[p] < asked[p].size();
    }
    for (uint32_t p = 0; p < size_; ++p) {
      Put(out[p], uint8_t{mine});
      for (size_t i = done[p]; i < end[p]; ++i) {
        PutKey(out[p], IdCoding::kTagged, table_.KeyAt(asked[p][i]));
      }
    }
    auto in = exchange_.AllToAll(std::move(out));
    if (!in.ok()) return in.status();
    std::vector<std::string> replies(size_);
    more = false;
    // The questions' table entries first, then the answers: each step reads the tables at
    // random (beyond the caches for a large part), so the entries a few ahead are fetched
    // meanwhile.
    std::vector<uint32_t> entries;
    for (uint32_t p = 0; p < size_; ++p) {
      ByteReader r((*in)[p]);
      uint8_t has_more;
      if (!r.Get(has_more)) return Malformed();
      more = more || has_more != 0;
      entries.clear();
      while (!r.empty()) {
        TextKey k;
        if (!GetKey(r, IdCoding::kTagged, k)) return Malformed();
        entries.push_back(table_.Find(k));
      }
      replies[p].reserve(entries.size() * (sizeof(uint32_t) + sizeof(VertexId)));
      constexpr size_t kAhead = 8;
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i + kAhead < entries.size() && entries[i + kAhead] != kNoIndex) {
          __builtin_prefetch(rank_of_.data() + entries[i + kAhead]);
          __builtin_prefetch(table_.uuid.data() + entries[i + kAhead]);
          __builtin_prefetch(table_.owned.data() + entries[i + kAhead]);
        }
        const uint32_t v = entries[i];
        const bool owned = v != kNoIndex && table_.owned[v];
        unknown |= !owned;
        Put(replies[p], owned ? rank_of_[v] : kNoIndex);
        Put(replies[p], owned ? table_.uuid[v] : VertexId{});
      }
    }
    in->clear();
    auto back = exchange_.AllToAll(std::move(replies));
    if (!back.ok()) return back.status();
    for (uint32_t p = 0; p < size_; ++p) {
      ByteReader r((*back)[p]);
      for (size_t i = done[p]; i < end[p]; ++i) {
        const uint32_t v = asked[p][i];
        if (!r.Get(rank_of_[v]) || !r.Get(table_.uuid[v])) return Malformed();
      }
      done[p] = end[p];
    }
  }
  return unknown ? absl::InternalError("partitioned load: a vertex has no owner")
                 : absl::OkStatus();
}

// Sorts a part's edges (numbered by table entry; `global` gives each entry's global index) by
// (source, target, weight) in global-index order: the part's share of the order LoadGraph sorts a
// whole table's edges in.
void SortPartEdges(PartEdges& edges, std::vector<double>& weights,
                   const std::vector<uint32_t>& global, uint32_t n) {
  const size_t m = edges.size();
  std::vector<std::pair<uint64_t, uint32_t>> order(m);
  tbb::parallel_for(size_t{0}, m, [&](size_t e) {
    order[e] = {uint64_t{global[edges.src(e)]} << 32 | global[edges.dst(e)],
                static_cast<uint32_t>(e)};
  });
  tbb::parallel_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return !weights.empty() && weights[a.second] < weights[b.second];
  });
  PartEdges sorted(m, n);
  sorted.symmetric = edges.symmetric;
  std::vector<double> sorted_weights(weights.size());
  tbb::parallel_for(size_t{0}, m, [&](size_t i) {
    const uint32_t e = order[i].second;
    sorted.Set(i, edges.src(e), edges.dst(e));
    if (!weights.empty()) sorted_weights[i] = weights[e];
  });
  edges = std::move(sorted);
  weights = std::move(sorted_weights);
}

absl::StatusOr<bool> PartitionLoader::OrientEdges(const std::vector<uint32_t>& local_order,
                                                  uint32_t n, const RankedBits& ids,
                                                  PartEdges& edges) {
  if (raw_ends_) {
    // The ends are IDs, and the owned table entries are in ID order: if the local order keeps
    // it, an owned ID's local index is its rank among the owned IDs, and any ID's entry its rank
    // among all (both bitmaps in L2), with no pass to rewrite the ends first.
    if (std::is_sorted(local_order.begin(), local_order.end())) {
      // (Every end received raw is below both bitmaps' limit.)
      struct RawEnds {
        RankedBits::View owned_ids, ids;
        bool Owned(uint32_t v) const { return owned_ids.Has(v); }
        uint32_t Local(uint32_t v) const { return owned_ids.Rank(v); }
        uint32_t Entry(uint32_t v) const { return ids.Rank(v); }
        void Prefetch(uint32_t) const {}
        // An end's partition in its record said whether it is owned, as its ID's bit does now.
        static constexpr bool CountedAtTake() { return true; }
      };
      return OrientWith(RawEnds{raw_owned_ids_.view(), ids.view()}, local_order.size(), n, edges);
    }
    RewriteRawEnds(ids);
  }
  // Which table entries are owned, a bit each (in L1 or L2, where the counting pass reads it at
  // random), and each owned entry's local index (read only for the pairs kept).
  std::vector<uint64_t> owned((static_cast<size_t>(n) + 63) / 64, 0);
  std::vector<uint32_t> local(n, kNoIndex);
  for (uint32_t i = 0; i < local_order.size(); ++i) {
    local[local_order[i]] = i;
    owned[local_order[i] >> 6] |= uint64_t{1} << (local_order[i] & 63);
  }
  struct TableEnds {
    const uint64_t* owned;
    const uint32_t* local;
    bool Owned(uint32_t v) const { return (owned[v >> 6] >> (v & 63)) & 1; }
    uint32_t Local(uint32_t v) const { return local[v]; }
    uint32_t Entry(uint32_t v) const { return v; }
    // The local indexes arrive while the pairs before are laid out.
    void Prefetch(uint32_t v) const { __builtin_prefetch(local + v); }
    // (An announcement after the load left raw may make an entry owned.)
    static constexpr bool CountedAtTake() { return false; }
  };
  return OrientWith(TableEnds{owned.data(), local.data()}, local_order.size(), n, edges);
}

template <class Ends>
absl::StatusOr<bool> PartitionLoader::OrientWith(const Ends& ends_in, size_t owned, uint32_t n,
                                                 PartEdges& edges) {
  const Ends ends = ends_in;  // pointers, kept in registers
  // The stored edges from an owned vertex and the reverses into one: counted as they came (a
  // record names its ends' partitions), else by a pass over them.
  size_t heads = 0, reverses = 0;
  bool loop = false;
  for (const EdgesFrom& e : from_) {
    if (Ends::CountedAtTake() && e.counted == e.src.size()) {
      heads += e.heads;
      reverses += e.reverses;
      loop = loop || e.owned_loop;
      continue;
    }
    e.src.VisitWith(e.dst, [&](const uint32_t* s, const uint32_t* d, size_t count) {
      uint64_t block_loop = 0;
      for (size_t i = 0; i < count; ++i) {
        const uint64_t from_owned = ends.Owned(s[i]);
        heads += from_owned;
        reverses += ends.Owned(d[i]) & (s[i] != d[i]);
        block_loop |= from_owned & (s[i] == d[i]);
      }
      loop = loop || block_loop != 0;
    });
  }
  if (loop && options_.in_edges_if_symmetric.value_or(in_edges_)) return false;
  edges = PartEdges::Mapped(heads + reverses, owned, n);
  edges.symmetric = true;
  edges.oriented = true;
  edges.heads = heads;
  stats_.oriented = true;
  // Each block's pairs in input order, the heads first, each block returned once laid out. The
  // counts made as the records came hold by the rule of an owned end (TakeRawParts); still,
  // a pair past them is not written, and any difference fails the load, no pair left unwritten.
  const size_t total = heads + reverses;
  size_t h = 0, r = heads;
  bool over = false;
  PageMover mover(edges, {0, heads});
  for (EdgesFrom& e : from_) {
    e.src.DrainWith(
        e.dst,
        [&](const uint32_t* s, const uint32_t* d, size_t count) {
          size_t hi = h, ri = r;         // (kept in registers)
          constexpr size_t kAhead = 16;  // pairs
          for (size_t i = 0; i < count; ++i) {
            if (i + kAhead < count) {
              ends.Prefetch(s[i + kAhead]);
              ends.Prefetch(d[i + kAhead]);
            }
            if (ends.Owned(s[i])) {
              if (hi == heads) [[unlikely]] {
                over = true;
              } else {
                edges.Set(hi++, ends.Local(s[i]), ends.Entry(d[i]));
              }
            }
            if (ends.Owned(d[i]) && s[i] != d[i]) {
              if (ri == total) [[unlikely]] {
                over = true;
              } else {
                edges.Set(ri++, ends.Local(d[i]), ends.Entry(s[i]));
              }
            }
          }
          h = hi;
          r = ri;
          mover.Wrote(0, h);
          mover.Wrote(1, r);
        },
        [&](void* block, size_t bytes) { mover.Give(block, bytes); });
  }
  stats_.bytes_moved += mover.moved();
  if (over || h != heads || r != total) return Malformed();
  raw_ends_ = false;
  raw_owned_ids_ = RankedBits();
  return true;
}

absl::StatusOr<PartitionInput> PartitionLoader::Assemble(bool weighted) {
  PartitionInput result;
  GraphInput& g = result.input;
  const uint32_t n = table_.size();
  size_t m = 0;
  for (const EdgesFrom& e : from_) m += e.src.size();
  if (m >= kNoIndex) return absl::OutOfRangeError("more than 2^32-1 edges are not supported");
  g.directed = !symmetric_;
  g.properties = properties_;
  if (weighted) {
    g.weights.reserve(m);
    for (EdgesFrom& e : from_) {
      e.weights.Drain(
          [&](const double* w, size_t count) { g.weights.insert(g.weights.end(), w, w + count); });
    }
  }
  stats_.vertices_known = n;
  stats_.edges_received = m;
  // A symmetric part's edges go oriented (PartEdges): the build then keys only the directed
  // edges it keeps, by local index, instead of both directions of every stored edge. Not for a
  // table's edges (sorted below), weights (laid out per stored edge), or in-edges of a part with
  // a self-loop (its in-CSR is not a rotation of its out-CSR; Topology::Build). The orientation
  // reads ends left raw as they are; any other layout wants table entries.
  const bool orient = options_.packed_edges && symmetric_ && !sorted_ && !weighted;
  if (raw_ends_ && !orient) RewriteRawEnds(table_.sorted());
  if (options_.packed_edges) {
    // The vertices stay in table order (the edges' numbers), the owned ones listed in global-index
    // order: no pass over the edges to renumber them.
    result.packed = true;
    PartVertices& pv = result.vertices;
    std::vector<std::pair<uint32_t, uint32_t>> owned;  // (rank, entry)
    for (uint32_t v = 0; v < n; ++v) {
      if (table_.owned[v]) owned.emplace_back(rank_of_[v], v);
    }
    tbb::parallel_sort(owned.begin(), owned.end());
    pv.local_order.resize(owned.size());
    pv.owned_names.resize(owned.size());
    tbb::parallel_for(size_t{0}, owned.size(), [&](size_t i) {
      pv.local_order[i] = owned[i].second;
      pv.owned_names[i] = NameOf(table_.KeyAt(owned[i].second));
    });
    owned = {};
    pv.uuids = std::move(table_.uuid);
    pv.global = std::move(rank_of_);
    pv.num_global = starts_[size_];
    pv.remote_ends_only = true;
    const RankedBits ids = table_.TakeSorted();
    table_ = VertexTable();
    bool oriented = false;
    if (orient) {
      auto laid_out = OrientEdges(pv.local_order, n, ids, result.edges);
      if (!laid_out.ok()) return laid_out.status();
      oriented = *laid_out;
    }
    if (!oriented) {
      if (raw_ends_) RewriteRawEnds(ids);
      // Packed sender by sender, each sender's blocks returned once copied.
      result.edges = PartEdges::Mapped(m, n, n);
      result.edges.symmetric = symmetric_;
      size_t at = 0;
      PageMover mover(result.edges, {0});
      for (EdgesFrom& e : from_) {
        e.src.DrainWith(
            e.dst,
            [&](const uint32_t* s, const uint32_t* d, size_t count) {
              tbb::parallel_for(size_t{0}, count,
                                [&](size_t i) { result.edges.Set(at + i, s[i], d[i]); });
              at += count;
              mover.Wrote(0, at);
            },
            [&](void* block, size_t bytes) { mover.Give(block, bytes); });
      }
      stats_.bytes_moved += mover.moved();
    }
    from_.clear();
    if (sorted_) SortPartEdges(result.edges, g.weights, pv.global, n);
    result.names = RankNames(starts_, rank_, std::move(names_ints_), std::move(names_texts_));
    result.stats = stats_;
    return result;
  }
  // Sorted as (rank, entry) pairs: a comparison through rank_of_ would read it at random.
  std::vector<uint32_t> order(n);
  {
    std::vector<std::pair<uint32_t, uint32_t>> by_rank(n);
    for (uint32_t v = 0; v < n; ++v) by_rank[v] = {rank_of_[v], v};
    tbb::parallel_sort(by_rank.begin(), by_rank.end());
    for (uint32_t i = 0; i < n; ++i) order[i] = by_rank[i].second;
  }
  std::vector<uint32_t> pos(n);
  for (uint32_t i = 0; i < n; ++i) pos[order[i]] = i;
  // The owned vertices' names, in the same order (the remote ones need none).
  std::vector<uint32_t> owned_rank(n, kNoIndex);
  uint32_t owned = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (table_.owned[order[i]]) owned_rank[i] = owned++;
  }
  result.vertices.owned_names.resize(owned);
  result.vertices.uuids.resize(n);
  result.vertices.global.resize(n);
  result.vertices.num_global = starts_[size_];
  tbb::parallel_for(uint32_t{0}, n, [&](uint32_t i) {
    const uint32_t v = order[i];
    if (owned_rank[i] != kNoIndex) {
      result.vertices.owned_names[owned_rank[i]] = NameOf(table_.KeyAt(v));
    }
    result.vertices.uuids[i] = table_.uuid[v];
    result.vertices.global[i] = rank_of_[v];
  });
  order = {};
  owned_rank = {};
  // The vertex table goes before the edge arrays are laid out, where an assembly peaks.
  table_ = VertexTable();
  rank_of_ = {};
  // One array at a time, each sender's part freed once copied: the received edges and the laid
  // out ones are never both held whole.
  auto lay_out = [&](Blocks<uint32_t> EdgesFrom::*ends, std::vector<uint32_t>& into) {
    into.resize(m);
    size_t at = 0;
    for (EdgesFrom& e : from_) {
      (e.*ends).Drain([&](const uint32_t* from, size_t count) {
        tbb::parallel_for(size_t{0}, count, [&](size_t i) { into[at + i] = pos[from[i]]; });
        at += count;
      });
    }
  };
  lay_out(&EdgesFrom::src, g.src);
  lay_out(&EdgesFrom::dst, g.dst);
  from_.clear();
  // The vertices are in global-index order here: the edges sort as LoadGraph sorts them.
  if (sorted_) text::SortStoredEdges(g);
  if (symmetric_) bsp::MakeSymmetric(g);
  result.names = RankNames(starts_, rank_, std::move(names_ints_), std::move(names_texts_));
  result.stats = stats_;
  return result;
}

absl::StatusOr<PartitionInput> PartitionLoader::Run() {
  const std::string format = IsGraphalytics(source_)  ? "graphalytics"
                             : source_.format.empty() ? "edgelist"
                                                      : source_.format;
  absl::Status setup;
  if (source_.text) {
    // A table's rows: a vertex table makes it a listed graph, as Graphalytics' .v does.
    sorted_ = true;
    symmetric_ = source_.undirected;
    edge_file_ = source_.text->EdgesName();
    vertex_file_ = source_.text->VerticesName();
    auto probe = source_.text->OpenShare(true, false, rank_, size_);
    if (probe.ok()) {
      graphalytics_ = true;
      vertex_share_ = *std::move(probe);
    } else if (!absl::IsNotFound(probe.status())) {
      setup = probe.status();
    }
    // Every worker must take the same path: a vertex table made or dropped while they looked
    // would split them.
    auto seen = AllGather(exchange_, std::string(1, graphalytics_ ? '1' : '0'));
    if (!seen.ok()) return seen.status();
    for (const std::string& x : *seen) {
      if ((x == "1") != graphalytics_ && setup.ok()) {
        setup = absl::FailedPreconditionError(
            absl::StrCat(vertex_file_, " was made or dropped while the workers opened it"));
      }
    }
  } else if (format == "graphalytics") {
    graphalytics_ = true;
    auto files = text::ResolveGraphalytics(source_);
    if (files.ok()) {
      properties_ = std::move(files->properties);
      vertex_file_ = std::move(files->vertex_file);
      edge_file_ = std::move(files->edge_file);
      symmetric_ = !files->directed;
    } else {
      setup = files.status();
    }
  } else if (format == "edgelist") {
    edge_file_ = source_.path;
    symmetric_ = source_.undirected;
  } else {
    setup = absl::InvalidArgumentError(absl::StrCat("graph format: unknown format '", format,
                                                    "' (expected edgelist or graphalytics)"));
  }
  if (auto st = AgreeOnStatus(exchange_, setup); !st.ok()) return st;
  if (graphalytics_) {
    if (auto st = LoadVertexFile(vertex_file_); !st.ok()) return st;
  }
  // A bad vertex line anywhere ends the load before the edges, as in LoadGraph (all know it).
  if (!vertex_stopped_) {
    if (auto st = LoadEdgeFile(edge_file_, graphalytics_); !st.ok()) return st;
  }
  // The rounds' buffers stay in malloc's heap, where the steps up to the assembly reuse them
  // without faulting their pages in again; what is free goes back before the assembly, whose
  // packed edges are mapped beside the received ones and do not reuse the heap (and the build
  // gives back what the assembly frees before it lays out the CSR, where a worker's memory
  // peaks; a cluster's writer of part files, before it encodes them).
  bool weighted = false;
  if (auto st = Resolve(weighted); !st.ok()) return st;
  bool ranked = false;
  if (auto st = RankRaw(ranked); !st.ok()) return st;
  if (!ranked) {
    if (auto st = Rank(); !st.ok()) return st;
  }
  absl::Status asked = AskRemotes();
  if (auto st = AgreeOnStatus(exchange_, asked); !st.ok()) return st;
  ReturnFreedMemory();
  return Assemble(weighted);
}

}  // namespace

absl::StatusOr<PartitionInput> LoadPartitionFromText(const GraphSource& source, WeightUse weights,
                                                     Exchange& exchange, bool in_edges,
                                                     const PartitionLoadOptions& options) {
  PartitionLoader loader(source, weights, exchange, in_edges, options);
  return loader.Run();
}

}  // namespace lockstep::load
