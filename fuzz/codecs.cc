// The codecs' decoders of variable-size values (the exact sum aggregators carry, colouring's
// state): any bytes decode or are refused, never read past their end, and what decodes encodes
// back to the bytes it came from.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/apps/coloring/coloring.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/exact_sum.h"

namespace {

template <class T>
void RoundTrip(std::string_view in) {
  while (!in.empty()) {
    const std::string_view before = in;
    T value{};
    if (!lockstep::bsp::Codec<T>::Decode(in, value)) return;
    if (in.size() >= before.size()) __builtin_trap();  // a decode consumes bytes
    std::string again;
    lockstep::bsp::Codec<T>::Encode(value, again);
    T twice{};
    std::string_view view = again;
    if (!lockstep::bsp::Codec<T>::Decode(view, twice) || !view.empty()) __builtin_trap();
    std::string third;
    lockstep::bsp::Codec<T>::Encode(twice, third);
    if (third != again) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 2) {
    case 0:
      RoundTrip<lockstep::bsp::ExactSum>(in);
      break;
    case 1:
      RoundTrip<lockstep::apps::coloring::Value>(in);
      break;
  }
  return 0;
}
