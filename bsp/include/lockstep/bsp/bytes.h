#pragma once

// One way to write values as bytes and read them back, for what the processes of a job send each
// other (an Exchange's batches, docs/design.md §4) and what lockstep's own binary files hold (the
// partitioned form, checkpoints): a value is its bytes as they lie in memory, little-endian on
// every machine lockstep builds for, and a string is its length (32 bits) and then its bytes. A
// reader says false rather than read past its end, so that a truncated or hostile input is an
// error and never a read out of bounds.

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace lockstep::bsp {

static_assert(std::endian::native == std::endian::little, "the byte formats are little-endian");

// Appends the bytes of `v`.
template <class T>
void Put(std::string& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.append(bytes, sizeof(T));
}

// Appends `bytes` after its length.
inline void PutString(std::string& out, std::string_view bytes) {
  Put(out, static_cast<uint32_t>(bytes.size()));
  out.append(bytes);
}

// Reads values off the front of bytes written by Put and PutString.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  template <class T>
  bool Get(T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (in_.size() < sizeof(T)) return false;
    std::memcpy(&v, in_.data(), sizeof(T));
    in_.remove_prefix(sizeof(T));
    return true;
  }
  // The next `n` bytes, as they are (no length before them).
  bool GetBytes(size_t n, std::string_view& out) {
    if (in_.size() < n) return false;
    out = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  // A string written by PutString.
  bool GetString(std::string_view& out) {
    uint32_t n = 0;
    return Get(n) && GetBytes(n, out);
  }
  bool GetString(std::string& out) {
    std::string_view s;
    if (!GetString(s)) return false;
    out.assign(s.data(), s.size());
    return true;
  }
  bool Skip(uint64_t n) {
    if (in_.size() < n) return false;
    in_.remove_prefix(static_cast<size_t>(n));
    return true;
  }
  bool empty() const { return in_.empty(); }
  // What is left to read.
  std::string_view rest() const { return in_; }

 private:
  std::string_view in_;
};

}  // namespace lockstep::bsp
