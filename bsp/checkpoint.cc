#include "lockstep/bsp/checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lockstep/bsp/bytes.h"
#include "lockstep/bsp/checksum.h"
#include "lockstep/bsp/output.h"

namespace lockstep::bsp {
namespace {

constexpr char kMagic[8] = {'L', 'S', 'C', 'K', 'P', 'T', 0, 2};
constexpr char kIndexMagic[8] = {'L', 'S', 'C', 'K', 'I', 'X', 0, 1};
constexpr size_t kSections = 4;

// Checks a file's magic (its first six bytes; the last two are the version's, checked after the
// CRC so that a newer file is named as such) and CRC.
absl::Status CheckWhole(const std::string& bytes, const char (&magic)[8], const std::string& what,
                        const std::string& name) {
  if (bytes.size() < sizeof(magic) + 4 || std::memcmp(bytes.data(), magic, 6) != 0) {
    return absl::DataLossError(absl::StrCat(what, " ", name, " is not a lockstep ", what));
  }
  if (Crc32c(std::string_view(bytes.data(), bytes.size() - 4)) != CheckpointCrc(bytes)) {
    return absl::DataLossError(
        absl::StrCat(what, " ", name, " is corrupt or truncated (its CRC-32C does not match)"));
  }
  return absl::OkStatus();
}

}  // namespace

uint32_t CheckpointCrc(std::string_view file) {
  uint32_t crc = 0;
  std::memcpy(&crc, file.data() + file.size() - 4, 4);
  return crc;
}

std::string EncodeCheckpointIndex(const CheckpointHeader& header, std::span<const VertexId> ids,
                                  std::span<const uint32_t> out_degrees) {
  std::string out(kIndexMagic, sizeof(kIndexMagic));
  out.reserve(64 + header.job.size() + ids.size() * 20);
  Put(out, kCheckpointVersion);
  Put(out, header.part);
  Put(out, header.parts);
  PutString(out, header.job);
  Put(out, static_cast<uint64_t>(ids.size()));
  out.append(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(VertexId));
  out.append(reinterpret_cast<const char*>(out_degrees.data()), out_degrees.size() * 4);
  Put(out, Crc32c(out));
  return out;
}

void CheckpointWriter::Aggregator(std::string_view name, std::string_view value) {
  aggregators_.emplace_back(std::string(name), std::string(value));
}

void CheckpointWriter::EndSection() {
  if (section_ < 0) return;
  const uint64_t length = bytes_.size() - length_at_ - 8;
  std::memcpy(bytes_.data() + length_at_, &length, 8);
}

std::string& CheckpointWriter::Begin(CheckpointSection s) {
  const int next = static_cast<int>(s);
  while (section_ < next) {
    if (section_ < 0) {
      // The file is built in place: the header, then the sections, each length filled in last.
      bytes_.append(kMagic, sizeof(kMagic));
      Put(bytes_, kCheckpointVersion);
      Put(bytes_, header_.superstep);
      Put(bytes_, header_.part);
      Put(bytes_, header_.parts);
      PutString(bytes_, header_.app);
      PutString(bytes_, header_.job);
      Put(bytes_, index_crc_);
      Put(bytes_, static_cast<uint32_t>(aggregators_.size()));
      for (const auto& [name, value] : aggregators_) {
        PutString(bytes_, name);
        PutString(bytes_, value);
      }
      Put(bytes_, vertices_);
      held_at_ = bytes_.size();
      Put(bytes_, uint64_t{0});
    }
    EndSection();
    ++section_;
    length_at_ = bytes_.size();
    Put(bytes_, uint64_t{0});
  }
  return bytes_;
}

std::string& CheckpointWriter::Held(const VertexId& id) {
  Begin(CheckpointSection::kHeld);
  ++held_;
  bytes_.append(reinterpret_cast<const char*>(id.data), 16);
  return bytes_;
}

std::string CheckpointWriter::Finish() {
  Begin(CheckpointSection::kHeld);
  EndSection();
  std::memcpy(bytes_.data() + held_at_, &held_, sizeof(held_));
  crc32c_ = Crc32c(bytes_);
  Put(bytes_, crc32c_);
  return std::move(bytes_);
}

absl::StatusOr<CheckpointFile> CheckpointFile::Parse(std::string bytes, std::string name,
                                                     std::string index, std::string index_name,
                                                     const CheckpointHeader* expect) {
  auto bad = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat("checkpoint file ", name, " ", what));
  };
  auto bad_index = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat("checkpoint index ", index_name, " ", what));
  };
  if (auto st = CheckWhole(bytes, kMagic, "checkpoint file", name); !st.ok()) return st;
  if (auto st = CheckWhole(index, kIndexMagic, "checkpoint index", index_name); !st.ok()) {
    return st;
  }
  CheckpointFile file;
  file.name_ = name;  // a copy: the errors below name the file too
  file.bytes_ = std::move(bytes);
  file.index_ = std::move(index);
  ByteReader in(std::string_view(file.bytes_).substr(0, file.bytes_.size() - 4));
  in.Skip(sizeof(kMagic));
  uint32_t version = 0;
  CheckpointHeader& h = file.header_;
  if (!in.Get(version)) return bad("is truncated");
  if (version != kCheckpointVersion) {
    return bad(
        absl::StrCat("has version ", version, "; this build reads version ", kCheckpointVersion));
  }
  uint32_t num_aggregators = 0, index_crc = 0;
  if (!in.Get(h.superstep) || !in.Get(h.part) || !in.Get(h.parts) || !in.GetString(h.app) ||
      !in.GetString(h.job) || !in.Get(index_crc) || !in.Get(num_aggregators)) {
    return bad("has a truncated header");
  }
  if (h.parts == 0 || h.part >= h.parts) {
    return bad(absl::StrCat("says it is part ", h.part, " of ", h.parts));
  }
  for (uint32_t i = 0; i < num_aggregators; ++i) {
    std::string agg_name, value;
    if (!in.GetString(agg_name) || !in.GetString(value)) return bad("has a truncated aggregator");
    file.aggregators_.emplace_back(std::move(agg_name), std::move(value));
  }
  if (!in.Get(file.vertices_) || !in.Get(file.held_)) return bad("has no vertex count");
  for (size_t s = 0; s < kSections; ++s) {
    uint64_t length = 0;
    if (!in.Get(length)) return bad(absl::StrCat("ends before section ", s));
    const size_t at = static_cast<size_t>(in.rest().data() - file.bytes_.data());
    if (!in.Skip(length)) return bad(absl::StrCat("ends inside section ", s));
    file.sections_[s] = {at, static_cast<size_t>(length)};
  }
  if (!in.rest().empty()) return bad("has bytes after its last section");
  if (file.section(CheckpointSection::kFlags).size() != file.vertices_) {
    return bad("has a flags section whose length is not its vertex count");
  }
  if (file.held_ > file.section(CheckpointSection::kHeld).size() / 16) {
    return bad("has fewer bytes of held values than it says it holds");
  }

  // The index: of this job and part, the one this state was written with.
  ByteReader ix(std::string_view(file.index_).substr(0, file.index_.size() - 4));
  ix.Skip(sizeof(kIndexMagic));
  uint32_t ix_version = 0, ix_part = 0, ix_parts = 0;
  std::string ix_job;
  uint64_t ix_vertices = 0;
  if (!ix.Get(ix_version)) return bad_index("is truncated");
  if (ix_version != kCheckpointVersion) {
    return bad_index(absl::StrCat("has version ", ix_version, "; this build reads version ",
                                  kCheckpointVersion));
  }
  if (!ix.Get(ix_part) || !ix.Get(ix_parts) || !ix.GetString(ix_job) || !ix.Get(ix_vertices)) {
    return bad_index("has a truncated header");
  }
  file.ids_at_ = static_cast<size_t>(ix.rest().data() - file.index_.data());
  if (ix.rest().size() / 20 != ix_vertices || ix.rest().size() % 20 != 0) {
    return bad_index(absl::StrCat("does not hold the ", ix_vertices, " vertices it says it does"));
  }
  if (CheckpointCrc(file.index_) != index_crc || ix_part != h.part || ix_parts != h.parts ||
      ix_job != h.job || ix_vertices != file.vertices_) {
    return bad(absl::StrCat("was not written with index ", index_name));
  }
  if (expect != nullptr) {
    if (h.app != expect->app) {
      return bad(absl::StrCat("is of app '", h.app, "', not '", expect->app, "'"));
    }
    if (h.job != expect->job) {
      return bad(absl::StrCat("is of job '", h.job, "', not '", expect->job, "'"));
    }
    if (h.superstep != expect->superstep) {
      return bad(absl::StrCat("is at superstep ", h.superstep, ", not ", expect->superstep));
    }
  }
  return file;
}

