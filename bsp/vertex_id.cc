#include "lockstep/bsp/vertex_id.h"

#include <array>
#include <bit>
#include <boost/uuid/name_generator_sha1.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <cstring>
#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace lockstep::bsp {
namespace {

// The project namespace for name-based (v5) vertex UUIDs. Fixed forever: changing it changes
// every vertex's UUID and so every partition assignment.
constexpr VertexId kNamespace = {{0x3f, 0x1c, 0x2a, 0x58, 0x9d, 0x4e, 0x4b, 0x7a, 0x8c, 0x35, 0x1e,
                                  0x6d, 0x2f, 0x0a, 0x9b, 0x47}};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

uint32_t LoadBigEndian(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// The longest name whose v5 hash input (namespace, name, 0x80 and the 64-bit length) fits one
// 64-byte SHA-1 block.
constexpr size_t kOneBlockName = 64 - 16 - 1 - 8;

// SHA-1's first four state words (the UUID takes 16 of the digest's 20 bytes) after compressing
// the one padded block: portable code, and the x86 SHA extensions where the CPU has them.
using Abcd = std::array<uint32_t, 4>;
constexpr uint32_t kInit[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};

Abcd CompressPortable(const uint8_t* block) {
  uint32_t w[80];
  for (int i = 0; i < 16; ++i) w[i] = LoadBigEndian(block + 4 * i);
  for (int i = 16; i < 80; ++i) w[i] = std::rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = kInit[0], b = kInit[1], c = kInit[2], d = kInit[3], e = kInit[4];
  auto round = [&](uint32_t f, uint32_t k, uint32_t wi) {
    const uint32_t temp = std::rotl(a, 5) + f + e + k + wi;
    e = d;
    d = c;
    c = std::rotl(b, 30);
    b = a;
    a = temp;
  };
  for (int i = 0; i < 20; ++i) round((b & c) | (~b & d), 0x5A827999, w[i]);
  for (int i = 20; i < 40; ++i) round(b ^ c ^ d, 0x6ED9EBA1, w[i]);
  for (int i = 40; i < 60; ++i) round((b & c) | (b & d) | (c & d), 0x8F1BBCDC, w[i]);
  for (int i = 60; i < 80; ++i) round(b ^ c ^ d, 0xCA62C1D6, w[i]);
  return {kInit[0] + a, kInit[1] + b, kInit[2] + c, kInit[3] + d};
}

#if defined(__x86_64__)
bool CpuHasSha() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool ssse3_sse41 = (ecx & (1u << 9)) && (ecx & (1u << 19));
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return ssse3_sse41 && (ebx & (1u << 29));
}

// Four rounds (4i .. 4i + 3) from i = 3 on, as in Intel's SHA extensions reference code: `cur`
// and `next` alternate between the two E registers, the message words rotate through m[0..3].
template <int I>
__attribute__((target("sha,sse4.1"))) inline void Sha1Group(__m128i& abcd, __m128i& cur,
                                                            __m128i& next, __m128i* m) {
  cur = _mm_sha1nexte_epu32(cur, m[I % 4]);
  next = abcd;
  m[(I + 1) % 4] = _mm_sha1msg2_epu32(m[(I + 1) % 4], m[I % 4]);
  abcd = _mm_sha1rnds4_epu32(abcd, cur, I / 5);
  m[(I + 3) % 4] = _mm_sha1msg1_epu32(m[(I + 3) % 4], m[I % 4]);
  m[(I + 2) % 4] = _mm_xor_si128(m[(I + 2) % 4], m[I % 4]);
}

template <int... I>
__attribute__((target("sha,sse4.1"))) inline void Sha1Groups(__m128i& abcd, __m128i& e0,
                                                             __m128i& e1, __m128i* m,
                                                             std::integer_sequence<int, I...>) {
  ((I % 2 == 0 ? Sha1Group<I + 4>(abcd, e0, e1, m) : Sha1Group<I + 4>(abcd, e1, e0, m)), ...);
}

__attribute__((target("sha,sse4.1"))) Abcd CompressSha(const uint8_t* block) {
  const __m128i mask = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
  const __m128i abcd_init = _mm_set_epi32(static_cast<int>(kInit[0]), static_cast<int>(kInit[1]),
                                          static_cast<int>(kInit[2]), static_cast<int>(kInit[3]));
  __m128i abcd = abcd_init;
  __m128i e0 = _mm_set_epi32(static_cast<int>(kInit[4]), 0, 0, 0), e1;
  __m128i m[4];
  for (int i = 0; i < 4; ++i) {
    m[i] =
        _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * i)), mask);
  }
  // Rounds 0-3.
  e0 = _mm_add_epi32(e0, m[0]);
  e1 = abcd;
  abcd = _mm_sha1rnds4_epu32(abcd, e0, 0);
  // Rounds 4-7.
  e1 = _mm_sha1nexte_epu32(e1, m[1]);
  e0 = abcd;
  abcd = _mm_sha1rnds4_epu32(abcd, e1, 0);
  m[0] = _mm_sha1msg1_epu32(m[0], m[1]);
  // Rounds 8-11.
  e0 = _mm_sha1nexte_epu32(e0, m[2]);
  e1 = abcd;
  abcd = _mm_sha1rnds4_epu32(abcd, e0, 0);
  m[1] = _mm_sha1msg1_epu32(m[1], m[2]);
  m[0] = _mm_xor_si128(m[0], m[2]);
  // Rounds 12-79.
  Sha1Group<3>(abcd, e1, e0, m);
  Sha1Groups(abcd, e0, e1, m, std::make_integer_sequence<int, 16>());
  abcd = _mm_add_epi32(abcd, abcd_init);
  Abcd out;
  out[0] = static_cast<uint32_t>(_mm_extract_epi32(abcd, 3));
  out[1] = static_cast<uint32_t>(_mm_extract_epi32(abcd, 2));
  out[2] = static_cast<uint32_t>(_mm_extract_epi32(abcd, 1));
  out[3] = static_cast<uint32_t>(_mm_extract_epi32(abcd, 0));
  return out;
}

