// The partitioned form of a graph (partitioned_form.h, docs/design.md §4).
//
// A data file covers part k of Range::Whole(K) and holds, after a fixed header, first what a
// reader of the whole graph needs:
//   its vertices' global indexes and names, in UUID order;
//   its primary edges, those whose source is in its range, in input order: input position,
//     source and target as indexes into its ends table, weight;
//   the ends table's global indexes (every vertex its edges name, by global index);
// then what only a reader of a UUID range needs: its vertices' UUIDs, its secondary edges (whose
// target only is in its range), the ends' UUIDs. The names file holds every vertex's external ID
// by global index (an offset table, then the bytes), so that a worker reads the names of its
// slice of global indexes directly.
//
// An edge whose ends lie in two files is in both, primary in its source's. A range reader takes
// the primary copies, and a secondary copy only when its source's file is not among those it
// reads; those files cover one contiguous UUID range U, so "source outside U" picks each edge
// once. The lists, each in input order, are merged by input position.
//
// All integers are little-endian, as the header's byte-order mark checks.
#include "lockstep/load/partitioned_form.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <queue>
#include <random>
#include <span>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/bytes.h"
#include "lockstep/bsp/checksum.h"
#include "lockstep/bsp/collectives.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/bsp/oom_safe.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/load/partitioned_load.h"
#include "lockstep/partition/range.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"
#include "text/parse.h"
#include "text/share_reader.h"

namespace lockstep::load {
namespace {

using bsp::AgreeOnStatus;
using bsp::AllGather;
using bsp::ByteReader;
using bsp::Crc32c;
using bsp::Exchange;
using bsp::GraphInput;
using bsp::GraphSource;
using bsp::GrowOrAbandon;
using bsp::kNoVertex;
using bsp::ParseIntegerId;
using bsp::ParseUuid;
using bsp::PartVertices;
using bsp::Put;
using bsp::ReadFile;
using bsp::ReturnFreedMemory;
using bsp::ToString;
using bsp::VertexId;
using bsp::VertexIdFromExternal;
using bsp::WeightUse;

constexpr char kMagic[8] = {'L', 'S', 'P', 'A', 'R', 'T', 'S', '\n'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kKindData = 1;
constexpr uint32_t kKindNames = 2;
constexpr uint32_t kByteOrder = 0x01020304;
constexpr uint64_t kBlockBytes = uint64_t{1} << 20;
constexpr char kManifestMagic[] = "lockstep-parts";
// No count read from a file may exceed this, so that sizes computed from counts cannot overflow.
constexpr uint64_t kMaxCount = uint64_t{1} << 40;

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t kind;
  uint64_t graph_id;
  uint32_t part;
  uint32_t parts;
  uint64_t num_vertices;   // data: the file's vertices; names: all
  uint64_t num_primary;    // edges whose source is in the file's range
  uint64_t num_secondary;  // edges whose target only is
  uint64_t num_ends;
  uint64_t name_bytes;
  uint32_t weighted;
  uint32_t byte_order;
};
static_assert(sizeof(FileHeader) == 80);

uint64_t Pad8(uint64_t x) { return (x + 7) & ~uint64_t{7}; }

// Offsets of one list of edges: sequence numbers, ends, weights.
struct EdgeLayout {
  uint64_t seq, src, dst, weights;
};

EdgeLayout EdgesAt(uint64_t& at, uint64_t m, bool weighted) {
  EdgeLayout l;
  l.seq = at;
  at = Pad8(at + 4 * m);
  l.src = at;
  at = Pad8(at + 4 * m);
  l.dst = at;
  at = Pad8(at + 4 * m);
  l.weights = at;
  at += weighted ? 8 * m : 0;
  return l;
}

// Section offsets of a data file, from its header. What reading the whole graph needs (each
// vertex's global index and name, the edges whose source the file holds, the ends' global
// indexes) comes first, so that such a reader reads `prefix` bytes and no more.
struct DataLayout {
  uint64_t globals, name_offsets, names;
  EdgeLayout primary;
  uint64_t end_globals;
  uint64_t prefix;
  uint64_t uuids;
  EdgeLayout secondary;
  uint64_t end_uuids;
  uint64_t size;
};

DataLayout LayoutOf(const FileHeader& h) {
  const uint64_t n = h.num_vertices, e = h.num_ends;
  DataLayout l;
  uint64_t at = sizeof(FileHeader);
  l.globals = at;
  at = Pad8(at + 4 * n);
  l.name_offsets = at;
  at += 8 * (n + 1);
  l.names = at;
  at = Pad8(at + h.name_bytes);
  l.primary = EdgesAt(at, h.num_primary, h.weighted != 0);
  l.end_globals = at;
  at = Pad8(at + 4 * e);
  l.prefix = at;
  l.uuids = at;
  at += 16 * n;
  l.secondary = EdgesAt(at, h.num_secondary, h.weighted != 0);
  l.end_uuids = at;
  at += 16 * e;
  l.size = at;
  return l;
}

uint64_t NamesSize(const FileHeader& h) {
  return sizeof(FileHeader) + 8 * (h.num_vertices + 1) + h.name_bytes;
}

std::string Hex(uint64_t v) {
  char buf[17];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, 16);
  return std::string(buf, end);
}

absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// ---------------------------------------------------------------------------------------------
// The manifest.

struct FileEntry {
  std::string name;
  VertexId first{}, last{};              // data files: the UUID range
  uint64_t first_global = 0, count = 0;  // names files: the global indexes [first, first + count)
  uint64_t size = 0;
  std::vector<uint32_t> crcs;  // one per block
};

struct Manifest {
  std::string path;
  std::string dir;
  uint64_t graph_id = 0;
  uint64_t block_bytes = kBlockBytes;
  PartitionedFormFacts facts;
  std::vector<FileEntry> data;
  std::vector<FileEntry> names;  // in global-index order, covering [0, vertices)
};

std::string ManifestPath(const std::string& dir) { return dir + "/" + kFormManifestName; }

void PutFileLine(std::string& out, const char* kind, const FileEntry& f, bool with_range) {
  absl::StrAppend(&out, kind, " ", f.name);
  if (with_range) {
    absl::StrAppend(&out, " ", ToString(f.first), " ", ToString(f.last));
  } else {
    absl::StrAppend(&out, " ", f.first_global, " ", f.count);
  }
  absl::StrAppend(&out, " ", f.size, " ");
  for (size_t i = 0; i < f.crcs.size(); ++i) absl::StrAppend(&out, i ? "," : "", Hex(f.crcs[i]));
  out += "\n";
}

std::string EncodeManifest(const Manifest& m) {
  std::string out = absl::StrCat(kManifestMagic, " ", kVersion, "\n");
  absl::StrAppend(&out, "graph ", Hex(m.graph_id), "\n");
  absl::StrAppend(&out, "vertices ", m.facts.num_vertices, "\n");
  absl::StrAppend(&out, "stored-edges ", m.facts.num_stored_edges, "\n");
  absl::StrAppend(&out, "symmetric ", m.facts.symmetric ? 1 : 0, "\n");
  absl::StrAppend(&out, "weighted ", m.facts.weighted ? 1 : 0, "\n");
  absl::StrAppend(&out, "format ", m.facts.format, "\n");
  // Lengths first: a key or value may hold any byte.
  for (const auto& [k, v] : m.facts.properties) {
    absl::StrAppend(&out, "property ", k.size(), " ", v.size(), " ", k, v, "\n");
  }
  absl::StrAppend(&out, "block-bytes ", m.block_bytes, "\n");
  for (const FileEntry& f : m.data) PutFileLine(out, "data", f, true);
  for (const FileEntry& f : m.names) PutFileLine(out, "names", f, false);
  absl::StrAppend(&out, "end ", Hex(Crc32c(out)), "\n");
  return out;
}

// A cursor over the manifest's text.
class ManifestParser {
 public:
  explicit ManifestParser(std::string_view text) : text_(text) {}
  bool done() const { return at_ >= text_.size(); }
  size_t at() const { return at_; }
  // The next space- or newline-ended word.
  bool Word(std::string_view& w) {
    const size_t end = text_.find_first_of(" \n", at_);
    if (end == std::string_view::npos || end == at_) return false;
    w = text_.substr(at_, end - at_);
    at_ = end;
    return true;
  }
  bool Space() { return Expect(' '); }
  bool EndOfLine() { return Expect('\n'); }
  bool Bytes(size_t n, std::string_view& out) {
    if (text_.size() - at_ < n) return false;
    out = text_.substr(at_, n);
    at_ += n;
    return true;
  }
  template <class T>
  bool Number(T& v, int base = 10) {
    std::string_view w;
    if (!Word(w)) return false;
    auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), v, base);
    return ec == std::errc() && ptr == w.data() + w.size();
  }

 private:
  bool Expect(char c) {
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  std::string_view text_;
  size_t at_ = 0;
};