uint32_t CheckpointFile::crc32c() const { return CheckpointCrc(bytes_); }

absl::Status CheckCheckpointSet(std::span<const CheckpointFile> files) {
  if (files.empty()) return absl::NotFoundError("a checkpoint needs at least one file");
  const CheckpointFile& first = files[0];
  const CheckpointHeader& h = first.header();
  std::vector<const CheckpointFile*> by_part(h.parts, nullptr);
  for (const CheckpointFile& f : files) {
    const CheckpointHeader& g = f.header();
    auto differs = [&](const std::string& what) {
      return absl::DataLossError(absl::StrCat("checkpoint files ", first.name(), " and ", f.name(),
                                              " are not of one checkpoint: their ", what,
                                              " differ"));
    };
    if (g.app != h.app) return differs("apps");
    if (g.job != h.job) return differs("jobs");
    if (g.superstep != h.superstep) return differs("supersteps");
    if (g.parts != h.parts) return differs("part counts");
    if (f.aggregators() != first.aggregators()) return differs("aggregator values");
    if (by_part[g.part] != nullptr) {
      return absl::DataLossError(absl::StrCat("checkpoint files ", by_part[g.part]->name(), " and ",
                                              f.name(), " are both part ", g.part));
    }
    by_part[g.part] = &f;
  }
  for (uint32_t p = 0; p < h.parts; ++p) {
    if (by_part[p] == nullptr) {
      return absl::NotFoundError(absl::StrCat("checkpoint of job '", h.job, "' at superstep ",
                                              h.superstep, " lacks part ", p, " of ", h.parts));
    }
  }
  return absl::OkStatus();
}

