// The records a sender of a partitioned load's edge round (docs/design.md §4.4) writes for a
// destination. Private to the load library.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

namespace lockstep::load::partitioned {

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

}  // namespace lockstep::load::partitioned