bool ParseFileLine(ManifestParser& p, bool with_range, FileEntry& f) {
  std::string_view name, crcs;
  if (!p.Space() || !p.Word(name)) return false;
  f.name = std::string(name);
  // A name is a plain file name in the directory, never a path out of it.
  if (f.name.find('/') != std::string::npos || f.name == "." || f.name == "..") return false;
  if (!with_range) {
    if (!p.Space() || !p.Number(f.first_global) || !p.Space() || !p.Number(f.count)) return false;
  } else {
    std::string_view a, b;
    if (!p.Space() || !p.Word(a) || !ParseUuid(a, f.first)) return false;
    if (!p.Space() || !p.Word(b) || !ParseUuid(b, f.last)) return false;
  }
  if (!p.Space() || !p.Number(f.size) || !p.Space() || !p.Word(crcs)) return false;
  while (!crcs.empty()) {
    const size_t comma = crcs.find(',');
    const std::string_view one = crcs.substr(0, comma);
    uint32_t crc;
    auto [ptr, ec] = std::from_chars(one.data(), one.data() + one.size(), crc, 16);
    if (ec != std::errc() || ptr != one.data() + one.size()) return false;
    f.crcs.push_back(crc);
    crcs = comma == std::string_view::npos ? std::string_view() : crcs.substr(comma + 1);
  }
  return p.EndOfLine();
}

absl::StatusOr<Manifest> ReadManifest(const std::string& dir) {
  Manifest m;
  m.dir = dir;
  m.path = ManifestPath(dir);
  struct stat info;
  if (::stat(m.path.c_str(), &info) != 0) {
    return absl::NotFoundError(
        absl::StrCat(dir, ": not a partitioned graph (no ", kFormManifestName, ")"));
  }
  auto text = ReadFile(m.path);
  if (!text.ok()) return text.status();
  auto bad = [&](std::string_view what) {
    return absl::DataLossError(absl::StrCat(m.path, ": ", Absl(what)));
  };
  ManifestParser p(*text);
  std::string_view magic;
  uint32_t version = 0;
  if (!p.Word(magic) || magic != kManifestMagic || !p.Space() || !p.Number(version) ||
      !p.EndOfLine()) {
    return bad("not a lockstep-parts manifest");
  }
  if (version != kVersion) {
    return absl::FailedPreconditionError(absl::StrCat(m.path, ": partitioned-graph format version ",
                                                      version, "; this build reads version ",
                                                      kVersion, " (partition the graph again)"));
  }
  // The checksum covers everything before its line; checked before any field is believed.
  const size_t end_line = text->rfind("\nend ");
  if (end_line == std::string::npos) return bad("truncated (no end line)");
  {
    ManifestParser tail(std::string_view(*text).substr(end_line + 5));
    uint32_t crc = 0;
    if (!tail.Number(crc, 16) || !tail.EndOfLine() || !tail.done()) {
      return bad("truncated or corrupt end line");
    }
    if (crc != Crc32c(std::string_view(text->data(), end_line + 1)))
      return bad("checksum mismatch (corrupt)");
  }
  while (p.at() < end_line + 1) {
    std::string_view key;
    if (!p.Word(key)) return bad("malformed line");
    bool ok = true;
    uint32_t flag = 0;
    if (key == "graph") {
      ok = p.Space() && p.Number(m.graph_id, 16);
    } else if (key == "vertices") {
      ok = p.Space() && p.Number(m.facts.num_vertices);
    } else if (key == "stored-edges") {
      ok = p.Space() && p.Number(m.facts.num_stored_edges);
    } else if (key == "symmetric") {
      ok = p.Space() && p.Number(flag) && flag <= 1;
      m.facts.symmetric = flag == 1;
    } else if (key == "weighted") {
      ok = p.Space() && p.Number(flag) && flag <= 1;
      m.facts.weighted = flag == 1;
    } else if (key == "format") {
      std::string_view f;
      ok = p.Space() && p.Word(f);
      m.facts.format = std::string(f);
    } else if (key == "property") {
      size_t kn = 0, vn = 0;
      std::string_view k, v;
      ok = p.Space() && p.Number(kn) && p.Space() && p.Number(vn) && p.Space() && p.Bytes(kn, k) &&
           p.Bytes(vn, v);
      m.facts.properties[std::string(k)] = std::string(v);
    } else if (key == "block-bytes") {
      ok = p.Space() && p.Number(m.block_bytes) && m.block_bytes > 0;
    } else if (key == "data") {
      m.data.emplace_back();
      ok = ParseFileLine(p, true, m.data.back());
      if (ok) continue;
    } else if (key == "names") {
      m.names.emplace_back();
      ok = ParseFileLine(p, false, m.names.back());
      if (ok) continue;
    } else {
      ok = false;
    }
    if (!ok || !p.EndOfLine()) return bad(absl::StrCat("malformed '", Absl(key), "' line"));
  }
  if (m.names.empty() || m.data.empty()) return bad("lists no files");
  if (m.facts.num_vertices >= kNoVertex || m.facts.num_stored_edges >= kNoVertex) {
    return bad("more than 2^32-1 vertices or edges");
  }
  // The data files must cut the whole UUID space in order, as Range::Whole does.
  auto split = partition::Range::Whole(m.data.size());
  if (!split.ok()) return bad("too many data files");
  for (size_t k = 0; k < m.data.size(); ++k) {
    auto ext = split->Extents(k);
    if (!ext.ok() || ext->first != m.data[k].first || ext->second != m.data[k].last) {
      return bad(absl::StrCat("data file ", m.data[k].name, " has the wrong UUID range"));
    }
  }
  uint64_t named = 0;
  for (const FileEntry& f : m.names) {
    if (f.crcs.size() != (f.size + m.block_bytes - 1) / m.block_bytes) {
      return bad(absl::StrCat("file ", f.name, ": wrong number of checksums"));
    }
    if (f.first_global != named) return bad("the names files do not follow each other");
    named += f.count;
  }
  if (named != m.facts.num_vertices) return bad("the names files do not cover every vertex");
  for (const FileEntry& f : m.data) {
    if (f.crcs.size() != (f.size + m.block_bytes - 1) / m.block_bytes) {
      return bad(absl::StrCat("file ", f.name, ": wrong number of checksums"));
    }
  }
  m.facts.num_shards = static_cast<uint32_t>(m.data.size());
  for (const FileEntry& f : m.data) m.facts.shard_bytes += f.size;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Checked reads.

// Bytes read from a file: on the heap (8-byte aligned, not zeroed), or mapped from the page
// cache (a data file: no copy, no zeroing, which halves the cost of reading one).
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(uint64_t size) : words_(new uint64_t[(size + 7) / 8]), size_(size) {}
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Unmap();
    words_ = std::move(o.words_);
    map_ = std::exchange(o.map_, nullptr);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }
  ~Buffer() { Unmap(); }
  // Maps bytes [0, size) of `fd`.
  static absl::StatusOr<Buffer> Map(int fd, uint64_t size, const std::string& path) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot map ", path, ": ", std::strerror(errno)));
    }
    Buffer b;
    b.map_ = static_cast<char*>(p);
    b.size_ = size;
    return b;
  }
  const char* data() const {
    return map_ != nullptr ? map_ : reinterpret_cast<const char*>(words_.get());
  }
  char* heap() { return reinterpret_cast<char*>(words_.get()); }
  uint64_t size() const { return size_; }

 private:
  void Unmap() {
    if (map_ != nullptr) ::munmap(map_, size_);
    map_ = nullptr;
  }
  std::unique_ptr<uint64_t[]> words_;
  char* map_ = nullptr;
  uint64_t size_ = 0;
};

class CheckedFile {
 public:
  CheckedFile(const Manifest& m, const FileEntry& f)
      : manifest_(m), entry_(f), path_(m.dir + "/" + f.name) {}
  ~CheckedFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  const std::string& path() const { return path_; }

