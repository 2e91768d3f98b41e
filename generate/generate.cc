// Uniform random and R-MAT/Kronecker graph generators after the GAP Benchmark Suite
// (sbeamer/gapbs src/generator.h; R-MAT: Chakrabarti, Zhan, Faloutsos, SDM 2004, with the
// Graph500 parameters). Pipeline: generate 2^scale * degree edges in independently seeded blocks
// of 2^18, each edge packed as one 64-bit key (min << 32 | max); sort the keys in parallel; drop
// duplicates and self-loops; with --permute, relabel and sort again; format the text in parallel
// chunks and write them in order.

#include "lockstep/generate/generate.h"

#include <fcntl.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <new>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/bsp/output.h"

namespace lockstep::generate {
namespace {

constexpr int kMaxScale = 30;

// Edges per random stream, as in GAP. Each block is seeded from (seed, block index) alone, so the
// edge list does not depend on which thread runs which block.
constexpr int64_t kBlockSize = int64_t{1} << 18;

// Graph500 R-MAT quadrant probabilities A=0.57, B=0.19, C=0.19 (D=0.05) as cumulative 32-bit
// thresholds: one 64-bit draw then decides two levels of the recursion.
constexpr double kTwoTo32 = 4294967296.0;
constexpr uint64_t kThresholdA = static_cast<uint64_t>(0.57 * kTwoTo32);
constexpr uint64_t kThresholdAB = static_cast<uint64_t>((0.57 + 0.19) * kTwoTo32);
constexpr uint64_t kThresholdABC = static_cast<uint64_t>((0.57 + 0.19 + 0.19) * kTwoTo32);

// Self-loops become this key. It sorts after every real edge (u < v < 2^30) and survives
// deduplication at most once, so it is cut off the end instead of being filtered in a pass.
constexpr uint64_t kDropped = std::numeric_limits<uint64_t>::max();

// Stream ids below 2^63 are edge blocks; the other random streams live above them.
constexpr uint64_t kPermutationStream = uint64_t{1} << 63;
constexpr uint64_t kWeightStream = kPermutationStream + 1;
constexpr uint64_t kRelabelStream = kPermutationStream + 2;

// Output chunk: formatted in parallel, written in order.
constexpr size_t kEdgesPerChunk = size_t{1} << 16;
constexpr size_t kMaxLineBytes = 10 + 1 + 10 + 1 + 3 + 1;  // "u v w\n", ids < 2^30, w <= 255.

// The splitmix64 finaliser (Steele, Lea, Flood, OOPSLA 2014): a bijection that spreads every input
// bit over the output, used to derive seeds and weights.
uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t StreamSeed(uint64_t seed, uint64_t stream) { return Mix64(Mix64(seed) + stream); }

// xoshiro256** (Blackman, Vigna 2018), seeded through splitmix64 as its authors recommend. Not
// std::mt19937 with std::uniform_*_distribution as GAP uses: the distributions are
// implementation-defined, and the same options must give the same file on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& word : state_) {
      seed += 0x9e3779b97f4a7c15ULL;
      word = Mix64(seed);
    }
  }

  uint64_t Next() {
    const uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = std::rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound) without modulo bias (Lemire, "Fast Random Integer Generation in an
  // Interval", TOMACS 2019).
  uint32_t Below(uint32_t bound) {
    uint64_t product = (Next() >> 32) * bound;
    if (static_cast<uint32_t>(product) < bound) {
      const uint32_t threshold = (0u - bound) % bound;
      while (static_cast<uint32_t>(product) < threshold) product = (Next() >> 32) * bound;
    }
    return static_cast<uint32_t>(product >> 32);
  }

 private:
  std::array<uint64_t, 4> state_;
};

uint64_t EdgeKey(uint32_t a, uint32_t b) {
  if (a == b) return kDropped;
  if (a > b) std::swap(a, b);
  return uint64_t{a} << 32 | b;
}

// A hash of (seed, edge) rather than a draw from a stream, so an edge's weight does not depend on
// where it was generated, how often, or in which order edges are written.
uint32_t Weight(uint64_t weight_seed, uint64_t key) {
  const uint64_t hash = Mix64(weight_seed ^ key);
  return 1 + static_cast<uint32_t>(((hash >> 32) * 255) >> 32);
}

