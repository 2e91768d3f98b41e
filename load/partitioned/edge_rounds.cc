#include "partitioned/edge_rounds.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "lockstep/bsp/bytes.h"
#include "lockstep/bsp/collectives.h"
#include "partitioned/edge_receiver.h"
#include "partitioned/leave_raw.h"
#include "partitioned/records.h"

namespace lockstep::load::partitioned {

using bsp::ByteReader;
using bsp::PartitionLoadStats;
using bsp::Put;
using bsp::VertexId;
using text::FileKind;
using text::kNoIndex;
using text::ParsedChunk;
using text::ParsedFile;
using text::TextKey;

absl::Status EdgeRounds::Run() {
  ShareText reader;
  if (auto st = bsp::AgreeOnStatus(
          frame_.exchange, reader.Open(frame_.source, plan_.edge_file, false, frame_.keep_weights(),
                                       frame_.rank, frame_.size, !plan_.graphalytics));
      !st.ok()) {
    return st;
  }
  // A table's rows and a listed graph's vertices go through the vertex table from the start.
  got_.raw.active = frame_.options.raw_integer_ids && !plan_.graphalytics && !frame_.source.text &&
                    frame_.size < RawIds::kUnknown && got_.table.size() == 0;
  while (true) {
    auto more = Round(reader);
    if (!more.ok()) return more.status();
    if (!*more) break;
  }
  stats_.lines_parsed += tally_.edge_lines;
  tally_.edge_dir = reader.directory();
  if (tally_.edge_dir) {
    tally_.edge_paths = reader.paths();
    tally_.edge_share_lines = reader.lines();
  }
  share_ids_ = ShareIds(frame_.size);
  return absl::OkStatus();
}

absl::StatusOr<bool> EdgeRounds::Round(ShareText& reader) {
  // 1. Parse; hash the IDs this share has not met; tell their owners.
  std::optional<ParsedFile> file = Parse(reader);
  const bool stop_here = tally_.failure.set && tally_.failure.kind <= kEdgeParse;
  std::vector<std::string> out(frame_.size);
  for (auto& o : out) {
    Put(o, RoundFlags(!reader.done(), stop_here));
    Put(o, uint64_t{0});  // the announcements' length, set below
    Put(o, kNoLeast);     // the least ID, set below in the first round
  }
  std::optional<RoundIds> ids;
  if (!stop_here) {
    ids = MeetRound(*file);
    Announce(*ids, *file, out);
  }
  // Each batch: the flags, the announcements' length, the announcements, then any edges.
  for (std::string& o : out) {
    const uint64_t announced = o.size() - kRoundLead;
    std::memcpy(o.data() + 1, &announced, sizeof announced);
  }
  if (!plan_.graphalytics && !stop_here) SendEdges(file, *ids, out);
  auto in = FirstStep(frame_.exchange, std::move(out), stats_);
  if (!in.ok()) return in.status();
  for (const std::string& batch : in->batches) {
    if (batch.size() < kRoundLead) return Malformed();
  }
  if (first_round_) got_.raw.ChooseBase(in->batches, stats_);
  first_round_ = false;
  if (in->stop) {
    if (file && !stop_here) lines_ += LinesOf(*file);
    file.reset();
    tally_.edge_lines = FinishShare(frame_, reader, FileKind::kEdges, lines_, tally_.failure);
    return false;
  }
  // 2. Owners take the vertices, or answer whether they list them; 3. the edges.
  auto announced = TakeAnnouncements(in->batches);
  if (!announced.ok()) return announced.status();
  if (plan_.graphalytics) {
    in->batches.clear();
    if (auto st = MarkUnlisted(*ids, std::move(announced->answers)); !st.ok()) return st;
    std::vector<std::string> edges_out(frame_.size);
    SendEdges(file, *ids, edges_out);
    auto sent = frame_.exchange.AllToAll(std::move(edges_out));
    if (!sent.ok()) return sent.status();
    if (auto st = Take(std::vector<std::string_view>(sent->begin(), sent->end())); !st.ok()) {
      return st;
    }
  } else if (auto st = Take(announced->edges_in); !st.ok()) {
    return st;
  }
  in->batches.clear();
  if (!in->more) {
    tally_.edge_lines = lines_;
    return false;
  }
  return true;
}

std::optional<ParsedFile> EdgeRounds::Parse(ShareText& reader) {
  auto text = reader.Next(frame_.options.round_bytes);
  std::optional<ParsedFile> file;
  const bool parse_failed_before = tally_.failure.set && tally_.failure.kind <= kEdgeParse;
  if (!text.ok()) {
    Note(tally_.failure, FromStatus(text.status()));
  } else if (!parse_failed_before) {
    got_.text_read += text->size();
    file = ParseRound(frame_, plan_.edge_file, std::move(*text), FileKind::kEdges,
                      frame_.keep_weights());
    if (auto f = ParseFailure(*file, kEdgeParse, frame_.rank, lines_)) Note(tally_.failure, *f);
  }
  return file;
}

RoundIds EdgeRounds::MeetRound(const ParsedFile& file) {
  RoundIds ids;
  ids.coding = CodingOf(file.mode);
  if (file.integer_mode()) {
    ids.max_id = MaxIntegerId(file);
    if (auto met = share_ids_.MeetDirect(file, ids.max_id)) {
      ids.direct = true;
      ++stats_.direct_rounds;
      ids.fresh_part = std::move(met->part);
      ids.uuids = std::move(met->uuids);
      ids.fresh.reserve(met->fresh.size());
      for (uint64_t v : met->fresh) ids.fresh.push_back(TextKey{true, v, {}});
      return ids;
    }
    ids.dict.BuildIntegers(file.chunks, file.mode);
  } else {
    ids.dict.BuildText(file.chunks);
  }
  ShareIds::Met met = share_ids_.Meet(ids.dict);
  ids.part = std::move(met.part);
  ids.uuids = std::move(met.uuids);
  ids.fresh_dict = std::move(met.fresh);
  for (uint32_t i : ids.fresh_dict) {
    ids.fresh.push_back(ids.dict.KeyAt(i));
    ids.fresh_part.push_back(ids.part[i]);
  }
  return ids;
}

void EdgeRounds::Announce(const RoundIds& ids, const ParsedFile& file,
                          std::vector<std::string>& out) {
  if (first_round_ && ids.direct &&
      std::any_of(file.chunks.begin(), file.chunks.end(),
                  [&](const ParsedChunk& ch) { return ch.num_ids(file.mode) > 0; })) {
    // The direct table's start: at most the round's least ID (0 for IDs near 0, or where a table
    // from 0 covers the round). A round without IDs (a share of comments, or none) says nothing.
    const uint64_t least = share_ids_.DirectStart();
    for (auto& o : out) std::memcpy(o.data() + kLeastAt, &least, sizeof least);
  }
  for (auto& o : out) Put(o, static_cast<uint8_t>(ids.coding));
  for (uint32_t j = 0; j < ids.fresh.size(); ++j) {
    std::string& o = out[ids.fresh_part[j]];
    PutKey(o, ids.coding, ids.fresh[j]);
    if (!plan_.graphalytics) Put(o, ids.uuids[j]);
  }
}

void EdgeRounds::SendEdges(std::optional<ParsedFile>& file, const RoundIds& ids,
                           std::vector<std::string>& out) {
  EdgeSender sender(frame_, *file, ids, share_ids_, frame_.in_edges || plan_.symmetric,
                    plan_.vertex_file, got_.raw.id_base);
  SentRound sent = sender.AppendTo(out);
  for (Failure& f : sent.failures) {
    f.line += lines_;
    Note(tally_.failure, std::move(f));
  }
  if (tally_.first_with_weight == 0 && sent.first_with_weight != 0) {
    tally_.first_with_weight = lines_ + sent.first_with_weight;
  }
  if (tally_.first_without_weight == 0 && sent.first_without_weight != 0) {
    tally_.first_without_weight = lines_ + sent.first_without_weight;
  }
  stats_.records_parsed += sent.records;
  lines_ += LinesOf(*file);
  file.reset();
}

absl::StatusOr<EdgeRounds::Announced> EdgeRounds::TakeAnnouncements(
    const std::vector<std::string>& batches) {
  Announced taken;
  taken.answers.resize(frame_.size);
  taken.edges_in.resize(frame_.size);
  for (uint32_t p = 0; p < frame_.size; ++p) {
    const std::string_view batch = batches[p];
    uint64_t announced;
    std::memcpy(&announced, batch.data() + 1, sizeof announced);
    if (announced > batch.size() - kRoundLead) return Malformed();
    ByteReader r(batch.substr(kRoundLead, announced));
    taken.edges_in[p] = batch.substr(kRoundLead + announced);
    IdCoding c;
    if (!GetCoding(r, c)) return Malformed();
    while (!r.empty()) {
      TextKey k;
      if (!GetKey(r, c, k)) return Malformed();
      if (plan_.graphalytics) {
        const uint32_t v = got_.table.Find(k);
        Put(taken.answers[p], uint8_t{v != kNoIndex && got_.table.owned[v]});
        continue;
      }
      VertexId uuid;
      if (!r.Get(uuid)) return Malformed();
      if (auto st = Own(k, uuid); !st.ok()) return st;
    }
  }
  return taken;
}

absl::Status EdgeRounds::Own(const TextKey& k, const VertexId& uuid) {
  RawIds& raw = got_.raw;
  if (raw.active && !(k.is_int && k.value >= raw.id_base &&
                      raw.Covers(k.value, got_.text_read + got_.received_ends))) {
    if (auto st = LeaveRaw(got_, frame_.rank, PartitionLoadStats::RawEnd::kAnnouncement, stats_);
        !st.ok()) {
      return st;
    }
  }
  if (raw.active) {
    uint8_t& at = raw.part[k.value - raw.id_base];
    // Shares each announce the IDs they meet: the first one counts. An ID a record has named as
    // another partition's is malformed (two partitions for one ID).
    if (at != frame_.rank) {
      if (at != RawIds::kUnknown) return Malformed();
      at = static_cast<uint8_t>(frame_.rank);
      raw.owned.emplace_back(k.value - raw.id_base, uuid);
    }
    return absl::OkStatus();
  }
  const auto [v, added] = got_.table.Intern(k, frame_.rank);
  if (added) got_.table.uuid[v] = uuid;
  got_.table.owned[v] = 1;
  return absl::OkStatus();
}

absl::Status EdgeRounds::MarkUnlisted(RoundIds& ids, std::vector<std::string> answers) {
  auto replies = frame_.exchange.AllToAll(std::move(answers));
  if (!replies.ok()) return replies.status();
  std::vector<size_t> next(frame_.size, 0);
  for (uint32_t j = 0; j < ids.fresh.size(); ++j) {
    const std::string& reply = (*replies)[ids.fresh_part[j]];
    size_t& at = next[ids.fresh_part[j]];
    if (at >= reply.size()) return Malformed();
    if (reply[at++] == 0) {
      if (!ids.direct) ids.part[ids.fresh_dict[j]] |= kUnlistedBit;
      share_ids_.MarkUnlisted(ids.fresh[j]);
    }
  }
  return absl::OkStatus();
}

absl::Status EdgeRounds::Take(const std::vector<std::string_view>& batches) {
  return EdgeReceiver(frame_, got_, stats_).Take(batches);
}

}  // namespace lockstep::load::partitioned