#endif

// The v5 UUID of a name of at most kOneBlockName bytes: one SHA-1 block, compressed directly.
// Boost's generator (used for longer names) feeds its SHA-1 a byte at a time, which made hashing
// the vertex names a large part of a graph build; this gives the same bits (the tests compare).
VertexId HashOneBlock(std::string_view name, bool sha_extensions) {
  alignas(16) uint8_t block[64] = {};
  std::memcpy(block, kNamespace.data, 16);
  if (!name.empty()) std::memcpy(block + 16, name.data(), name.size());
  block[16 + name.size()] = 0x80;
  const uint64_t bits = (16 + name.size()) * 8;
  for (int i = 0; i < 8; ++i) block[63 - i] = static_cast<uint8_t>(bits >> (8 * i));
  Abcd digest;
#if defined(__x86_64__)
  digest = sha_extensions ? CompressSha(block) : CompressPortable(block);
#else
  (void)sha_extensions;
  digest = CompressPortable(block);
#endif
  VertexId id;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j)
      id.data[4 * i + j] = static_cast<uint8_t>(digest[i] >> (24 - 8 * j));
  }
  id.data[8] = static_cast<uint8_t>((id.data[8] & 0xBF) | 0x80);  // RFC 4122 variant
  id.data[6] = static_cast<uint8_t>((id.data[6] & 0x0F) | 0x50);  // version 5
  return id;
}

}  // namespace

VertexId VertexIdFromExternalSlow(std::string_view external) {
  VertexId id;
  if (ParseUuid(external, id)) return id;
  boost::uuids::name_generator_sha1 gen(kNamespace);
  return gen(external.data(), external.size());
}

namespace internal {

bool HasShaExtensions() {
#if defined(__x86_64__)
  static const bool has = CpuHasSha();
  return has;
#else
  return false;
#endif
}

std::optional<VertexId> OneBlockV5(std::string_view name, bool sha_extensions) {
  if (name.size() > kOneBlockName || (sha_extensions && !HasShaExtensions())) return std::nullopt;
  return HashOneBlock(name, sha_extensions);
}

}  // namespace internal

bool ParseUuid(std::string_view text, VertexId& out) {
  if (text.size() != 36) return false;
  size_t byte = 0;
  for (size_t i = 0; i < 36;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    const int hi = HexValue(text[i]), lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.data[byte++] = static_cast<uint8_t>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

VertexId VertexIdFromExternal(std::string_view external) {
  VertexId id;
  if (ParseUuid(external, id)) return id;
#if defined(__x86_64__)
  if (external.size() <= kOneBlockName) return HashOneBlock(external, internal::HasShaExtensions());
#else
  if (external.size() <= kOneBlockName) return HashOneBlock(external, false);
#endif
  boost::uuids::name_generator_sha1 gen(kNamespace);
  return gen(external.data(), external.size());
}

std::string ToString(const VertexId& id) { return boost::uuids::to_string(id); }

}  // namespace lockstep::bsp
