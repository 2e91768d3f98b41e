#pragma once

// The positions of a relay batch (PositionCoding): written by the sender in one pass, read by the
// receiver in one pass, with no hash lookup and no allocation per message.

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/relayer.h"

namespace lockstep::bsp {

// LEB128: seven bits a byte, least significant first, the high bit set on all but the last byte.
inline void AppendVarint(uint64_t x, std::string& out) {
  while (x >= 0x80) {
    out.push_back(static_cast<char>(x | 0x80));
    x >>= 7;
  }
  out.push_back(static_cast<char>(x));
}

// Consumes one varint from the front of `in`; false if it is cut short or longer than 64 bits.
inline bool ReadVarint(std::string_view& in, uint64_t& x) {
  x = 0;
  for (size_t i = 0; i < in.size() && i < 10; ++i) {
    const uint64_t byte = static_cast<uint8_t>(in[i]);
    if (i == 9 && byte > 1) return false;
    x |= (byte & 0x7f) << (7 * i);
    if (byte < 0x80) {
      in.remove_prefix(i + 1);
      return true;
    }
  }
  return false;
}

// Builds the positions of one batch into `out` as deltas; Finish then keeps whichever coding is
// smallest for a list of `size` positions (all of them: no bytes; many: a bitmap).
class PositionWriter {
 public:
  explicit PositionWriter(std::string& out) : out_(out) { out_.clear(); }

  // Positions come in non-decreasing order.
  void Add(uint32_t position) {
    repeated_ = repeated_ || (count_ > 0 && position == last_);
    AppendVarint(position - last_, out_);
    last_ = position;
    ++count_;
  }
  uint64_t count() const { return count_; }

  PositionCoding Finish(uint32_t size) {
    if (count_ == 0) {
      out_.clear();
      return PositionCoding::kNone;
    }
    if (repeated_) return PositionCoding::kDeltas;
    if (count_ == size) {
      out_.clear();
      return PositionCoding::kAll;
    }
    const size_t bitmap_bytes = (size_t{size} + 7) / 8;
    if (bitmap_bytes >= out_.size()) return PositionCoding::kDeltas;
    std::string bitmap(bitmap_bytes, '\0');
    std::string_view in = out_;
    uint64_t position = 0, delta = 0;
    while (ReadVarint(in, delta)) {
      position += delta;
      bitmap[position >> 3] = static_cast<char>(bitmap[position >> 3] | (1 << (position & 7)));
    }
    out_ = std::move(bitmap);
    return PositionCoding::kBitmap;
  }

 private:
  std::string& out_;
  uint32_t last_ = 0;
  uint64_t count_ = 0;
  bool repeated_ = false;
};

// Calls f(position) for every position of a batch from partition `from`, in order; each is below
// `size`, the length of the list agreed with that partition. f returns a status, and an error
// stops the walk and is returned as it is. Malformed positions are a DataLoss error naming `from`.
template <class F>
absl::Status ForEachPosition(PositionCoding coding, std::string_view bytes, uint32_t size,
                             uint32_t from, F&& f) {
  auto malformed = [&](const std::string& what) {
    return absl::DataLossError(
        absl::StrCat("partition ", from, " relayed a batch with malformed positions: ", what));
  };
  switch (coding) {
    case PositionCoding::kNone:
      if (!bytes.empty()) return malformed("bytes without a coding");
      return absl::OkStatus();
    case PositionCoding::kAll:
      if (!bytes.empty()) return malformed("bytes after 'all'");
      for (uint32_t i = 0; i < size; ++i) {
        if (auto st = f(i); !st.ok()) return st;
      }
      return absl::OkStatus();
    case PositionCoding::kBitmap: {
      if (bytes.size() != (size_t{size} + 7) / 8) {
        return malformed(absl::StrCat("a bitmap of ", bytes.size(), " bytes for a list of ", size));
      }
      for (size_t b = 0; b < bytes.size(); ++b) {
        unsigned bits = static_cast<uint8_t>(bytes[b]);
        while (bits != 0) {
          const uint64_t position = 8 * b + static_cast<unsigned>(std::countr_zero(bits));
          bits &= bits - 1;
          if (position >= size) {
            return malformed(absl::StrCat("position ", position, " in a list of ", size));
          }
          if (auto st = f(static_cast<uint32_t>(position)); !st.ok()) return st;
        }
      }
      return absl::OkStatus();
    }
    case PositionCoding::kDeltas: {
      uint64_t position = 0, delta = 0;
      while (!bytes.empty()) {
        if (!ReadVarint(bytes, delta)) return malformed("a cut or overlong varint");
        position += delta;
        if (delta >= size || position >= size) {
          return malformed(absl::StrCat("a position beyond the list of ", size));
        }
        if (auto st = f(static_cast<uint32_t>(position)); !st.ok()) return st;
      }
      return absl::OkStatus();
    }
  }
  return malformed(absl::StrCat("unknown coding ", static_cast<int>(coding)));
}

}  // namespace lockstep::bsp