std::string CheckpointStepDir(const std::string& job_dir, uint64_t superstep) {
  return absl::StrFormat("%s/superstep-%010u", job_dir, superstep);
}

namespace {
constexpr char kManifestName[] = "MANIFEST";
constexpr char kManifestFirst[] = "lockstep-checkpoint-manifest 1";
constexpr char kStepPrefix[] = "superstep-";

// Bytes as hex digits ("-" for none), so that any name or value is one word of the manifest.
std::string Hex(std::string_view bytes) {
  if (bytes.empty()) return "-";
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}
int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}
// The whole file at `path`, or an error saying `what` it is.
absl::StatusOr<std::string> ReadWhole(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", what, " ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", what, " ", path));
  return std::move(bytes).str();
}

// The superstep of a checkpoint's directory name (CheckpointStepDir's), if it is one.
std::optional<uint64_t> StepOf(const std::string& name) {
  uint64_t superstep = 0;
  if (name.rfind(kStepPrefix, 0) != 0 ||
      !absl::SimpleAtoi(name.substr(sizeof(kStepPrefix) - 1), &superstep) ||
      name != std::filesystem::path(CheckpointStepDir("", superstep)).filename().string()) {
    return std::nullopt;
  }
  return superstep;
}

bool Unhex(std::string_view hex, std::string& out) {
  if (hex == "-") {
    out.clear();
    return true;
  }
  if (hex.size() % 2 != 0) return false;
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = HexDigit(hex[i]), lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    bytes.push_back(static_cast<char>(hi << 4 | lo));
  }
  out = std::move(bytes);
  return true;
}
}  // namespace

absl::Status WriteCheckpointManifest(const std::string& step_dir,
                                     const CheckpointManifest& manifest) {
  const CheckpointHeader& h = manifest.header;
  std::string text = absl::StrCat(kManifestFirst, "\napp ", h.app, "\njob ", h.job, "\nsuperstep ",
                                  h.superstep, "\nparts ", manifest.files.size(), "\n");
  for (size_t p = 0; p < manifest.files.size(); ++p) {
    const CheckpointPart& f = manifest.files[p];
    absl::StrAppend(&text, "file ", p, " ", f.records, " ", f.bytes, " ", f.crc32c, "\n");
  }
  absl::StrAppend(&text, "aggregators ", manifest.aggregators.size(), "\n");
  for (const auto& [name, value] : manifest.aggregators) {
    absl::StrAppend(&text, "aggregator ", Hex(name), " ", Hex(value), "\n");
  }
  absl::StrAppend(&text, "crc32c ", Crc32c(text), "\n");
  return WriteFileAtomically(step_dir + "/" + kManifestName, text);
}