// Fills keys block by block: draw(rng) returns an edge as a raw pair (a << 32 | b), then
// to_key(pair) turns it into the final key. The second step runs as its own pass over the block
// because for Kronecker it is two random reads of the permutation: in a tight loop the CPU overlaps
// the cache misses of many edges, behind the long R-MAT descent it cannot (a third off the time).
template <typename Draw, typename ToKey>
void FillBlocks(std::span<uint64_t> keys, uint64_t seed, const Draw& draw, const ToKey& to_key) {
  const int64_t num_edges = static_cast<int64_t>(keys.size());
  const int64_t num_blocks = (num_edges + kBlockSize - 1) / kBlockSize;
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, num_blocks, 1),
                    [&](const tbb::blocked_range<int64_t>& blocks) {
                      for (int64_t block = blocks.begin(); block != blocks.end(); ++block) {
                        Rng rng(StreamSeed(seed, static_cast<uint64_t>(block)));
                        const int64_t begin = block * kBlockSize;
                        const int64_t end = std::min(num_edges, begin + kBlockSize);
                        for (int64_t e = begin; e < end; ++e) keys[e] = draw(rng);
                        for (int64_t e = begin; e < end; ++e) keys[e] = to_key(keys[e]);
                      }
                    });
}

uint64_t PairToKey(uint64_t pair) {
  return EdgeKey(static_cast<uint32_t>(pair >> 32), static_cast<uint32_t>(pair));
}

void FillUniform(std::span<uint64_t> keys, int scale, uint64_t seed) {
  // scale <= 30, so both endpoints come from one draw.
  const uint64_t mask = (uint64_t{1} << scale) - 1;
  FillBlocks(
      keys, seed, [mask](Rng& rng) { return rng.Next() & (mask << 32 | mask); }, PairToKey);
}

// Fisher-Yates. Serial, but it touches 2^scale entries against the 2^scale * degree edges
// generated in parallel.
std::vector<uint32_t> RandomPermutation(uint32_t size, uint64_t seed, uint64_t stream) {
  std::vector<uint32_t> permutation(size);
  std::iota(permutation.begin(), permutation.end(), 0u);
  Rng rng(StreamSeed(seed, stream));
  for (uint32_t i = size - 1; i > 0; --i) std::swap(permutation[i], permutation[rng.Below(i + 1)]);
  return permutation;
}

void FillKronecker(std::span<uint64_t> keys, int scale, uint64_t seed) {
  // R-MAT concentrates edges on low ids; relabelling spreads the hubs over the id space so range
  // partitioning is not handed all of them in one part (GAP does the same).
  const std::vector<uint32_t> permutation =
      RandomPermutation(uint32_t{1} << scale, seed, kPermutationStream);
  const auto draw = [scale](Rng& rng) {
    uint64_t src = 0;
    uint64_t dst = 0;
    // Each level picks a quadrant: A (0,0), B (0,1), C (1,0), D (1,1).
    const auto descend = [&src, &dst](uint64_t point) {
      src = src << 1 | static_cast<uint64_t>(point >= kThresholdAB);
      dst = dst << 1 | static_cast<uint64_t>((point >= kThresholdA) ^ (point >= kThresholdAB) ^
                                             (point >= kThresholdABC));
    };
    for (int level = 0; level < scale; level += 2) {
      const uint64_t bits = rng.Next();
      descend(bits & 0xffffffffULL);
      if (level + 1 < scale) descend(bits >> 32);
    }
    return src << 32 | dst;
  };
  FillBlocks(keys, seed, draw, [&permutation](uint64_t pair) {
    return EdgeKey(permutation[pair >> 32], permutation[static_cast<uint32_t>(pair)]);
  });
}

// The final edge list as sorted, distinct keys without self-loops.
std::vector<uint64_t> GenerateKeys(const GenerateOptions& options) {
  std::vector<uint64_t> keys(static_cast<size_t>(options.degree) << options.scale);
  if (options.kind == "kronecker") {
    FillKronecker(keys, options.scale, options.seed);
  } else {
    FillUniform(keys, options.scale, options.seed);
  }
  tbb::parallel_sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (!keys.empty() && keys.back() == kDropped) keys.pop_back();
  return keys;
}

// The way back from --permute's labels. An edge's weight is hashed from its key before the
// relabelling, so the weights follow their edges and a permuted graph is the same weighted graph.
struct Relabelling {
  std::vector<uint32_t> inverse;  // Empty: no relabelling, or no weights to carry.

