#pragma once

#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace lockstep::bsp {

// Bytes in, bytes out for vertex values, messages and aggregator values. The distributed layer and
// (later) checkpoints use codecs; local runs never encode. Encodings are self-delimiting so that a
// batch is the plain concatenation of its elements.
//
// Trivially copyable types get a codec for free. A variable-size type (a neighbour list, a label
// histogram) specialises `Codec<T>` with the same two static functions.
template <class T>
struct Codec {
  static_assert(sizeof(T) == 0,
                "no Codec<T> for this type: specialise lockstep::bsp::Codec<T> with "
                "Encode(const T&, std::string&) and Decode(std::string_view&, T&)");
};

template <class T>
requires std::is_trivially_copyable_v<T>
struct Codec<T> {
  static void Encode(const T& value, std::string& out) {
    out.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  // Consumes sizeof(T) bytes from the front of `in`; false if too few remain.
  static bool Decode(std::string_view& in, T& value) {
    if (in.size() < sizeof(T)) return false;
    std::memcpy(&value, in.data(), sizeof(T));
    in.remove_prefix(sizeof(T));
    return true;
  }
};

template <class T>
concept HasCodec = requires(const T& value, T& mutable_value, std::string& out,
                            std::string_view& in) {
  Codec<T>::Encode(value, out);
  { Codec<T>::Decode(in, mutable_value) } -> std::convertible_to<bool>;
};

// Helpers for codecs of variable-size types: a length prefix as a fixed 64-bit value.
inline void EncodeLength(uint64_t n, std::string& out) { Codec<uint64_t>::Encode(n, out); }
inline bool DecodeLength(std::string_view& in, uint64_t& n) {
  return Codec<uint64_t>::Decode(in, n);
}

}  // namespace lockstep::bsp