absl::StatusOr<CheckpointManifest> ReadCheckpointManifest(const std::string& step_dir) {
  const std::string path = step_dir + "/" + kManifestName;
  auto read = ReadWhole(path, "checkpoint manifest");
  if (!read.ok()) return read.status();
  const std::string text = *std::move(read);
  auto bad = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat("checkpoint manifest ", path, " ", what));
  };
  const size_t last = text.rfind("crc32c ");
  if (text.rfind(std::string(kManifestFirst) + "\n", 0) != 0 || last == std::string::npos ||
      text.empty() || text.back() != '\n') {
    return bad("is not a lockstep checkpoint manifest");
  }
  std::istringstream tail(text.substr(last + 7));
  uint32_t crc = 0;
  if (!(tail >> crc) || crc != Crc32c(std::string_view(text.data(), last))) {
    return bad("is corrupt or truncated (its CRC-32C does not match)");
  }
  std::istringstream lines(text.substr(0, last));
  std::string first, key;
  std::getline(lines, first);
  CheckpointManifest m;
  uint64_t parts = 0;
  if (!(lines >> key) || key != "app" || !(lines >> m.header.app) || !(lines >> key) ||
      key != "job" || !(lines >> m.header.job) || !(lines >> key) || key != "superstep" ||
      !(lines >> m.header.superstep) || !(lines >> key) || key != "parts" || !(lines >> parts) ||
      parts == 0 || parts > (uint64_t{1} << 20)) {
    return bad("has a bad header");
  }
  m.header.parts = static_cast<uint32_t>(parts);
  for (uint64_t p = 0; p < parts; ++p) {
    uint64_t index = 0;
    CheckpointPart f;
    if (!(lines >> key) || key != "file" || !(lines >> index) || index != p ||
        !(lines >> f.records >> f.bytes >> f.crc32c)) {
      return bad(absl::StrCat("has a bad line for part ", p));
    }
    m.files.push_back(f);
  }
  uint64_t aggregators = 0;
  if (!(lines >> key) || key != "aggregators" || !(lines >> aggregators) || aggregators > 4096) {
    return bad("has no aggregator count");
  }
  for (uint64_t i = 0; i < aggregators; ++i) {
    std::string name, value;
    if (!(lines >> key) || key != "aggregator" || !(lines >> name >> value) || !Unhex(name, name) ||
        !Unhex(value, value)) {
      return bad(absl::StrCat("has a bad line for aggregator ", i));
    }
    m.aggregators.emplace_back(std::move(name), std::move(value));
  }
  if (lines >> key) return bad("has lines after its last aggregator");
  return m;
}

std::vector<uint64_t> ListCheckpoints(const std::string& job_dir) {
  std::vector<uint64_t> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(job_dir, ec)) {
    const std::optional<uint64_t> superstep = StepOf(entry.path().filename().string());
    if (!superstep) continue;
    auto m = ReadCheckpointManifest(entry.path().string());
    if (m.ok() && m->header.superstep == *superstep) found.push_back(*superstep);
  }
  std::sort(found.rbegin(), found.rend());
  return found;
}

