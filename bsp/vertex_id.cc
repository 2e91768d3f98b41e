#include "lockstep/bsp/vertex_id.h"

// OpenSSL's SHA-1 uses the CPU's SHA extensions where present. Its one-call SHA1_* functions are
// deprecated in OpenSSL 3 in favour of EVP, whose per-call dispatch cost as much as Boost's
// generator (which feeds SHA-1 a byte at a time) on short names: 0.1 s of a scale-20 build.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <boost/uuid/uuid_io.hpp>
#include <charconv>
#include <cstdint>
#include <cstring>

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

// RFC 4122 §4.3: the first 16 bytes of SHA-1(namespace, name), version 5, RFC variant.
VertexId FromDigest(const unsigned char* digest) {
  VertexId id;
  std::memcpy(id.data, digest, sizeof(id.data));
  id.data[6] = static_cast<uint8_t>((id.data[6] & 0x0F) | 0x50);
  id.data[8] = static_cast<uint8_t>((id.data[8] & 0x3F) | 0x80);
  return id;
}

// The longest name whose SHA-1 with the namespace is one 64-byte block: the namespace, the name,
// the 0x80 that ends the message and its length in bits (8 bytes).
constexpr size_t kOneBlockName = 64 - sizeof(kNamespace.data) - 1 - 8;

// The same digest for such a name by one call of the compression, with the padding written here
// (FIPS 180-4 §5.1.1): the buffering calls cost about 10 ns more an ID, which a worker pays for
// every distinct ID of its share (bench/README.md).
VertexId HashOneBlock(const char* name, size_t n) {
  unsigned char block[64] = {};
  std::memcpy(block, kNamespace.data, sizeof(kNamespace.data));
  if (n > 0) std::memcpy(block + sizeof(kNamespace.data), name, n);  // (name may be null)
  block[sizeof(kNamespace.data) + n] = 0x80;
  const uint64_t bits = (sizeof(kNamespace.data) + n) * 8;
  for (int i = 0; i < 8; ++i) block[63 - i] = static_cast<unsigned char>(bits >> (8 * i));
  SHA_CTX ctx;
  SHA1_Init(&ctx);
  SHA1_Transform(&ctx, block);
  const SHA_LONG h[4] = {ctx.h0, ctx.h1, ctx.h2, ctx.h3};
  unsigned char digest[16];
  for (int i = 0; i < 4; ++i) {
    for (int b = 0; b < 4; ++b)
      digest[4 * i + b] = static_cast<unsigned char>(h[i] >> (24 - 8 * b));
  }
  return FromDigest(digest);
}

}  // namespace

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
  if (external.size() <= kOneBlockName) return HashOneBlock(external.data(), external.size());
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA_CTX ctx;
  SHA1_Init(&ctx);
  SHA1_Update(&ctx, kNamespace.data, sizeof(kNamespace.data));
  SHA1_Update(&ctx, external.data(), external.size());
  SHA1_Final(digest, &ctx);
  return FromDigest(digest);
}

VertexId VertexIdFromInteger(uint64_t value) {
  char text[24];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return HashOneBlock(text, static_cast<size_t>(end - text));
}

std::string ToString(const VertexId& id) { return boost::uuids::to_string(id); }

}  // namespace lockstep::bsp
