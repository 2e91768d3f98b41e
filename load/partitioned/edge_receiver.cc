#include "partitioned/edge_receiver.h"

#include <algorithm>
#include <atomic>

#include "lockstep/bsp/bytes.h"
#include "partitioned/leave_raw.h"
#include "partitioned/raw_ids.h"
#include "tbb/parallel_for.h"

namespace lockstep::load::partitioned {

using bsp::ByteReader;
using bsp::PartitionLoadStats;
using text::kNoIndex;
using text::TextKey;

absl::Status EdgeReceiver::Take(const std::vector<std::string_view>& batches) {
  if (auto st = ReadHeads(batches); !st.ok()) return st;
  const bool text = std::any_of(coding_.begin(), coding_.end(),
                                [](IdCoding c) { return c == IdCoding::kTagged; });
  if (text && got_.raw.active) {
    if (auto st = LeaveRaw(got_, frame_.rank, PartitionLoadStats::RawEnd::kRecord, stats_);
        !st.ok()) {
      return st;
    }
  }
  if (text) return TakeTagged(batches);
  // Fixed-size records of integer IDs.
  if (auto st = CountRecords(batches); !st.ok()) return st;
  const Extremes extremes = FindExtremes(batches);
  // (Without records, nothing to check: max_id and min_id are no IDs.)
  const bool any = std::any_of(records_.begin(), records_.end(), [](size_t n) { return n > 0; });
  RawIds& raw = got_.raw;
  if (raw.active && any &&
      (extremes.min_id < raw.id_base ||
       !raw.Covers(extremes.max_id, got_.text_read + got_.received_ends))) {
    if (auto st = LeaveRaw(got_, frame_.rank, PartitionLoadStats::RawEnd::kRecord, stats_);
        !st.ok()) {
      return st;
    }
  }
  if (raw.active) return TakeRaw(batches);
  if (extremes.max_id < std::max<uint64_t>(uint64_t{1} << 20, got_.received_ends)) {
    got_.table.CoverIntegersBelow(extremes.max_id + 1);
  }
  return TakeThroughTable(batches);
}

absl::Status EdgeReceiver::ReadHeads(const std::vector<std::string_view>& batches) {
  const uint32_t size = frame_.size;
  coding_.assign(size, IdCoding::kNarrow);
  head_.assign(size, 1);
  base_of_.assign(size, 0);
  for (uint32_t p = 0; p < size; ++p) {
    ByteReader r(batches[p]);
    if (!GetCoding(r, coding_[p])) return Malformed();
    if (coding_[p] == IdCoding::kSlimBased) {
      // (Narrow IDs: the base and any 24 bits stay below 2^32.)
      if (!r.Get(base_of_[p]) || base_of_[p] > (uint64_t{1} << 32) - (uint64_t{1} << kSlimBits)) {
        return Malformed();
      }
      coding_[p] = IdCoding::kSlimParts;
      head_[p] = 1 + sizeof(uint64_t);
    }
  }
  return absl::OkStatus();
}

absl::Status EdgeReceiver::TakeTagged(const std::vector<std::string_view>& batches) {
  const bool weights = frame_.keep_weights();
  for (uint32_t p = 0; p < frame_.size; ++p) {
    ByteReader r(batches[p].substr(head_[p]));
    EdgesFrom& to = got_.from[p];
    const IdCoding coding = coding_[p];
    while (!r.empty()) {
      TextKey ks, kd;
      uint32_t other;
      double w = 0;
      if (RecordShape::WithParts(coding)) {
        std::string_view rec;
        if (!r.GetBytes(RecordShape::IdsBytes(coding), rec)) return Malformed();
        ++stats_.records_with_partitions;
        if (coding == IdCoding::kSlimParts) ++stats_.slim_records;
        if (base_of_[p] != 0) ++stats_.based_records;
        ks = TextKey{true, shape_.KeyAt(coding, rec.data(), 0) + base_of_[p], {}};
        kd = TextKey{true, shape_.KeyAt(coding, rec.data(), 1) + base_of_[p], {}};
        other = shape_.OtherOf(coding, rec.data());
      } else if (!GetKey(r, coding, ks) || !GetKey(r, coding, kd) || !r.Get(other)) {
        return Malformed();
      }
      if ((weights && !r.Get(w)) || other >= frame_.size) return Malformed();
      to.src.push_back(got_.table.Intern(ks, other).entry);
      to.dst.push_back(got_.table.Intern(kd, other).entry);
      if (weights) to.weights.push_back(w);
    }
  }
  return absl::OkStatus();
}

absl::Status EdgeReceiver::CountRecords(const std::vector<std::string_view>& batches) {
  records_.assign(frame_.size, 0);
  for (uint32_t p = 0; p < frame_.size; ++p) {
    const size_t record = shape_.RecordBytes(coding_[p]);
    if ((batches[p].size() - head_[p]) % record != 0) return Malformed();
    records_[p] = (batches[p].size() - head_[p]) / record;
    got_.received_ends += 2 * records_[p];
    if (RecordShape::WithParts(coding_[p])) stats_.records_with_partitions += records_[p];
    if (coding_[p] == IdCoding::kSlimParts) stats_.slim_records += records_[p];
    if (base_of_[p] != 0) stats_.based_records += records_[p];
  }
  return absl::OkStatus();
}

EdgeReceiver::Extremes EdgeReceiver::FindExtremes(
    const std::vector<std::string_view>& batches) const {
  // The direct table covers the IDs up to the largest received so far while it stays within 4
  // bytes per end received (the edge arrays take 4 per end): a dense-ID graph is never hashed
  // here, a sparse-ID one falls back to the hash map.
  // (And, from a base, the least, which receiving raw keeps at or above it.)
  const uint32_t size = frame_.size;
  std::vector<uint64_t> max_of(size, 0), min_of(size, kNoLeast);
  auto extremes = [&](auto with_least) {
    tbb::parallel_for(uint32_t{0}, size, [&](uint32_t p) {
      WithCoding(p, [&](auto c) {
        const RecordShape shape = shape_;
        const char* rec = batches[p].data() + head_[p];
        const size_t bytes = shape.RecordBytes(c);
        uint64_t m = 0, least = kNoLeast;
        for (size_t i = 0; i < records_[p]; ++i, rec += bytes) {
          const uint64_t a = shape.KeyAt(c, rec, 0) + base_of_[p];
          const uint64_t b = shape.KeyAt(c, rec, 1) + base_of_[p];
          m = std::max({m, a, b});
          if constexpr (decltype(with_least)::value) least = std::min({least, a, b});
        }
        max_of[p] = m;
        min_of[p] = least;  // (not wanted: no ID is below a base of 0, or no base is asked)
      });
    });
  };
  if (got_.raw.active && got_.raw.id_base != 0) {
    extremes(std::true_type{});
  } else {
    extremes(std::false_type{});
  }
  return {*std::max_element(max_of.begin(), max_of.end()),
          *std::min_element(min_of.begin(), min_of.end())};
}

absl::Status EdgeReceiver::TakeRaw(const std::vector<std::string_view>& batches) {
  // The IDs as they come, and each end's partition unless it is this worker's: one byte read (and
  // at most one written) per end, in a table a byte per ID, where the table's lookups read four
  // and added the ends met for the first time one by one.
  std::atomic<bool> malformed{false};
  const RawIds& raw = got_.raw;
  tbb::parallel_for(uint32_t{0}, frame_.size, [&](uint32_t p) {
    const char* rec = batches[p].data() + head_[p];
    uint8_t* part = got_.raw.part.data();
    if (RecordShape::WithParts(coding_[p]) && !frame_.keep_weights()) {
      // Positions are IDs less the base, which no ID here is below (Take), each below 2^32: what
      // a record spells plus this, modulo 2^32.
      const auto offset = static_cast<uint32_t>(base_of_[p] - raw.id_base);
      const bool ok =
          coding_[p] == IdCoding::kSlimParts
              ? TakeRawParts<IdCoding::kSlimParts>(part, frame_.rank, frame_.size, rec, records_[p],
                                                   offset, got_.from[p])
              : TakeRawParts<IdCoding::kNarrowParts>(part, frame_.rank, frame_.size, rec,
                                                     records_[p], offset, got_.from[p]);
      if (!ok) malformed = true;
      return;
    }
    WithCoding(p, [&](auto c) {
      const RecordShape shape = shape_;
      const size_t bytes = shape.RecordBytes(c);
      const size_t weight_at = bytes - 8;
      const size_t n = records_[p];
      EdgesFrom& to = got_.from[p];
      const auto self = static_cast<uint8_t>(shape.self);
      const uint64_t spelt = base_of_[p], base = raw.id_base;
      constexpr size_t kAhead = 16;  // records: their bytes arrive while these are taken
      for (size_t i = 0; i < n; ++i, rec += bytes) {
        if (i + kAhead < n) {
          __builtin_prefetch(part + (shape.KeyAt(c, rec + kAhead * bytes, 0) + spelt - base));
          __builtin_prefetch(part + (shape.KeyAt(c, rec + kAhead * bytes, 1) + spelt - base));
        }
        const uint32_t other = shape.OtherOf(c, rec);
        if (other >= shape.parts) {
          malformed = true;
          return;
        }
        // Positions: IDs less the base.
        const uint64_t ends[2] = {shape.KeyAt(c, rec, 0) + spelt - base,
                                  shape.KeyAt(c, rec, 1) + spelt - base};
        for (const uint64_t v : ends) {
          if (!RawIds::NotePartition(part[v], self, other)) malformed = true;
        }
        to.src.push_back(static_cast<uint32_t>(ends[0]));
        to.dst.push_back(static_cast<uint32_t>(ends[1]));
        if (shape.weights) {
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

absl::Status EdgeReceiver::TakeThroughTable(const std::vector<std::string_view>& batches) {
  // Each end is looked up in the vertex table (directly, where its direct part covers the ID), in
  // parallel per sender; the ends the table does not know yet (remote ends met for the first
  // time) are then added in sender and record order, so the table does not depend on the thread
  // count.
  struct Miss {
    size_t at;  // the edge's place among the sender's
    uint64_t key;
    uint32_t owner;
    bool dst;
  };
  std::vector<std::vector<Miss>> misses(frame_.size);
  std::atomic<bool> malformed{false};
  const VertexTable& table = got_.table;
  tbb::parallel_for(uint32_t{0}, frame_.size, [&](uint32_t p) {
    WithCoding(p, [&](auto c) {
      const RecordShape shape = shape_;
      const char* rec = batches[p].data() + head_[p];
      const size_t bytes = shape.RecordBytes(c);
      const size_t weight_at = bytes - 8;
      const size_t n = records_[p];
      EdgesFrom& to = got_.from[p];
      const uint64_t spelt = base_of_[p];
      constexpr size_t kAhead = 16;  // records: the table's lines arrive while these are taken
      for (size_t i = 0; i < n; ++i, rec += bytes) {
        if (i + kAhead < n) {
          table.PrefetchInt(shape.KeyAt(c, rec + kAhead * bytes, 0) + spelt);
          table.PrefetchInt(shape.KeyAt(c, rec + kAhead * bytes, 1) + spelt);
        }
        const uint32_t other = shape.OtherOf(c, rec);
        if (other >= shape.parts) {
          malformed = true;
          return;
        }
        const size_t at = to.src.size();
        for (int end = 0; end < 2; ++end) {
          const uint64_t key = shape.KeyAt(c, rec, end) + spelt;
          const uint32_t v = table.FindInt(key);
          if (v == kNoIndex) misses[p].push_back({at, key, other, end == 1});
          (end == 0 ? to.src : to.dst).push_back(v);
        }
        if (shape.weights) {
          double w;
          std::memcpy(&w, rec + weight_at, 8);
          to.weights.push_back(w);
        }
      }
    });
  });
  if (malformed) return Malformed();
  for (uint32_t p = 0; p < frame_.size; ++p) {
    for (const Miss& m : misses[p]) {
      const uint32_t v = got_.table.Intern(TextKey{true, m.key, {}}, m.owner).entry;
      (m.dst ? got_.from[p].dst : got_.from[p].src)[m.at] = v;
    }
  }
  return absl::OkStatus();
}

}  // namespace lockstep::load::partitioned