  uint64_t OriginalKey(uint64_t key) const {
    if (inverse.empty()) return key;
    return EdgeKey(inverse[key >> 32], inverse[static_cast<uint32_t>(key)]);
  }
};

// Relabels the finished, sorted keys by a permutation from a stream of their own and sorts them
// again. A bijection makes no self-loop and no duplicate, so nothing is dropped.
Relabelling Relabel(std::vector<uint64_t>& keys, const GenerateOptions& options) {
  Relabelling relabelling;
  if (!options.permute) return relabelling;
  const uint32_t size = uint32_t{1} << options.scale;
  const std::vector<uint32_t> permutation = RandomPermutation(size, options.seed, kRelabelStream);
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, keys.size()), [&](const tbb::blocked_range<size_t>& range) {
        for (size_t i = range.begin(); i != range.end(); ++i) {
          keys[i] =
              EdgeKey(permutation[keys[i] >> 32], permutation[static_cast<uint32_t>(keys[i])]);
        }
      });
  tbb::parallel_sort(keys.begin(), keys.end());
  if (options.weights) {
    relabelling.inverse.resize(size);
    for (uint32_t x = 0; x < size; ++x) relabelling.inverse[permutation[x]] = x;
  }
  return relabelling;
}

absl::Status ValidateOptions(const GenerateOptions& options) {
  if (options.kind != "kronecker" && options.kind != "uniform") {
    return absl::InvalidArgumentError(
        "generator kind must be \"kronecker\" or \"uniform\", got \"" + options.kind + "\"");
  }
  if (options.scale < 1 || options.scale > kMaxScale) {
    return absl::InvalidArgumentError("--scale must be between 1 and " + std::to_string(kMaxScale) +
                                      ", got " + std::to_string(options.scale));
  }
  if (options.degree < 1) {
    return absl::InvalidArgumentError("--degree must be at least 1, got " +
                                      std::to_string(options.degree));
  }
  return absl::OkStatus();
}

absl::Status OutOfMemory(const GenerateOptions& options) {
  return absl::ResourceExhaustedError("not enough memory for 2^" + std::to_string(options.scale) +
                                      " * " + std::to_string(options.degree) +
                                      " generated edges; lower --scale or --degree");
}

// Writes path's contents under a temporary name beside it and renames it into place on Commit.
// Until then the destructor removes the temporary file, also when an exception unwinds, so a
// failed run leaves no debris and an existing file at path untouched. As WriteFileAtomically, only
// a regular file (or a new one) is replaced; a device, FIFO or /dev/stdout is written into.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path) : path_(std::move(path)) {}
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (created_ && !committed_) ::unlink(temp_path_.c_str());
  }

  absl::Status Open() {
    auto target = bsp::AtomicReplaceTarget(path_);
    if (!target.ok()) return target.status();
    if (!*target) {
      in_place_ = true;
      temp_path_ = path_;
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
      if (fd_ < 0) return absl::ErrnoToStatus(errno, "cannot write " + path_);
      return absl::OkStatus();
    }
    path_ = **target;
    temp_path_ = path_ + ".tmp-" + std::to_string(::getpid());
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) return absl::ErrnoToStatus(errno, "cannot create " + temp_path_);
    created_ = true;
    return absl::OkStatus();
  }

  absl::Status Write(std::string_view data) {
    while (!data.empty()) {
      const ssize_t written = ::write(fd_, data.data(), data.size());
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        return absl::ErrnoToStatus(written < 0 ? errno : EIO, "cannot write " + temp_path_);
      }
      data.remove_prefix(static_cast<size_t>(written));
    }
    return absl::OkStatus();
  }

  absl::Status Commit() {
    if (in_place_) {
      const int fd = std::exchange(fd_, -1);
      if (::close(fd) != 0) return absl::ErrnoToStatus(errno, "cannot write " + path_);
      return absl::OkStatus();
    }
    // fsync first: without it a crash soon after the rename can leave an empty file at path on
    // some filesystems, which is exactly what the temporary name is there to prevent.
    if (::fsync(fd_) != 0) return absl::ErrnoToStatus(errno, "cannot write " + temp_path_);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) return absl::ErrnoToStatus(errno, "cannot write " + temp_path_);
    if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
      return absl::ErrnoToStatus(errno, "cannot rename " + temp_path_ + " to " + path_);
    }
    committed_ = true;
    return absl::OkStatus();
  }

 private:
  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  bool in_place_ = false;
  bool created_ = false;
  bool committed_ = false;
};