  absl::Status Open() {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      return absl::NotFoundError(absl::StrCat(path_, ": cannot open (", std::strerror(errno),
                                              "); the partitioned graph in ", manifest_.dir,
                                              " is incomplete"));
    }
    struct stat info;
    if (::fstat(fd_, &info) != 0) {
      return absl::DataLossError(absl::StrCat(path_, ": cannot stat: ", std::strerror(errno)));
    }
    if (static_cast<uint64_t>(info.st_size) != entry_.size) {
      return absl::DataLossError(absl::StrCat(path_, ": ", info.st_size, " bytes, ",
                                              kFormManifestName, " says ", entry_.size,
                                              " (truncated or replaced)"));
    }
    return absl::OkStatus();
  }

  // Bytes [offset, offset + size) of the file, each block they touch read and checked against
  // the manifest. `out` is set to where they start in `buffer`. With `map`, the blocks are mapped
  // instead of copied (offset must then be 0).
  absl::Status Read(uint64_t offset, uint64_t size, Buffer& buffer, const char*& out,
                    bool map = false) const {
    if (offset > entry_.size || size > entry_.size - offset) {
      return absl::DataLossError(absl::StrCat(path_, ": a section runs past the end of the file"));
    }
    if (size == 0) {
      out = nullptr;
      return absl::OkStatus();
    }
    const uint64_t b = manifest_.block_bytes;
    const uint64_t first = offset / b;
    const uint64_t last = (offset + size + b - 1) / b;
    const uint64_t begin = first * b;
    const uint64_t end = std::min(entry_.size, last * b);
    if (map && begin == 0) {
      auto mapped = Buffer::Map(fd_, end, path_);
      if (!mapped.ok()) return mapped.status();
      buffer = std::move(*mapped);
    } else {
      buffer = Buffer(end - begin);
      uint64_t done = 0;
      while (done < end - begin) {
        const ssize_t n = ::pread(fd_, buffer.heap() + done, end - begin - done,
                                  static_cast<off_t>(begin + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          return absl::DataLossError(absl::StrCat(
              path_, ": cannot read: ", n == 0 ? "unexpected end of file" : std::strerror(errno)));
        }
        done += static_cast<uint64_t>(n);
      }
    }
    std::atomic<uint64_t> bad{UINT64_MAX};
    tbb::parallel_for(first, last, [&](uint64_t k) {
      const uint64_t from = k * b - begin;
      const uint64_t len = std::min(b, end - begin - from);
      if (Crc32c(std::string_view(buffer.data() + from, len)) != entry_.crcs[k]) {
        uint64_t seen = bad.load();
        while (k < seen && !bad.compare_exchange_weak(seen, k)) {
        }
      }
    });
    if (bad.load() != UINT64_MAX) {
      const uint64_t k = bad.load();
      return absl::DataLossError(absl::StrCat(path_, ": checksum mismatch in bytes [", k * b, ", ",
                                              std::min(entry_.size, (k + 1) * b),
                                              ") (the file is corrupt)"));
    }
    out = buffer.data() + (offset - begin);
    return absl::OkStatus();
  }

  // Reads and checks the header: this graph's, of `kind`, file `part` of its kind.
  absl::StatusOr<FileHeader> Header(uint32_t kind, uint32_t part) const {
    Buffer buf;
    const char* at = nullptr;
    if (auto st = Read(0, sizeof(FileHeader), buf, at); !st.ok()) return st;
    FileHeader h;
    std::memcpy(&h, at, sizeof h);
    auto bad = [&](std::string_view what) {
      return absl::DataLossError(absl::StrCat(path_, ": ", Absl(what)));
    };
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return bad("not a lockstep-parts file");
    if (h.byte_order != kByteOrder) return bad("written with another byte order");
    if (h.version != kVersion) {
      return absl::FailedPreconditionError(
          absl::StrCat(path_, ": format version ", h.version, ", this build reads ", kVersion));
    }
    if (h.graph_id != manifest_.graph_id) {
      return bad(absl::StrCat("belongs to another partitioned graph (not the one ",
                              kFormManifestName, " describes)"));
    }
    const size_t files = kind == kKindData ? manifest_.data.size() : manifest_.names.size();
    if (h.kind != kind || h.part != part || h.parts != files ||
        (kind == kKindNames && h.num_vertices != entry_.count)) {
      return bad("is not the file the manifest lists under this name");
    }
    if (h.num_vertices > kMaxCount || h.num_primary > kMaxCount || h.num_secondary > kMaxCount ||
        h.num_ends > kMaxCount || h.name_bytes > kMaxCount) {
      return bad("impossible counts in its header");
    }
    const uint64_t size = kind == kKindData ? LayoutOf(h).size : NamesSize(h);
    if (size != entry_.size) return bad("its sections do not add up to its size");
    return h;
  }

 private:
  const Manifest& manifest_;
  const FileEntry& entry_;
  std::string path_;
  int fd_ = -1;
};

// One list of a data file's edges.
struct EdgeView {
  const uint32_t* seq;
  const uint32_t* src;  // into the ends table
  const uint32_t* dst;
  const double* weights;
  uint64_t size;
};

// A data file, read and checked: all of it, or only what reading the whole graph needs.
struct DataFile {
  uint32_t part = 0;
  std::string path;
  VertexId first{}, last{};
  FileHeader h{};
  DataLayout l{};
  Buffer buf;

  template <class T>
  const T* At(uint64_t offset) const {
    return reinterpret_cast<const T*>(buf.data() + offset);
  }
  const uint32_t* globals() const { return At<uint32_t>(l.globals); }
  const uint64_t* name_offsets() const { return At<uint64_t>(l.name_offsets); }
  std::string_view name(uint64_t i) const {
    const uint64_t* o = name_offsets();
    return std::string_view(buf.data() + l.names + o[i], o[i + 1] - o[i]);
  }
  EdgeView Edges(const EdgeLayout& e, uint64_t size) const {
    return {At<uint32_t>(e.seq), At<uint32_t>(e.src), At<uint32_t>(e.dst), At<double>(e.weights),
            size};
  }
  // The edges whose source the file holds, and (a whole read only) those whose target only it
  // holds, each in input order.
  EdgeView primary() const { return Edges(l.primary, h.num_primary); }
  EdgeView secondary() const { return Edges(l.secondary, h.num_secondary); }
  const uint32_t* end_globals() const { return At<uint32_t>(l.end_globals); }
  // Not in a file read for the whole graph:
  const VertexId* uuids() const { return At<VertexId>(l.uuids); }
  const VertexId* end_uuids() const { return At<VertexId>(l.end_uuids); }
  bool Holds(const VertexId& id) const { return !(id < first) && !(last < id); }
};

absl::StatusOr<DataFile> ReadDataFile(const Manifest& m, uint32_t part, bool whole_graph) {
  const FileEntry& entry = m.data[part];
  CheckedFile file(m, entry);
  if (auto st = file.Open(); !st.ok()) return st;
  auto h = file.Header(kKindData, part);
  if (!h.ok()) return h.status();
  DataFile d;
  d.part = part;
  d.path = file.path();
  d.first = entry.first;
  d.last = entry.last;
  d.h = *h;
  d.l = LayoutOf(*h);
  const char* at = nullptr;
  const uint64_t bytes = whole_graph ? d.l.prefix : entry.size;
  if (auto st = file.Read(0, bytes, d.buf, at, true); !st.ok()) return st;
  // The sections are checked for what a reader indexes with them, so that a file that is
  // consistent with its checksums but not with itself (a writer's bug) fails instead of reading
  // out of bounds.
  auto bad = [&](std::string_view what) {
    return absl::DataLossError(absl::StrCat(d.path, ": ", Absl(what)));
  };
  if ((d.h.weighted != 0) != m.facts.weighted) return bad("weights disagree with the manifest");
  const uint64_t n = d.h.num_vertices, e = d.h.num_ends;
  const uint64_t* o = d.name_offsets();
  if (o[0] != 0 || o[n] != d.h.name_bytes) return bad("bad name table");
  for (uint64_t i = 0; i < n; ++i) {
    if (o[i + 1] < o[i]) return bad("bad name table");
    if (d.globals()[i] >= m.facts.num_vertices) return bad("a global index out of range");
  }
  for (uint64_t i = 0; i < e; ++i) {
    if (d.end_globals()[i] >= m.facts.num_vertices) return bad("a global index out of range");
  }
  auto check_edges = [&](const EdgeView& v) {
    for (uint64_t j = 0; j < v.size; ++j) {
      if (v.src[j] >= e || v.dst[j] >= e || v.seq[j] >= m.facts.num_stored_edges ||
          (j > 0 && v.seq[j] <= v.seq[j - 1])) {
        return false;
      }
    }
    return true;
  };
  if (!check_edges(d.primary())) return bad("an edge out of range or out of order");
  if (whole_graph) return d;
  if (!check_edges(d.secondary())) return bad("an edge out of range or out of order");
  for (uint64_t i = 0; i < n; ++i) {
    if (!d.Holds(d.uuids()[i]) || (i > 0 && !(d.uuids()[i - 1] < d.uuids()[i]))) {
      return bad("vertices out of order or out of its range");
    }
  }
  return d;
}

