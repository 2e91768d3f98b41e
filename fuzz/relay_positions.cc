// The positions of a relay batch (ForEachPosition): any coding and bytes give positions below the
// list's size, in order, or a DataLoss error.
#include "lockstep/bsp/relay_positions.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const auto coding = static_cast<lockstep::bsp::PositionCoding>(data[0] % 5);
  uint32_t list_size;
  std::memcpy(&list_size, data + 1, sizeof list_size);
  list_size %= 1u << 20;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 5), size - 5);
  int64_t last = -1;
  auto st = lockstep::bsp::ForEachPosition(coding, bytes, list_size, 7, [&](uint32_t p) {
    if (p >= list_size || static_cast<int64_t>(p) < last) __builtin_trap();
    last = p;
    return absl::OkStatus();
  });
  if (!st.ok() && st.code() != absl::StatusCode::kDataLoss) __builtin_trap();
  return 0;
}
