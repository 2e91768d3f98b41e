// WritePartitionedFormDistributed: every worker loads its partition of the text and writes the
// data file of its UUID range and the names file of its range of global indexes; worker 0
// prepares the directory first and writes the manifest last.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "form/encode.h"
#include "form/form_dir.h"
#include "form/layout.h"
#include "form/manifest.h"
#include "lockstep/bsp/bytes.h"
#include "lockstep/bsp/collectives.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/bsp/oom_safe.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/load/partitioned_form.h"
#include "lockstep/load/partitioned_load.h"
#include "lockstep/partition/range.h"
#include "text/parse.h"
#include "text/share_reader.h"

namespace lockstep::load {
namespace {

using bsp::AgreeOnStatus;
using bsp::AllGather;
using bsp::ByteReader;
using bsp::Exchange;
using bsp::GraphInput;
using bsp::GraphSource;
using bsp::kNoVertex;
using bsp::PartVertices;
using bsp::Put;
using bsp::WeightUse;
using form::BlockCrcs;
using form::DataFileName;
using form::EncodeNamesFile;
using form::EncodeSource;
using form::FileEntry;
using form::Manifest;
using form::NamesFileName;
using form::WriteWhole;

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
  // Worker 0 prepares the directory (the names of a replaced graph's files go to `old_files`)
  // and draws the graph's identity; everyone learns both.
  absl::Status Prepare(std::vector<std::string>& old_files);
  // This worker's partition, loaded; the edge file and the format.
  absl::StatusOr<std::string> Load();
  // The input position of each of the part's stored edges.
  absl::Status Positions(const std::string& edge_file);
  // Routes the indexes of this worker's share of the edge file's edges as the partitioned load
  // routes the edges.
  struct Routed {
    absl::Status read;
    std::vector<std::string> out;
    uint32_t count = 0;
  };
  Routed RouteShare(const std::string& edge_file, const partition::Range& split) const;
  absl::Status LearnWeighted();
  absl::Status WriteFiles();
  // Everything worker 0 needs for the manifest, which it then writes.
  absl::Status Commit(const std::vector<std::string>& old_files);
  absl::StatusOr<Manifest> ManifestOf(const std::vector<std::string>& entries) const;

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

absl::Status DistributedWriter::Run() {
  std::vector<std::string> old_files;
  if (auto st = Prepare(old_files); !st.ok()) return st;
  auto edge_file = Load();
  if (!edge_file.ok()) return edge_file.status();
  if (auto st = Positions(*edge_file); !st.ok()) return st;
  if (auto st = LearnWeighted(); !st.ok()) return st;
  if (auto st = AgreeOnStatus(exchange_, WriteFiles()); !st.ok()) return st;
  return Commit(old_files);
}

absl::Status DistributedWriter::Prepare(std::vector<std::string>& old_files) {
  absl::Status prepared;
  std::string id;
  if (rank_ == 0) {
    prepared = form::PrepareDir(dir_, old_files);
    Put(id, form::RandomGraphId());
  }
  if (auto st = AgreeOnStatus(exchange_, prepared); !st.ok()) return st;
  auto ids = AllGather(exchange_, id);
  if (!ids.ok()) return ids.status();
  ByteReader first((*ids)[0]);
  if (!first.Get(graph_id_)) return absl::InternalError("partitioned write: no graph id");
  return absl::OkStatus();
}

absl::StatusOr<std::string> DistributedWriter::Load() {
  // The edges as a GraphInput's arrays: the writer reads them by stored edge.
  auto part = LoadPartitionFromText(source_, WeightUse::kNonNegative, exchange_, /*in_edges=*/true,
                                    {.packed_edges = false});
  if (!part.ok()) return part.status();
  part_ = std::move(*part);
  // What the assembly freed goes back before the files are encoded (a job's build does so
  // before its CSR).
  bsp::ReturnFreedMemory();
  std::string edge_file = source_.path;
  format_ = "edgelist";
  if (IsGraphalytics(source_)) {
    auto files = text::ResolveGraphalytics(source_);
    if (!files.ok()) return files.status();  // the load read them: the same on every worker
    edge_file = files->edge_file;
    format_ = "graphalytics";
  }
  return edge_file;
}

DistributedWriter::Routed DistributedWriter::RouteShare(const std::string& edge_file,
                                                        const partition::Range& split) const {
  // This worker's share of the edge file, parsed as the partitioned load parses it (it has
  // loaded, so every line that is not blank or a comment is an edge), routed as it routes: to
  // the owner of the source, and to the owner of the target if another.
  Routed r;
  r.out.resize(size_);
  auto share = ReadShare(edge_file, rank_, size_);
  r.read = share.status();
  if (!share.ok()) return r;
  absl::flat_hash_map<std::string, uint32_t> owner;
  auto owner_of = [&](std::string_view id) {
    auto it = owner.find(absl::string_view(id.data(), id.size()));
    if (it != owner.end()) return it->second;
    const uint32_t p =
        static_cast<uint32_t>(split.PartitionForUnchecked(bsp::VertexIdFromExternal(id)));
    bsp::GrowOrAbandon(owner, [&] { return owner.emplace(std::string(id), p); });
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
      r.read =
          absl::InternalError(absl::StrCat(edge_file, ": a line the load took is not an edge"));
      break;
    }
    const uint32_t ps = owner_of(tok[0]), pd = owner_of(tok[1]);
    Put(r.out[ps], r.count);
    if (pd != ps) Put(r.out[pd], r.count);
    ++r.count;
  }
  return r;
}

absl::Status DistributedWriter::Positions(const std::string& edge_file) {
  auto split = partition::Range::Whole(size_);
  if (!split.ok()) return split.status();
  Routed routed = RouteShare(edge_file, *split);
  if (auto st = AgreeOnStatus(exchange_, routed.read); !st.ok()) return st;
  std::string mine;
  Put(mine, routed.count);
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
  auto in = exchange_.AllToAll(std::move(routed.out));
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

absl::Status DistributedWriter::LearnWeighted() {
  std::string weights;
  Put(weights, static_cast<uint8_t>(part_.input.weights.empty() ? 0 : 1));
  auto weighted = AllGather(exchange_, weights);
  if (!weighted.ok()) return weighted.status();
  for (const std::string& w : *weighted) weighted_ = weighted_ || (!w.empty() && w[0] != 0);
  return absl::OkStatus();
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

absl::Status DistributedWriter::Commit(const std::vector<std::string>& old_files) {
  std::string mine;
  PutEntry(mine, data_);
  PutEntry(mine, names_);
  auto all = AllGather(exchange_, mine);
  if (!all.ok()) return all.status();
  absl::Status committed;
  if (rank_ == 0) {
    auto m = ManifestOf(*all);
    committed = m.ok() ? form::CommitManifest(*m, old_files) : m.status();
  }
  return AgreeOnStatus(exchange_, committed);
}

absl::StatusOr<Manifest> DistributedWriter::ManifestOf(
    const std::vector<std::string>& entries) const {
  Manifest m;
  m.dir = dir_;
  m.graph_id = graph_id_;
  m.facts.num_vertices = part_.vertices.num_global;
  m.facts.num_stored_edges = total_edges_;
  m.facts.symmetric = part_.input.symmetric;
  m.facts.weighted = weighted_;
  m.facts.format = format_;
  m.facts.properties = part_.input.properties;
  for (uint32_t p = 0; p < size_; ++p) {
    ByteReader in(entries[p]);
    FileEntry data, names;
    if (!GetEntry(in, data) || !GetEntry(in, names)) {
      return absl::InternalError("partitioned write: a malformed file entry");
    }
    auto split = partition::Range::Whole(size_);
    auto ext = split->Extents(p);
    data.first = ext->first;
    data.last = ext->second;
    m.data.push_back(std::move(data));
    m.names.push_back(std::move(names));
  }
  return m;
}

}  // namespace

absl::Status WritePartitionedFormDistributed(const GraphSource& source, Exchange& exchange,
                                             const std::string& dir) {
  DistributedWriter writer(source, exchange, dir);
  return writer.Run();
}

}  // namespace lockstep::load