// Reads the data files `parts` in parallel; the error is that of the first failing file.
absl::StatusOr<std::vector<DataFile>> ReadDataFiles(const Manifest& m,
                                                    const std::vector<uint32_t>& parts,
                                                    bool whole_graph) {
  std::vector<DataFile> files(parts.size());
  std::vector<absl::Status> status(parts.size());
  tbb::parallel_for(size_t{0}, parts.size(), [&](size_t i) {
    auto d = ReadDataFile(m, parts[i], whole_graph);
    if (d.ok()) {
      files[i] = std::move(*d);
    } else {
      status[i] = d.status();
    }
  });
  for (const absl::Status& st : status) {
    if (!st.ok()) return st;
  }
  return files;
}

absl::StatusOr<Manifest> OpenSource(const GraphSource& source) {
  auto m = ReadManifest(source.path);
  if (!m.ok()) return m.status();
  if (source.undirected && !m->facts.symmetric) {
    return absl::InvalidArgumentError(
        absl::StrCat(source.path,
                     " was partitioned as a directed graph; partition the text again as "
                     "undirected to use it so"));
  }
  return m;
}

void FinishInput(const Manifest& m, WeightUse weights, GraphInput& g) {
  if (weights == WeightUse::kIgnore) std::vector<double>().swap(g.weights);
  g.directed = !m.facts.symmetric;
  g.properties = m.facts.properties;
  if (m.facts.symmetric) bsp::MakeSymmetric(g);
}

// ---------------------------------------------------------------------------------------------
// Writing.

absl::Status WriteWhole(const std::string& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  // On disk before the manifest names it.
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("cannot open ", dir, ": ", std::strerror(errno)));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0)
    return absl::InternalError(absl::StrCat("cannot sync ", dir, ": ", std::strerror(errno)));
  return absl::OkStatus();
}

std::vector<uint32_t> BlockCrcs(std::string_view data) {
  std::vector<uint32_t> crcs((data.size() + kBlockBytes - 1) / kBlockBytes);
  tbb::parallel_for(size_t{0}, crcs.size(), [&](size_t k) {
    const size_t from = k * kBlockBytes;
    crcs[k] = Crc32c(
        std::string_view(data.data() + from, std::min<size_t>(kBlockBytes, data.size() - from)));
  });
  return crcs;
}

template <class T>
void Append(std::string& out, const T* data, size_t n) {
  out.append(reinterpret_cast<const char*>(data), n * sizeof(T));
}
void PadTo8(std::string& out) { out.resize(Pad8(out.size()), '\0'); }

FileHeader MakeHeader(uint64_t graph_id, uint32_t kind) {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.kind = kind;
  h.graph_id = graph_id;
  h.byte_order = kByteOrder;
  return h;
}

// What a data file is written from: the whole graph (one process) or a worker's part of it.
struct EncodeSource {
  const std::vector<std::string>& names;  // by vertex (those the file holds at least)
  const std::vector<VertexId>& uuid;      // by vertex
  const std::vector<uint32_t>* global;    // by vertex; null: a vertex's index is its global one
  const std::vector<uint32_t>& src;       // stored edges
  const std::vector<uint32_t>& dst;
  const std::vector<double>& weights;  // by edge, if `weighted`
  bool weighted;
  const std::vector<uint32_t>* position;  // by edge; null: an edge's index is its position
  uint32_t Global(uint32_t v) const { return global != nullptr ? (*global)[v] : v; }
  uint32_t Position(uint32_t e) const { return position != nullptr ? (*position)[e] : e; }
};

// Data file `part`: `vertices` (sorted by UUID), `primary` (the stored edges whose source is in
// the part) and `secondary` (those whose target only is), in input order. Vertex indexes must
// be in global-index order.
std::string EncodeDataFile(const EncodeSource& g, uint64_t graph_id, uint32_t part, uint32_t parts,
                           const std::vector<uint32_t>& vertices,
                           const std::vector<uint32_t>& primary,
                           const std::vector<uint32_t>& secondary,
                           std::vector<uint32_t>& local_of) {
  // The ends table: every vertex the edges name, by global index.
  std::vector<uint32_t> ends;
  for (const std::vector<uint32_t>* edges : {&primary, &secondary}) {
    for (uint32_t e : *edges) {
      for (uint32_t v : {g.src[e], g.dst[e]}) {
        if (local_of[v] == kNoVertex) {
          local_of[v] = 0;
          ends.push_back(v);
        }
      }
    }
  }
  std::sort(ends.begin(), ends.end());
  for (uint32_t i = 0; i < ends.size(); ++i) local_of[ends[i]] = i;
  const bool weighted = g.weighted;
  FileHeader h = MakeHeader(graph_id, kKindData);
  h.part = part;
  h.parts = parts;
  h.num_vertices = vertices.size();
  h.num_primary = primary.size();
  h.num_secondary = secondary.size();
  h.num_ends = ends.size();
  h.weighted = weighted ? 1 : 0;
  for (uint32_t v : vertices) h.name_bytes += g.names[v].size();
  const DataLayout l = LayoutOf(h);
  std::string out;
  out.reserve(l.size);
  auto put_edges = [&](const std::vector<uint32_t>& edges) {
    for (uint32_t e : edges) {
      const uint32_t at = g.Position(e);
      Append(out, &at, 1);
    }
    PadTo8(out);
    for (uint32_t e : edges) Append(out, &local_of[g.src[e]], 1);
    PadTo8(out);
    for (uint32_t e : edges) Append(out, &local_of[g.dst[e]], 1);
    PadTo8(out);
    if (weighted) {
      for (uint32_t e : edges) Append(out, &g.weights[e], 1);
    }
  };
  Append(out, &h, 1);
  for (uint32_t v : vertices) {
    const uint32_t global = g.Global(v);
    Append(out, &global, 1);
  }
  PadTo8(out);
  uint64_t offset = 0;
  Append(out, &offset, 1);
  for (uint32_t v : vertices) {
    offset += g.names[v].size();
    Append(out, &offset, 1);
  }
  for (uint32_t v : vertices) out += g.names[v];
  PadTo8(out);
  put_edges(primary);
  for (uint32_t v : ends) {
    const uint32_t global = g.Global(v);
    Append(out, &global, 1);
  }
  PadTo8(out);
  for (uint32_t v : vertices) Append(out, &g.uuid[v], 1);
  put_edges(secondary);
  for (uint32_t v : ends) Append(out, &g.uuid[v], 1);
  for (uint32_t v : ends) local_of[v] = kNoVertex;
  return out;
}

// Names file `part` of `parts`: `names`, consecutive global indexes.
std::string EncodeNamesFile(const std::vector<std::string>& names, uint64_t graph_id, uint32_t part,
                            uint32_t parts) {
  FileHeader h = MakeHeader(graph_id, kKindNames);
  h.part = part;
  h.parts = parts;
  h.num_vertices = names.size();
  for (const std::string& n : names) h.name_bytes += n.size();
  std::string out;
  out.reserve(NamesSize(h));
  Append(out, &h, 1);
  uint64_t offset = 0;
  Append(out, &offset, 1);
  for (const std::string& n : names) {
    offset += n.size();
    Append(out, &offset, 1);
  }
  for (const std::string& n : names) out += n;
  return out;
}

std::string DataFileName(uint32_t part, uint32_t parts) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "part-%05u-of-%05u.lsp", part, parts);
  return buf;
}