size_t FormatEdges(std::span<const uint64_t> keys, bool weights, uint64_t weight_seed,
                   const Relabelling& relabelling, char* begin, char* end) {
  char* out = begin;
  for (const uint64_t key : keys) {
    out = std::to_chars(out, end, static_cast<uint32_t>(key >> 32)).ptr;
    *out++ = ' ';
    out = std::to_chars(out, end, static_cast<uint32_t>(key)).ptr;
    if (weights) {
      *out++ = ' ';
      out = std::to_chars(out, end, Weight(weight_seed, relabelling.OriginalKey(key))).ptr;
    }
    *out++ = '\n';
  }
  return static_cast<size_t>(out - begin);
}

// Formats chunks in parallel and writes them in order through a pipeline, so formatting overlaps
// the writes and at most a few chunks of text are held at once.
absl::Status WriteEdges(std::span<const uint64_t> keys, const GenerateOptions& options,
                        const Relabelling& relabelling, AtomicFile& file) {
  const uint64_t weight_seed = StreamSeed(options.seed, kWeightStream);
  const size_t num_chunks = (keys.size() + kEdgesPerChunk - 1) / kEdgesPerChunk;
  size_t next_chunk = 0;
  absl::Status status;  // Only the serial writer stage touches it.
  std::atomic<bool> failed{false};

  const auto next = [&](tbb::flow_control& control) -> size_t {
    if (next_chunk == num_chunks || failed.load(std::memory_order_relaxed)) {
      control.stop();
      return 0;
    }
    return next_chunk++;
  };
  const auto format = [&](size_t chunk) {
    const size_t begin = chunk * kEdgesPerChunk;
    const std::span<const uint64_t> part =
        keys.subspan(begin, std::min(kEdgesPerChunk, keys.size() - begin));
    std::string text(part.size() * kMaxLineBytes, '\0');
    text.resize(FormatEdges(part, options.weights, weight_seed, relabelling, text.data(),
                            text.data() + text.size()));
    return text;
  };
  const auto write = [&](const std::string& text) {
    if (!status.ok()) return;
    status = file.Write(text);
    if (!status.ok()) failed.store(true, std::memory_order_relaxed);
  };
  tbb::parallel_pipeline(
      2 * static_cast<size_t>(tbb::this_task_arena::max_concurrency()),
      tbb::make_filter<void, size_t>(tbb::filter_mode::serial_in_order, next) &
          tbb::make_filter<size_t, std::string>(tbb::filter_mode::parallel, format) &
          tbb::make_filter<std::string, void>(tbb::filter_mode::serial_in_order, write));
  return status;
}

}  // namespace

absl::StatusOr<std::vector<GeneratedEdge>> GenerateEdges(const GenerateOptions& options) {
  if (absl::Status status = ValidateOptions(options); !status.ok()) return status;
  try {
    std::vector<uint64_t> keys = GenerateKeys(options);
    const Relabelling relabelling = Relabel(keys, options);
    const uint64_t weight_seed = StreamSeed(options.seed, kWeightStream);
    std::vector<GeneratedEdge> edges(keys.size());
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, keys.size()), [&](const tbb::blocked_range<size_t>& range) {
          for (size_t i = range.begin(); i != range.end(); ++i) {
            const uint64_t key = keys[i];
            edges[i] = {static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key),
                        options.weights ? Weight(weight_seed, relabelling.OriginalKey(key)) : 0};
          }
        });
    return edges;
  } catch (const std::bad_alloc&) {
    return OutOfMemory(options);
  } catch (const std::length_error&) {
    return OutOfMemory(options);
  }
}

absl::Status Generate(const GenerateOptions& options) {
  if (absl::Status status = ValidateOptions(options); !status.ok()) return status;
  if (options.out.empty()) return absl::InvalidArgumentError("--out must name the output file");
  try {
    // Create the file before generating, so a bad path fails in milliseconds, not after the work.
    AtomicFile file(options.out);
    if (absl::Status status = file.Open(); !status.ok()) return status;
    std::vector<uint64_t> keys = GenerateKeys(options);
    const Relabelling relabelling = Relabel(keys, options);
    if (absl::Status status = WriteEdges(keys, options, relabelling, file); !status.ok()) {
      return status;
    }
    return file.Commit();
  } catch (const std::bad_alloc&) {
    return OutOfMemory(options);
  } catch (const std::length_error&) {
    return OutOfMemory(options);
  }
}

}  // namespace lockstep::generate