absl::Status PruneCheckpoints(const std::string& job_dir, uint32_t keep) {
  const std::vector<uint64_t> complete = ListCheckpoints(job_dir);
  if (complete.empty()) return absl::OkStatus();
  std::vector<uint64_t> kept(complete.begin(),
                             complete.begin() + std::min<size_t>(keep, complete.size()));
  std::error_code ec;
  std::vector<std::filesystem::path> doomed;
  for (const auto& entry : std::filesystem::directory_iterator(job_dir, ec)) {
    const std::optional<uint64_t> superstep = StepOf(entry.path().filename().string());
    if (!superstep) continue;
    const bool listed = std::find(kept.begin(), kept.end(), *superstep) != kept.end();
    if (!listed && *superstep <= complete.front()) doomed.push_back(entry.path());
  }
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot list checkpoint directory ", job_dir, ": ", ec.message()));
  }
  for (const auto& path : doomed) {
    std::filesystem::remove_all(path, ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("cannot remove checkpoint ", path.string(), ": ", ec.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CheckpointSource> CheckpointSource::Open(const std::string& step_dir,
                                                        const CheckpointHeader* expect) {
  auto manifest = ReadCheckpointManifest(step_dir);
  if (!manifest.ok()) return manifest.status();
  CheckpointSource source;
  source.header_ = manifest->header;
  source.aggregators_ = std::move(manifest->aggregators);
  source.listed_ = std::move(manifest->files);
  source.name_ = step_dir;
  source.step_dir_ = step_dir;
  if (expect != nullptr) source.expected_ = *expect;
  return source;
}

absl::StatusOr<CheckpointSource> CheckpointSource::InMemory(std::span<const CheckpointFile> files) {
  if (auto st = CheckCheckpointSet(files); !st.ok()) return st;
  CheckpointSource source;
  source.header_ = files[0].header();
  source.aggregators_ = files[0].aggregators();
  source.name_ = absl::StrCat("of ", files.size(), " files in memory");
  source.by_part_.resize(files.size());
  for (const CheckpointFile& f : files) source.by_part_[f.header().part] = &f;
  return source;
}

absl::StatusOr<CheckpointFile> CheckpointSource::Load(uint32_t part) const {
  if (step_dir_.empty()) return *by_part_.at(part);
  const std::string path = CheckpointFileName(step_dir_, part);
  const std::string index =
      CheckpointIndexName(std::filesystem::path(step_dir_).parent_path().string(), part);
  auto file = ReadCheckpointFile(path, index, expected_ ? &*expected_ : &header_);
  if (!file.ok()) return file.status();
  const CheckpointPart& listed = listed_.at(part);
  if (file->num_records() != listed.records || file->size() != listed.bytes ||
      file->crc32c() != listed.crc32c || file->header().part != part ||
      file->header().parts != header_.parts || file->header().job != header_.job ||
      file->header().app != header_.app || file->header().superstep != header_.superstep) {
    return absl::DataLossError(
        absl::StrCat("checkpoint file ", path, " is not the one its manifest lists"));
  }
  if (file->aggregators() != aggregators_) {
    return absl::DataLossError(
        absl::StrCat("checkpoint file ", path, " has other aggregator values than its manifest"));
  }
  return file;
}

absl::StatusOr<std::vector<CheckpointFile>> ReadCheckpoint(const std::string& step_dir,
                                                           const CheckpointHeader* expect) {
  auto source = CheckpointSource::Open(step_dir, expect);
  if (!source.ok()) return source.status();
  std::vector<CheckpointFile> files;
  for (uint32_t p = 0; p < source->parts(); ++p) {
    auto file = source->Load(p);
    if (!file.ok()) return file.status();
    files.push_back(*std::move(file));
  }
  if (auto st = CheckCheckpointSet(files); !st.ok()) return st;
  return files;
}

absl::Status VerifyCheckpoint(const std::string& step_dir, const CheckpointHeader& expect) {
  auto source = CheckpointSource::Open(step_dir, &expect);
  if (!source.ok()) return source.status();
  for (uint32_t p = 0; p < source->parts(); ++p) {
    // Each part against its manifest line, whose header and aggregators every part must share:
    // the set is then whole.
    if (auto file = source->Load(p); !file.ok()) return file.status();
  }
  return absl::OkStatus();
}

namespace {
constexpr char kRefusedUrl[] = "lockstep/checkpoint-refused";
}  // namespace

absl::Status MarkCheckpointRefused(absl::Status status) {
  if (!status.ok()) status.SetPayload(kRefusedUrl, absl::Cord("1"));
  return status;
}

bool IsCheckpointRefused(const absl::Status& status) {
  return status.GetPayload(kRefusedUrl).has_value();
}

std::string CheckpointFileName(const std::string& dir, uint32_t part) {
  return absl::StrFormat("%s/part-%05u.ckpt", dir, part);
}

absl::Status WriteCheckpointFile(const std::string& path, std::string_view bytes) {
  return WriteFileAtomically(path, bytes);
}

std::string CheckpointIndexName(const std::string& dir, uint32_t part) {
  return absl::StrFormat("%s/part-%05u.index", dir, part);
}

absl::StatusOr<CheckpointFile> ReadCheckpointFile(const std::string& path,
                                                  const std::string& index_path,
                                                  const CheckpointHeader* expect) {
  auto bytes = ReadWhole(path, "checkpoint file");
  if (!bytes.ok()) return bytes.status();
  auto index = ReadWhole(index_path, "checkpoint index");
  if (!index.ok()) return index.status();
  return CheckpointFile::Parse(*std::move(bytes), path, *std::move(index), index_path, expect);
}

}  // namespace lockstep::bsp