std::string NamesFileName(uint32_t part, uint32_t parts) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "names-%05u-of-%05u.lsp", part, parts);
  return buf;
}

// Makes `dir` ready for a partitioned graph: new, empty, or holding only this writer's files (a
// partitioned graph being replaced, or what an interrupted writer left), whose names go to
// `old_files` and whose manifest is removed first.
absl::Status PrepareDir(const std::string& dir, std::vector<std::string>& old_files) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    if (!std::filesystem::is_directory(dir, ec)) {
      return absl::FailedPreconditionError(absl::StrCat(dir, " exists and is not a directory"));
    }
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      // A directory holding nothing but the writers' files may be written over.
      if (!IsFormFileName(name)) {
        return absl::FailedPreconditionError(
            absl::StrCat(dir, " exists and is not a partitioned graph (it holds ", name,
                         "; give a new or empty directory)"));
      }
      if (name != kFormManifestName) old_files.push_back(name);
    }
    if (ec) return absl::InternalError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
    if (IsPartitionedForm(dir)) {
      // The old manifest goes first: from here until the new one is in place, the directory is
      // not a partitioned graph, so no reader takes a mix of old and new files.
      if (::unlink(ManifestPath(dir).c_str()) != 0) {
        return absl::InternalError(
            absl::StrCat("cannot remove ", ManifestPath(dir), ": ", std::strerror(errno)));
      }
      if (auto st = SyncDir(dir); !st.ok()) return st;
    }
  } else if (!std::filesystem::create_directories(dir, ec)) {
    return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  }

  return absl::OkStatus();
}

// Writes the manifest, whole or not at all (a temporary file renamed into place), then removes
// the files of a replaced graph that this one does not use.
absl::Status CommitManifest(const Manifest& m, const std::vector<std::string>& old_files) {
  const std::string& dir = m.dir;
  const std::string tmp = ManifestPath(dir) + ".tmp";
  if (auto st = WriteWhole(tmp, EncodeManifest(m)); !st.ok()) return st;
  if (::rename(tmp.c_str(), ManifestPath(dir).c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot rename ", tmp, " to ", ManifestPath(dir), ": ", std::strerror(errno)));
  }
  if (auto st = SyncDir(dir); !st.ok()) return st;
  std::error_code ec;
  for (const std::string& name : old_files) {
    auto named = [&](const FileEntry& f) { return f.name == name; };
    const bool used = std::any_of(m.data.begin(), m.data.end(), named) ||
                      std::any_of(m.names.begin(), m.names.end(), named);
    if (!used) std::filesystem::remove(dir + "/" + name, ec);
  }
  return absl::OkStatus();
}

uint64_t RandomGraphId() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd();
}

// Appends the names of indexes [from, to) of names file k (integer IDs, then the others: the
// order of global indexes).
absl::Status ReadNames(const Manifest& m, uint32_t k, uint64_t from, uint64_t to,
                       std::vector<uint64_t>& ints, std::vector<std::string>& texts) {
  CheckedFile names(m, m.names[k]);
  if (auto st = names.Open(); !st.ok()) return st;
  auto h = names.Header(kKindNames, k);
  if (!h.ok()) return h.status();
  Buffer obuf, nbuf;
  const char* ob = nullptr;
  const char* nb = nullptr;
  if (auto st = names.Read(sizeof(FileHeader) + 8 * from, 8 * (to - from + 1), obuf, ob);
      !st.ok()) {
    return st;
  }
  std::vector<uint64_t> offsets(to - from + 1);
  std::memcpy(offsets.data(), ob, 8 * offsets.size());
  for (size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1] || offsets[i] > h->name_bytes) {
      return absl::DataLossError(absl::StrCat(names.path(), ": bad name table"));
    }
  }
  if (auto st = names.Read(sizeof(FileHeader) + 8 * (h->num_vertices + 1) + offsets.front(),
                           offsets.back() - offsets.front(), nbuf, nb);
      !st.ok()) {
    return st;
  }
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    const std::string_view name(nb + (offsets[i] - offsets.front()), offsets[i + 1] - offsets[i]);
    uint64_t value;
    if (texts.empty() && ParseIntegerId(name, value)) {
      ints.push_back(value);
    } else {
      texts.emplace_back(name);
    }
  }
  return absl::OkStatus();
}

