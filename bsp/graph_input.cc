// What the engine keeps of an input graph (graph_input.h): the reverses of a symmetric input,
// the order of external IDs, and reading a file whole.
#include "lockstep/bsp/graph_input.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {
namespace {

// Stores the reverse of every non-loop edge after the edges (see GraphInput).
void StoreReverseEdges(GraphInput& g) {
  // In parallel and in a fixed order: block b's reverses go after blocks 0..b-1's.
  const size_t m = g.src.size();
  const size_t block = 1 << 16;
  const size_t blocks = (m + block - 1) / block;
  std::vector<size_t> first(blocks + 1, 0);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    size_t n = 0;
    for (size_t i = b * block; i < std::min(m, (b + 1) * block); ++i) n += g.src[i] != g.dst[i];
    first[b + 1] = n;
  });
  for (size_t b = 0; b < blocks; ++b) first[b + 1] += first[b];
  const bool weighted = !g.weights.empty();
  g.src.resize(m + first[blocks]);
  g.dst.resize(m + first[blocks]);
  if (weighted) g.weights.resize(m + first[blocks]);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    size_t out = m + first[b];
    for (size_t i = b * block; i < std::min(m, (b + 1) * block); ++i) {
      if (g.src[i] == g.dst[i]) continue;
      g.src[out] = g.dst[i];
      g.dst[out] = g.src[i];
      if (weighted) g.weights[out] = g.weights[i];
      ++out;
    }
  });
}

}  // namespace

GraphInput WithReverseEdges(const GraphInput& input) {
  GraphInput g = input;
  if (g.symmetric) {
    StoreReverseEdges(g);
    g.symmetric = false;
    g.num_reverse = 0;
  }
  return g;
}

void MakeSymmetric(GraphInput& g) {
  const size_t m = g.src.size();
  const size_t block = 1 << 16;
  std::vector<size_t> loops((m + block - 1) / block, 0);
  tbb::parallel_for(size_t{0}, loops.size(), [&](size_t b) {
    size_t n = 0;
    for (size_t i = b * block; i < std::min(m, (b + 1) * block); ++i) n += g.src[i] == g.dst[i];
    loops[b] = n;
  });
  size_t total = 0;
  for (size_t n : loops) total += n;
  g.symmetric = true;
  g.num_reverse = m - total;
}

bool ParseIntegerId(std::string_view text, uint64_t& value) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

bool ExternalIdLess(std::string_view a, std::string_view b) {
  uint64_t x, y;
  const bool ai = ParseIntegerId(a, x);
  const bool bi = ParseIntegerId(b, y);
  if (ai != bi) return ai;
  if (ai) return x < y;
  return a < b;
}

bool HasVertex(const GraphInput& input, std::string_view external) {
  auto it = std::lower_bound(
      input.external_ids.begin(), input.external_ids.end(), external,
      [](const std::string& a, std::string_view b) { return ExternalIdLess(a, b); });
  return it != input.external_ids.end() && *it == external;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::string data;
  char buf[1 << 16];
  size_t n;
  // Reserve only what a regular file holds: fopen accepts a directory on Linux, and seeking to its
  // end reports LLONG_MAX on ext4, which made reserve() throw instead of this returning an error.
  struct stat info;
  if (::fstat(::fileno(f), &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    data.reserve(static_cast<size_t>(info.st_size));
  }
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return data;
}

}  // namespace lockstep::bsp
