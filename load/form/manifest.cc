#include "form/manifest.h"

#include <sys/stat.h>

#include <charconv>
#include <string_view>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/checksum.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/partition/range.h"

namespace lockstep::load::form {
namespace {

using bsp::Crc32c;
using bsp::ParseUuid;
using bsp::ToString;

std::string Hex(uint64_t v) {
  char buf[17];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, 16);
  return std::string(buf, end);
}

absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

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

// Checks the first line and the checksum of the end line; the parser then stands after the first
// line, and the fields end at `fields_end`.
absl::Status CheckFrame(const Manifest& m, const std::string& text, ManifestParser& p,
                        size_t& fields_end) {
  auto bad = [&](std::string_view what) {
    return absl::DataLossError(absl::StrCat(m.path, ": ", Absl(what)));
  };
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
  const size_t end_line = text.rfind("\nend ");
  if (end_line == std::string::npos) return bad("truncated (no end line)");
  ManifestParser tail(std::string_view(text).substr(end_line + 5));
  uint32_t crc = 0;
  if (!tail.Number(crc, 16) || !tail.EndOfLine() || !tail.done()) {
    return bad("truncated or corrupt end line");
  }
  if (crc != Crc32c(std::string_view(text.data(), end_line + 1))) {
    return bad("checksum mismatch (corrupt)");
  }
  fields_end = end_line + 1;
  return absl::OkStatus();
}

// Reads the field `key` names; false if its line is malformed. (A file line reads its end of
// line itself: `line_read`.)
bool ParseField(std::string_view key, ManifestParser& p, Manifest& m, bool& line_read) {
  uint32_t flag = 0;
  line_read = false;
  if (key == "graph") return p.Space() && p.Number(m.graph_id, 16);
  if (key == "vertices") return p.Space() && p.Number(m.facts.num_vertices);
  if (key == "stored-edges") return p.Space() && p.Number(m.facts.num_stored_edges);
  if (key == "symmetric" || key == "weighted") {
    const bool ok = p.Space() && p.Number(flag) && flag <= 1;
    (key == "symmetric" ? m.facts.symmetric : m.facts.weighted) = flag == 1;
    return ok;
  }
  if (key == "format") {
    std::string_view f;
    const bool ok = p.Space() && p.Word(f);
    m.facts.format = std::string(f);
    return ok;
  }
  if (key == "property") {
    size_t kn = 0, vn = 0;
    std::string_view k, v;
    const bool ok = p.Space() && p.Number(kn) && p.Space() && p.Number(vn) && p.Space() &&
                    p.Bytes(kn, k) && p.Bytes(vn, v);
    m.facts.properties[std::string(k)] = std::string(v);
    return ok;
  }
  if (key == "block-bytes") return p.Space() && p.Number(m.block_bytes) && m.block_bytes > 0;
  if (key == "data" || key == "names") {
    std::vector<FileEntry>& files = key == "data" ? m.data : m.names;
    files.emplace_back();
    line_read = true;
    return ParseFileLine(p, key == "data", files.back());
  }
  return false;
}

// The files must cut the whole UUID space in order, as Range::Whole does, and the global indexes
// from 0 to the last vertex, each with a checksum per block.
absl::Status CheckFiles(Manifest& m) {
  auto bad = [&](std::string_view what) {
    return absl::DataLossError(absl::StrCat(m.path, ": ", Absl(what)));
  };
  if (m.names.empty() || m.data.empty()) return bad("lists no files");
  if (m.facts.num_vertices >= bsp::kNoVertex || m.facts.num_stored_edges >= bsp::kNoVertex) {
    return bad("more than 2^32-1 vertices or edges");
  }
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
  return absl::OkStatus();
}

}  // namespace

std::string ManifestPath(const std::string& dir) { return dir + "/" + kFormManifestName; }

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

absl::StatusOr<Manifest> ReadManifest(const std::string& dir) {
  Manifest m;
  m.dir = dir;
  m.path = ManifestPath(dir);
  struct stat info;
  if (::stat(m.path.c_str(), &info) != 0) {
    return absl::NotFoundError(
        absl::StrCat(dir, ": not a partitioned graph (no ", kFormManifestName, ")"));
  }
  auto text = bsp::ReadFile(m.path);
  if (!text.ok()) return text.status();
  ManifestParser p(*text);
  size_t fields_end = 0;
  if (auto st = CheckFrame(m, *text, p, fields_end); !st.ok()) return st;
  while (p.at() < fields_end) {
    std::string_view key;
    if (!p.Word(key)) return absl::DataLossError(absl::StrCat(m.path, ": malformed line"));
    bool line_read = false;
    const bool ok = ParseField(key, p, m, line_read);
    if (ok && line_read) continue;
    if (!ok || !p.EndOfLine()) {
      return absl::DataLossError(absl::StrCat(m.path, ": malformed '", Absl(key), "' line"));
    }
  }
  if (auto st = CheckFiles(m); !st.ok()) return st;
  m.facts.num_shards = static_cast<uint32_t>(m.data.size());
  for (const FileEntry& f : m.data) m.facts.shard_bytes += f.size;
  return m;
}

}  // namespace lockstep::load::form

namespace lockstep::load {

absl::StatusOr<PartitionedFormFacts> ReadPartitionedFormFacts(const std::string& dir) {
  auto m = form::ReadManifest(dir);
  if (!m.ok()) return m.status();
  return m->facts;
}

}  // namespace lockstep::load