// Checks names file k as a worker's reading of it would (its size, header and name table, the
// checksum of every block), and that it names its vertices as the data files do (`names`, by
// global index): the whole-graph reader takes the names from the data files, and a damaged names
// file must fail it as it fails the workers.
absl::Status CheckNamesFile(const Manifest& m, uint32_t k, const std::vector<std::string>& names) {
  CheckedFile file(m, m.names[k]);
  if (auto st = file.Open(); !st.ok()) return st;
  auto h = file.Header(kKindNames, k);
  if (!h.ok()) return h.status();
  Buffer buf;
  const char* at = nullptr;
  if (auto st = file.Read(0, m.names[k].size, buf, at, true); !st.ok()) return st;
  const uint64_t n = h->num_vertices, first = m.names[k].first_global;
  const auto* o = reinterpret_cast<const uint64_t*>(at + sizeof(FileHeader));
  const char* bytes = at + sizeof(FileHeader) + 8 * (n + 1);
  if (o[0] != 0 || o[n] != h->name_bytes) {
    return absl::DataLossError(absl::StrCat(file.path(), ": bad name table"));
  }
  std::atomic<uint64_t> bad{UINT64_MAX};
  tbb::parallel_for(uint64_t{0}, n, [&](uint64_t i) {
    if (o[i + 1] < o[i] || o[i + 1] > h->name_bytes ||
        std::string_view(bytes + o[i], o[i + 1] - o[i]) != names[first + i]) {
      uint64_t seen = bad.load();
      while (i < seen && !bad.compare_exchange_weak(seen, i)) {
      }
    }
  });
  if (bad.load() != UINT64_MAX) {
    return absl::DataLossError(absl::StrCat(file.path(), ": the name of vertex ",
                                            first + bad.load(),
                                            " is not the one the data files give"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// The distributed writer.

// Worker `rank` of `size`'s share of `path` (a file, or a directory's edge-list files read as one
// input), as the partitioned load cuts it (text::ShareReader); only the share is read.
absl::StatusOr<std::string> ReadShare(const std::string& path, uint32_t rank, uint32_t size) {
  text::ShareReader reader;
  if (auto st = reader.Open(path, rank, size, /*directories=*/true); !st.ok()) return st;
  return reader.Next(std::numeric_limits<uint64_t>::max());
}

// One file's entry, as a worker tells worker 0.
void PutEntry(std::string& out, const FileEntry& f) {
  Put(out, static_cast<uint64_t>(f.name.size()));
  out += f.name;
  Put(out, f.first_global);
  Put(out, f.count);
  Put(out, f.size);
  Put(out, static_cast<uint64_t>(f.crcs.size()));
  for (uint32_t c : f.crcs) Put(out, c);
}

bool GetEntry(ByteReader& in, FileEntry& f) {
  uint64_t n = 0, crcs = 0;
  std::string_view name;
  if (!in.Get(n) || !in.GetBytes(n, name)) return false;
  f.name = std::string(name);
  if (!in.Get(f.first_global) || !in.Get(f.count) || !in.Get(f.size) || !in.Get(crcs) ||
      in.rest().size() < crcs * sizeof(uint32_t)) {
    return false;
  }
  f.crcs.resize(crcs);
  for (uint32_t& c : f.crcs) in.Get(c);
  return true;
}

// A worker's share of the distributed write, up to its files (WritePartitionedFormDistributed).
class DistributedWriter {
 public:
  DistributedWriter(const GraphSource& source, Exchange& exchange, const std::string& dir)
      : source_(source),
        exchange_(exchange),
        dir_(dir),
        rank_(exchange.rank()),
        size_(exchange.size()) {}

  absl::Status Run();

 private:
  // The input position of each of the part's stored edges.
  absl::Status Positions(const std::string& edge_file);
  absl::Status WriteFiles();

  const GraphSource& source_;
  Exchange& exchange_;
  const std::string& dir_;
  uint32_t rank_, size_;
  uint64_t graph_id_ = 0;
  PartitionInput part_;
  std::vector<uint32_t> position_;
  uint64_t total_edges_ = 0;
  bool weighted_ = false;  // the graph's (a worker without edges has no weights)
  std::string format_;
  FileEntry data_, names_;
};

absl::Status DistributedWriter::Positions(const std::string& edge_file) {
  // This worker's share of the edge file, parsed as the partitioned load parses it (it has
  // loaded, so every line that is not blank or a comment is an edge), routed as it routes: to
  // the owner of the source, and to the owner of the target if another.
  auto share = ReadShare(edge_file, rank_, size_);
  absl::Status read = share.status();
  auto split = partition::Range::Whole(size_);
  if (!split.ok()) return split.status();
  std::vector<std::string> out(size_);
  uint32_t count = 0;
  if (share.ok()) {
    absl::flat_hash_map<std::string, uint32_t> owner;
    auto owner_of = [&](std::string_view id) {
      auto it = owner.find(absl::string_view(id.data(), id.size()));
      if (it != owner.end()) return it->second;
      const uint32_t p =
          static_cast<uint32_t>(split->PartitionForUnchecked(VertexIdFromExternal(id)));
      GrowOrAbandon(owner, [&] { return owner.emplace(std::string(id), p); });
      return p;
    };
    std::string_view text = *share;
    while (!text.empty()) {
      const size_t nl = text.find('\n');
      const std::string_view line = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
      std::string_view tok[3];
      const size_t n = text::Tokenize(line, tok, 3);
      if (n == 0 || text::IsComment(tok[0])) continue;
      if (n < 2) {
        read =
            absl::InternalError(absl::StrCat(edge_file, ": a line the load took is not an edge"));
        break;
      }
      const uint32_t ps = owner_of(tok[0]), pd = owner_of(tok[1]);
      Put(out[ps], count);
      if (pd != ps) Put(out[pd], count);
      ++count;
    }
  }
  if (auto st = AgreeOnStatus(exchange_, read); !st.ok()) return st;
  std::string mine;
  Put(mine, count);
  auto counts = AllGather(exchange_, mine);
  if (!counts.ok()) return counts.status();
  std::vector<uint64_t> base(size_ + 1, 0);
  for (uint32_t p = 0; p < size_; ++p) {
    ByteReader in((*counts)[p]);
    uint32_t c = 0;
    if (!in.Get(c)) return absl::InternalError("partitioned write: a malformed count");
    base[p + 1] = base[p] + c;
  }
  total_edges_ = base[size_];
  auto in = exchange_.AllToAll(std::move(out));
  if (!in.ok()) return in.status();
  // Senders are shares in file order and each sends in its order: the concatenation is the
  // order of the part's edges.
  position_.reserve(part_.input.num_stored_edges());
  for (uint32_t p = 0; p < size_; ++p) {
    ByteReader from((*in)[p]);
    uint32_t index = 0;
    while (from.Get(index)) position_.push_back(static_cast<uint32_t>(base[p] + index));
  }
  absl::Status match = position_.size() == part_.input.num_stored_edges()
                           ? absl::OkStatus()
                           : absl::InternalError(absl::StrCat(
                                 "partitioned write: ", position_.size(), " positions for ",
                                 part_.input.num_stored_edges(), " edges"));
  return AgreeOnStatus(exchange_, match);
}

absl::Status DistributedWriter::WriteFiles() {
  const PartVertices& pv = part_.vertices;
  const GraphInput& g = part_.input;
  const uint32_t n = static_cast<uint32_t>(pv.uuids.size());
  auto split = partition::Range::Whole(size_);
  if (!split.ok()) return split.status();
  auto range = split->Extents(rank_);
  if (!range.ok()) return range.status();
  // The owned vertices (with their names) in UUID order; every vertex's name slot, filled for
  // the owned ones.
  std::vector<std::string> names(n);
  std::vector<uint8_t> owned(n, 0);
  std::vector<uint32_t> vertices;
  size_t next_name = 0;
  for (uint32_t v = 0; v < n; ++v) {
    if (pv.uuids[v] < range->first || range->second < pv.uuids[v]) continue;
    owned[v] = 1;
    vertices.push_back(v);
    if (next_name >= pv.owned_names.size()) return absl::InternalError("names out of step");
    names[v] = pv.owned_names[next_name++];
  }
  std::sort(vertices.begin(), vertices.end(),
            [&](uint32_t a, uint32_t b) { return pv.uuids[a] < pv.uuids[b]; });
  std::vector<uint32_t> primary, secondary;
  for (uint32_t e = 0; e < g.src.size(); ++e) {
    (owned[g.src[e]] ? primary : secondary).push_back(e);
  }
  std::vector<uint32_t> local_of(n, kNoVertex);
  const EncodeSource es{names, pv.uuids,  &pv.global, g.src,
                        g.dst, g.weights, weighted_,  &position_};
  std::string bytes =
      EncodeDataFile(es, graph_id_, rank_, size_, vertices, primary, secondary, local_of);
  data_.name = DataFileName(rank_, size_);
  data_.first = range->first;
  data_.last = range->second;
  data_.size = bytes.size();
  data_.crcs = BlockCrcs(bytes);
  if (auto st = WriteWhole(dir_ + "/" + data_.name, bytes); !st.ok()) return st;
  // The names of this worker's range of global indexes.
  const RankNames& rn = part_.names;
  std::vector<std::string> slice(rn.size());
  for (uint64_t i = 0; i < rn.size(); ++i) rn.Append(rn.first() + i, slice[i]);
  bytes = EncodeNamesFile(slice, graph_id_, rank_, size_);
  names_.name = NamesFileName(rank_, size_);
  names_.first_global = rn.first();
  names_.count = rn.size();
  names_.size = bytes.size();
  names_.crcs = BlockCrcs(bytes);
  return WriteWhole(dir_ + "/" + names_.name, bytes);
}

absl::Status DistributedWriter::Run() {
  // Worker 0 prepares the directory and draws the graph's identity; everyone learns both.
  std::vector<std::string> old_files;
  absl::Status prepared;
  std::string id;
  if (rank_ == 0) {
    prepared = PrepareDir(dir_, old_files);
    Put(id, RandomGraphId());
  }
  if (auto st = AgreeOnStatus(exchange_, prepared); !st.ok()) return st;
  auto ids = AllGather(exchange_, id);
  if (!ids.ok()) return ids.status();
  ByteReader first((*ids)[0]);
  if (!first.Get(graph_id_)) return absl::InternalError("partitioned write: no graph id");

  // The edges as a GraphInput's arrays: the writer reads them by stored edge.
  auto part = LoadPartitionFromText(source_, WeightUse::kNonNegative, exchange_, /*in_edges=*/true,
                                    {.packed_edges = false});
  if (!part.ok()) return part.status();
  part_ = std::move(*part);
  // What the assembly freed goes back before the files are encoded (a job's build does so
  // before its CSR).
  ReturnFreedMemory();
  std::string edge_file = source_.path;
  format_ = "edgelist";
  if (IsGraphalytics(source_)) {
    auto files = text::ResolveGraphalytics(source_);
    if (!files.ok()) return files.status();  // the load read them: the same on every worker
    edge_file = files->edge_file;
    format_ = "graphalytics";
  }
  if (auto st = Positions(edge_file); !st.ok()) return st;
  std::string weights;
  Put(weights, static_cast<uint8_t>(part_.input.weights.empty() ? 0 : 1));
  auto weighted = AllGather(exchange_, weights);
  if (!weighted.ok()) return weighted.status();
  for (const std::string& w : *weighted) weighted_ = weighted_ || (!w.empty() && w[0] != 0);
  if (auto st = AgreeOnStatus(exchange_, WriteFiles()); !st.ok()) return st;

  // Everything worker 0 needs for the manifest.
  std::string mine;
  PutEntry(mine, data_);
  PutEntry(mine, names_);
  auto all = AllGather(exchange_, mine);
  if (!all.ok()) return all.status();
  absl::Status committed;
  if (rank_ == 0) {
    Manifest m;
    m.dir = dir_;
    m.graph_id = graph_id_;
    m.facts.num_vertices = part_.vertices.num_global;
    m.facts.num_stored_edges = total_edges_;
    m.facts.symmetric = part_.input.symmetric;
    m.facts.weighted = weighted_;
    m.facts.format = format_;
    m.facts.properties = part_.input.properties;
    for (uint32_t p = 0; p < size_ && committed.ok(); ++p) {
      ByteReader in((*all)[p]);
      FileEntry data, names;
      if (!GetEntry(in, data) || !GetEntry(in, names)) {
        committed = absl::InternalError("partitioned write: a malformed file entry");
        break;
      }
      auto split = partition::Range::Whole(size_);
      auto ext = split->Extents(p);
      data.first = ext->first;
      data.last = ext->second;
      m.data.push_back(std::move(data));
      m.names.push_back(std::move(names));
    }
    if (committed.ok()) committed = CommitManifest(m, old_files);
  }
  return AgreeOnStatus(exchange_, committed);
}

}  // namespace

absl::StatusOr<PartitionedFormFacts> ReadPartitionedFormFacts(const std::string& dir) {
  auto m = ReadManifest(dir);
  if (!m.ok()) return m.status();
  return m->facts;
}

absl::Status WritePartitionedForm(const GraphInput& g, const std::string& dir,
                                  const PartitionedFormOptions& options) {
  const uint32_t parts = options.shards;
  if (parts == 0 || parts > (uint32_t{1} << 16)) {
    return absl::InvalidArgumentError("partitioned graph: the number of parts must be 1..65536");
  }
  if (g.num_vertices() >= kNoVertex || g.num_stored_edges() >= kNoVertex) {
    return absl::OutOfRangeError("partitioned graph: more than 2^32-1 vertices or edges");
  }
  if (!g.weights.empty() && g.weights.size() != g.src.size()) {
    return absl::InvalidArgumentError("partitioned graph: weights do not match the edges");
  }
  std::vector<std::string> old_files;
  if (auto st = PrepareDir(dir, old_files); !st.ok()) return st;

  Manifest m;
  m.dir = dir;
  m.graph_id = RandomGraphId();
  m.facts.num_vertices = g.num_vertices();
  m.facts.num_stored_edges = g.num_stored_edges();
  m.facts.symmetric = g.symmetric;
  m.facts.weighted = !g.weights.empty();
  m.facts.format = options.format.empty() ? "edgelist" : options.format;
  m.facts.properties = g.properties;

  const uint32_t n = static_cast<uint32_t>(g.num_vertices());
  std::vector<VertexId> uuid(n);
  tbb::parallel_for(uint32_t{0}, n,
                    [&](uint32_t v) { uuid[v] = VertexIdFromExternal(g.external_ids[v]); });
  auto split = partition::Range::Whole(parts);
  if (!split.ok()) return split.status();
  std::vector<uint32_t> part_of(n);
  tbb::parallel_for(uint32_t{0}, n,
                    [&](uint32_t v) { part_of[v] = split->PartitionForUnchecked(uuid[v]); });
  std::vector<std::vector<uint32_t>> vertices(parts), primary(parts), secondary(parts);
  for (uint32_t v = 0; v < n; ++v) vertices[part_of[v]].push_back(v);
  for (auto& vs : vertices) {
    tbb::parallel_sort(vs.begin(), vs.end(),
                       [&](uint32_t a, uint32_t b) { return uuid[a] < uuid[b]; });
  }
  {
    std::vector<uint64_t> count(parts, 0), count2(parts, 0);
    for (size_t e = 0; e < g.src.size(); ++e) {
      const uint32_t a = part_of[g.src[e]], b = part_of[g.dst[e]];
      ++count[a];
      if (b != a) ++count2[b];
    }
    for (uint32_t k = 0; k < parts; ++k) {
      primary[k].reserve(count[k]);
      secondary[k].reserve(count2[k]);
    }
    for (size_t e = 0; e < g.src.size(); ++e) {
      const uint32_t a = part_of[g.src[e]], b = part_of[g.dst[e]];
      primary[a].push_back(static_cast<uint32_t>(e));
      if (b != a) secondary[b].push_back(static_cast<uint32_t>(e));
    }
  }
  part_of = {};
  std::vector<uint32_t> local_of(n, kNoVertex);
  for (uint32_t k = 0; k < parts; ++k) {
    FileEntry f;
    f.name = DataFileName(k, parts);
    auto ext = split->Extents(k);
    if (!ext.ok()) return ext.status();
    f.first = ext->first;
    f.last = ext->second;
    const EncodeSource source{g.external_ids,     uuid,   nullptr, g.src, g.dst, g.weights,
                              !g.weights.empty(), nullptr};
    std::string bytes = EncodeDataFile(source, m.graph_id, k, parts, vertices[k], primary[k],
                                       secondary[k], local_of);
    std::vector<uint32_t>().swap(vertices[k]);
    std::vector<uint32_t>().swap(primary[k]);
    std::vector<uint32_t>().swap(secondary[k]);
    f.size = bytes.size();
    f.crcs = BlockCrcs(bytes);
    if (auto st = WriteWhole(dir + "/" + f.name, bytes); !st.ok()) return st;
    m.data.push_back(std::move(f));
  }
  {
    std::string bytes = EncodeNamesFile(g.external_ids, m.graph_id, 0, 1);
    FileEntry f;
    f.name = NamesFileName(0, 1);
    f.first_global = 0;
    f.count = g.num_vertices();
    f.size = bytes.size();
    f.crcs = BlockCrcs(bytes);
    if (auto st = WriteWhole(dir + "/" + f.name, bytes); !st.ok()) return st;
    m.names.push_back(std::move(f));
  }
  return CommitManifest(m, old_files);
}

absl::Status WritePartitionedFormDistributed(const GraphSource& source, Exchange& exchange,
                                             const std::string& dir) {
  DistributedWriter writer(source, exchange, dir);
  return writer.Run();
}

absl::StatusOr<GraphInput> LoadPartitionedForm(const GraphSource& source, WeightUse weights) {
  auto m = OpenSource(source);
  if (!m.ok()) return m.status();
  const uint64_t n = m->facts.num_vertices, edges = m->facts.num_stored_edges;
  std::vector<uint32_t> all(m->data.size());
  for (uint32_t k = 0; k < all.size(); ++k) all[k] = k;
  auto files = ReadDataFiles(*m, all, true);
  if (!files.ok()) return files.status();
  GraphInput g;
  g.external_ids.resize(n);
  g.src.resize(edges);
  g.dst.resize(edges);
  const bool weighted = m->facts.weighted && weights != WeightUse::kIgnore;
  if (weighted) g.weights.resize(edges);
  // Every vertex is in the file of its UUID, and every edge is taken from its source's file (only
  // the part of each file before its secondary edges is read):
  // each lands at its global index or its position in the input exactly once.
  std::vector<uint64_t> vertices_of(files->size(), 0), edges_of(files->size(), 0);
  tbb::parallel_for(size_t{0}, files->size(), [&](size_t i) {
    const DataFile& d = (*files)[i];
    for (uint64_t v = 0; v < d.h.num_vertices; ++v) {
      g.external_ids[d.globals()[v]] = std::string(d.name(v));
    }
    vertices_of[i] = d.h.num_vertices;
    const EdgeView p = d.primary();
    const uint32_t* eg = d.end_globals();
    for (uint64_t j = 0; j < p.size; ++j) {
      const uint32_t at = p.seq[j];
      g.src[at] = eg[p.src[j]];
      g.dst[at] = eg[p.dst[j]];
      if (weighted) g.weights[at] = p.weights[j];
    }
    const uint64_t taken = p.size;
    edges_of[i] = taken;
  });
  uint64_t nv = 0, ne = 0;
  for (size_t i = 0; i < files->size(); ++i) {
    nv += vertices_of[i];
    ne += edges_of[i];
  }
  if (nv != n || ne != edges) {
    return absl::DataLossError(absl::StrCat(m->path, ": the data files hold ", nv, " vertices and ",
                                            ne, " edges, the manifest says ", n, " and ", edges));
  }
  for (uint32_t k = 0; k < m->names.size(); ++k) {
    if (auto st = CheckNamesFile(*m, k, g.external_ids); !st.ok()) return st;
  }
  FinishInput(*m, weights, g);
  return g;
}

absl::StatusOr<PartitionInput> ReadPartitionedForm(const GraphSource& source, WeightUse weights,
                                                   uint32_t workers, uint32_t rank, bool in_edges) {
  auto m = OpenSource(source);
  if (!m.ok()) return m.status();
  auto split = partition::Range::Whole(workers);
  if (!split.ok()) return split.status();
  auto range = split->Extents(rank);
  if (!range.ok()) return range.status();
  const VertexId lo = range->first, hi = range->second;
  auto owns = [&](const VertexId& id) { return !(id < lo) && !(hi < id); };
  // The files overlapping the worker's range: a contiguous run, covering U.
  std::vector<uint32_t> parts;
  for (uint32_t k = 0; k < m->data.size(); ++k) {
    if (!(m->data[k].last < lo) && !(hi < m->data[k].first)) parts.push_back(k);
  }
  if (parts.empty()) return absl::InternalError("partitioned graph: no file covers the range");
  const VertexId u_first = m->data[parts.front()].first, u_last = m->data[parts.back()].last;
  auto in_u = [&](const VertexId& id) { return !(id < u_first) && !(u_last < id); };
  auto files = ReadDataFiles(*m, parts, false);
  if (!files.ok()) return files.status();
  const bool both_ends = in_edges || m->facts.symmetric;

  // Per file: the owned vertices, the edges taken from each list (in input order) and the ends
  // they use.
  struct Taken {
    uint64_t vb = 0, ve = 0;
    std::vector<uint32_t> edges[2];  // primary, secondary
    std::vector<uint8_t> end_used;
    std::vector<uint32_t> end_pos;
  };
  std::vector<Taken> taken(files->size());
  tbb::parallel_for(size_t{0}, files->size(), [&](size_t i) {
    const DataFile& d = (*files)[i];
    Taken& t = taken[i];
    const VertexId* begin = d.uuids();
    const VertexId* end = begin + d.h.num_vertices;
    t.vb = std::lower_bound(begin, end, lo) - begin;
    t.ve = std::upper_bound(begin, end, hi) - begin;
    const uint64_t e = d.h.num_ends;
    std::vector<uint8_t> flags(e);  // bit 0: owned; bit 1: in U
    for (uint64_t x = 0; x < e; ++x) {
      const VertexId& id = d.end_uuids()[x];
      flags[x] = (owns(id) ? 1 : 0) | (in_u(id) ? 2 : 0);
    }
    t.end_used.assign(e, 0);
    for (int list = 0; list < 2; ++list) {
      const EdgeView v = list == 0 ? d.primary() : d.secondary();
      for (uint64_t j = 0; j < v.size; ++j) {
        const uint8_t s = flags[v.src[j]], t_flags = flags[v.dst[j]];
        if (!((s & 1) || (both_ends && (t_flags & 1)))) continue;
        // A secondary edge's source is in another file: the copy there is taken if this worker
        // reads that file.
        if (list == 1 && (s & 2)) continue;
        t.edges[list].push_back(static_cast<uint32_t>(j));
        t.end_used[v.src[j]] = 1;
        t.end_used[v.dst[j]] = 1;
      }
    }
  });

  // The vertices: owned ones and the remote ends of the edges, by global index.
  struct Entry {
    uint32_t global;
    uint32_t file;
    uint64_t index;  // in the file's vertices if owned, else in its ends table
    bool owned;
  };
  std::vector<Entry> entries;
  for (uint32_t i = 0; i < files->size(); ++i) {
    const DataFile& d = (*files)[i];
    for (uint64_t v = taken[i].vb; v < taken[i].ve; ++v) {
      entries.push_back({d.globals()[v], i, v, true});
    }
    for (uint64_t x = 0; x < taken[i].end_used.size(); ++x) {
      if (taken[i].end_used[x] != 0 && !owns(d.end_uuids()[x])) {
        entries.push_back({d.end_globals()[x], i, x, false});
      }
    }
  }
  tbb::parallel_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.global, a.owned) < std::tie(b.global, b.owned);
  });
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [](const Entry& a, const Entry& b) { return a.global == b.global; }),
                entries.end());
  PartitionInput result;
  PartVertices& pv = result.vertices;
  pv.num_global = m->facts.num_vertices;
  pv.uuids.reserve(entries.size());
  pv.global.reserve(entries.size());
  for (const Entry& en : entries) {
    const DataFile& d = (*files)[en.file];
    pv.global.push_back(en.global);
    if (en.owned) {
      pv.uuids.push_back(d.uuids()[en.index]);
      pv.owned_names.emplace_back(d.name(en.index));
    } else {
      pv.uuids.push_back(d.end_uuids()[en.index]);
    }
  }
  entries = {};
  // Each file's used ends to their positions.
  tbb::parallel_for(size_t{0}, files->size(), [&](size_t i) {
    const DataFile& d = (*files)[i];
    Taken& t = taken[i];
    t.end_pos.assign(t.end_used.size(), kNoVertex);
    for (uint64_t x = 0; x < t.end_used.size(); ++x) {
      if (t.end_used[x] == 0) continue;
      auto it = std::lower_bound(pv.global.begin(), pv.global.end(), d.end_globals()[x]);
      if (it != pv.global.end() && *it == d.end_globals()[x]) {
        t.end_pos[x] = static_cast<uint32_t>(it - pv.global.begin());
      }
    }
  });
  // The edges, merged into input order.
  GraphInput& g = result.input;
  size_t total = 0;
  for (const Taken& t : taken) total += t.edges[0].size() + t.edges[1].size();
  g.src.resize(total);
  g.dst.resize(total);
  const bool weighted = m->facts.weighted && weights != WeightUse::kIgnore;
  if (weighted) g.weights.resize(total);
  size_t out = 0;
  // Each (file, list) is a stream in input order; the streams hold no edge twice.
  using Head = std::pair<uint32_t, uint32_t>;  // (sequence number, stream = 2 * file + list)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
  std::vector<size_t> next(2 * files->size(), 0);
  auto view = [&](uint32_t stream) {
    const DataFile& d = (*files)[stream / 2];
    return stream % 2 == 0 ? d.primary() : d.secondary();
  };
  for (uint32_t stream = 0; stream < 2 * files->size(); ++stream) {
    const std::vector<uint32_t>& edges = taken[stream / 2].edges[stream % 2];
    if (!edges.empty()) heads.push({view(stream).seq[edges[0]], stream});
  }
  while (!heads.empty()) {
    const uint32_t stream = heads.top().second;
    heads.pop();
    const Taken& t = taken[stream / 2];
    const std::vector<uint32_t>& edges = t.edges[stream % 2];
    const EdgeView v = view(stream);
    const uint32_t j = edges[next[stream]];
    const uint32_t s = t.end_pos[v.src[j]], e = t.end_pos[v.dst[j]];
    if (s == kNoVertex || e == kNoVertex) {
      return absl::DataLossError(
          absl::StrCat((*files)[stream / 2].path, ": an edge names an unknown vertex"));
    }
    g.src[out] = s;
    g.dst[out] = e;
    if (weighted) g.weights[out] = v.weights[j];
    ++out;
    if (++next[stream] < edges.size()) heads.push({v.seq[edges[next[stream]]], stream});
  }
  files = std::vector<DataFile>();
  FinishInput(*m, weights, g);

  // The names of this worker's slice of global indexes.
  const uint64_t n = m->facts.num_vertices;
  std::vector<uint64_t> starts(workers + 1);
  for (uint32_t p = 0; p <= workers; ++p) starts[p] = n * p / workers;
  const uint64_t a = starts[rank], b = starts[rank + 1];
  std::vector<uint64_t> ints;
  std::vector<std::string> texts;
  for (uint32_t k = 0; k < m->names.size(); ++k) {
    const FileEntry& entry = m->names[k];
    const uint64_t from = std::max(a, entry.first_global);
    const uint64_t to = std::min(b, entry.first_global + entry.count);
    if (from >= to) continue;
    auto st = ReadNames(*m, k, from - entry.first_global, to - entry.first_global, ints, texts);
    if (!st.ok()) return st;
  }
  result.names = RankNames(std::move(starts), rank, std::move(ints), std::move(texts));
  result.stats.vertices_known = pv.uuids.size();
  result.stats.edges_received = g.num_stored_edges();
  return result;
}

absl::StatusOr<PartitionInput> LoadPartitionFromForm(const GraphSource& source, WeightUse weights,
                                                     Exchange& exchange, bool in_edges) {
  auto part = ReadPartitionedForm(source, weights, exchange.size(), exchange.rank(), in_edges);
  if (auto st = AgreeOnStatus(exchange, part.status()); !st.ok()) return st;
  return part;
}

}  // namespace lockstep::load
