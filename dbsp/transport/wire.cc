#include "transport/wire.h"

#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"

namespace lockstep::dbsp::transport {
namespace {

std::string UuidBytes(const bsp::VertexId& id) {
  return std::string(reinterpret_cast<const char*>(id.data), 16);
}

std::optional<bsp::VertexId> UuidFromBytes(const std::string& bytes) {
  if (bytes.size() != 16) return std::nullopt;
  bsp::VertexId id;
  std::memcpy(id.data, bytes.data(), 16);
  return id;
}

// The wire's job details, a part of runner::JobDetails at a time; each checks its own fields.
absl::StatusOr<runner::JobPlace> PlaceFromWire(const v1::JobDetails& w) {
  runner::JobPlace place;
  const auto first = UuidFromBytes(w.range_first());
  const auto last = UuidFromBytes(w.range_last());
  if (!first || !last)
    return absl::InvalidArgumentError("job details: a range bound is not 16 bytes");
  place.range_first = *first;
  place.range_last = *last;
  if (w.worker_count() == 0 || w.worker_index() >= w.worker_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job details: worker ", w.worker_index(), " of ", w.worker_count()));
  }
  place.worker_index = w.worker_index();
  place.worker_count = w.worker_count();
  return place;
}

absl::StatusOr<runner::JobResume> ResumeFromWire(const v1::JobDetails& w) {
  runner::JobResume resume;
  resume.checkpoint_dir = w.checkpoint_dir();
  resume.attempt = w.attempt();
  resume.restore_from = w.restore_from();
  resume.superstep = w.resume_superstep();
  if (resume.restore_from.empty() != (resume.superstep == 0)) {
    return absl::InvalidArgumentError(
        "job details: a restore needs both a checkpoint and the superstep it resumes at");
  }
  return resume;
}

absl::StatusOr<runner::JobWork> WorkFromWire(const v1::JobDetails& w) {
  runner::JobWork work;
  work.job_id = w.job_id();
  work.created_at_unix_ms = w.created_at_unix_ms();
  work.app = w.app();
  for (const auto& [k, v] : w.params()) work.params[k] = v;
  work.graph = {w.graph_path(), w.graph_format(), w.undirected()};
  for (const auto& [k, v] : w.graph_options()) work.graph.options[k] = v;
  work.output = w.output();
  for (const auto& [k, v] : w.output_options()) work.output_options[k] = v;
  work.trace_vertices.assign(w.trace_vertices().begin(), w.trace_vertices().end());
  if (w.max_supersteps() == 0) {
    return absl::InvalidArgumentError("job details: no superstep limit (max_supersteps is 0)");
  }
  work.max_supersteps = w.max_supersteps();
  return work;
}

}  // namespace

v1::JobDetails ToWire(const Assignment& a) {
  const runner::JobDetails& d = a.details;
  v1::JobDetails w;
  w.set_job_id(d.work.job_id);
  w.set_created_at_unix_ms(d.work.created_at_unix_ms);
  w.set_range_first(UuidBytes(d.place.range_first));
  w.set_range_last(UuidBytes(d.place.range_last));
  w.set_app(d.work.app);
  for (const auto& [k, v] : d.work.params) (*w.mutable_params())[k] = v;
  w.set_graph_path(d.work.graph.path);
  w.set_graph_format(d.work.graph.format);
  w.set_undirected(d.work.graph.undirected);
  for (const auto& [k, v] : d.work.graph.options) (*w.mutable_graph_options())[k] = v;
  w.set_output(d.work.output);
  for (const auto& [k, v] : d.work.output_options) (*w.mutable_output_options())[k] = v;
  w.set_worker_index(d.place.worker_index);
  w.set_worker_count(d.place.worker_count);
  w.set_max_supersteps(d.work.max_supersteps);
  w.set_peer_timeout_ms(static_cast<uint64_t>(a.peer_timeout.count()));
  for (const std::string& address : a.peer_addresses) w.add_peer_addresses(address);
  w.set_job_key(a.job_key);
  w.set_relay(a.relay_direct ? v1::JobDetails::RELAY_DIRECT : v1::JobDetails::RELAY_MASTER);
  w.set_max_batch_bytes(a.max_batch_bytes);
  w.set_save_parts(d.save_form);
  w.set_checkpoint_dir(d.resume.checkpoint_dir);
  w.set_attempt(d.resume.attempt);
  w.set_restore_from(d.resume.restore_from);
  w.set_resume_superstep(d.resume.superstep);
  for (const std::string& id : d.work.trace_vertices) w.add_trace_vertices(id);
  return w;
}

absl::StatusOr<Assignment> FromWire(const v1::JobDetails& w) {
  Assignment a;
  auto place = PlaceFromWire(w);
  if (!place.ok()) return place.status();
  auto resume = ResumeFromWire(w);
  if (!resume.ok()) return resume.status();
  auto work = WorkFromWire(w);
  if (!work.ok()) return work.status();
  a.details.work = *std::move(work);
  a.details.place = *place;
  a.details.resume = *std::move(resume);
  a.details.save_form = w.save_parts();
  a.peer_timeout = std::chrono::milliseconds(w.peer_timeout_ms());
  if (static_cast<uint32_t>(w.peer_addresses_size()) != w.worker_count()) {
    return absl::InvalidArgumentError(absl::StrCat("job details: ", w.peer_addresses_size(),
                                                   " peer addresses for ", w.worker_count(),
                                                   " workers"));
  }
  a.peer_addresses.assign(w.peer_addresses().begin(), w.peer_addresses().end());
  if (w.job_key().size() != kJobKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("job details: the job key is not ", kJobKeyBytes, " bytes"));
  }
  a.job_key = w.job_key();
  if (w.relay() != v1::JobDetails::RELAY_DIRECT && w.relay() != v1::JobDetails::RELAY_MASTER) {
    return absl::InvalidArgumentError("job details: unknown relay mode");
  }
  a.relay_direct = w.relay() == v1::JobDetails::RELAY_DIRECT;
  if (w.max_batch_bytes() == 0) {
    return absl::InvalidArgumentError("job details: no batch size bound (max_batch_bytes is 0)");
  }
  a.max_batch_bytes = w.max_batch_bytes();
  return a;
}

namespace {

struct Mapping {
  protocol::Barrier barrier;
  v1::Step::Type type;
};
constexpr Mapping kSteps[] = {
    {protocol::Barrier::kPre, v1::Step::PRE},
    {protocol::Barrier::kPost, v1::Step::POST},
    {protocol::Barrier::kPostKeepRunning, v1::Step::POST_KEEP_RUNNING},
    {protocol::Barrier::kExecutedGraph, v1::Step::EXECUTED_GRAPH},
    {protocol::Barrier::kPersistedResults, v1::Step::PERSISTED_RESULTS},
    {protocol::Barrier::kCompletedJob, v1::Step::COMPLETED_JOB},
    {protocol::Barrier::kCheckpoint, v1::Step::CHECKPOINT},
};

}  // namespace

v1::Step ToWire(const protocol::Step& s) {
  v1::Step w;
  w.set_type(v1::Step::INVALID);
  for (const Mapping& m : kSteps) {
    if (m.barrier == s.barrier) w.set_type(m.type);
  }
  w.set_superstep(s.superstep);
  for (const auto& [name, bytes] : s.aggregators) (*w.mutable_aggregator_values())[name] = bytes;
  w.set_active(s.active);
  w.set_messages(s.messages);
  w.set_unhalted(s.unhalted);
  w.set_stop(s.stop);
  w.set_checkpoint(s.checkpoint);
  w.set_checkpoint_written(s.checkpoint_written);
  w.set_vertices(s.vertices);
  w.set_part_vertices(s.part.vertices);
  w.set_part_bytes(s.part.bytes);
  w.set_part_crc32c(s.part.crc32c);
  w.set_relayed_batches(s.relayed_batches);
  w.set_relayed_bytes(s.relayed_bytes);
  for (const std::string& line : s.trace) w.add_trace(line);
  return w;
}

absl::StatusOr<protocol::Step> FromWire(const v1::Step& w) {
  protocol::Step s;
  bool known = false;
  for (const Mapping& m : kSteps) {
    if (m.type == w.type()) {
      s.barrier = m.barrier;
      known = true;
    }
  }
  if (!known) return absl::InvalidArgumentError(absl::StrCat("unsupported step type ", w.type()));
  s.superstep = w.superstep();
  for (const auto& [name, bytes] : w.aggregator_values()) s.aggregators[name] = bytes;
  s.active = w.active();
  s.messages = w.messages();
  s.unhalted = w.unhalted();
  s.stop = w.stop();
  s.checkpoint = w.checkpoint();
  s.checkpoint_written = w.checkpoint_written();
  s.vertices = w.vertices();
  s.part = {w.part_vertices(), w.part_bytes(), w.part_crc32c()};
  s.relayed_batches = w.relayed_batches();
  s.relayed_bytes = w.relayed_bytes();
  s.trace.assign(w.trace().begin(), w.trace().end());
  return s;
}

// The wire's position codings are bsp's, value for value.
static_assert(static_cast<int>(bsp::PositionCoding::kNone) == v1::RelayBatch::CODING_NONE &&
              static_cast<int>(bsp::PositionCoding::kDeltas) == v1::RelayBatch::CODING_DELTAS &&
              static_cast<int>(bsp::PositionCoding::kBitmap) == v1::RelayBatch::CODING_BITMAP &&
              static_cast<int>(bsp::PositionCoding::kAll) == v1::RelayBatch::CODING_ALL);

v1::RelayBatch ToWire(bsp::RelayBatch&& b) {
  v1::RelayBatch w;
  w.set_superstep(b.superstep);
  w.set_published(b.published);
  w.set_from_partition(b.from_partition);
  w.set_to_partition(b.to_partition);
  w.set_coding(static_cast<v1::RelayBatch::Coding>(b.coding));
  *w.mutable_positions() = std::move(b.positions);
  w.set_sequence(b.sequence);
  std::string* ids = w.mutable_ids();
  ids->resize(b.ids.size() * 16);
  for (size_t i = 0; i < b.ids.size(); ++i) std::memcpy(ids->data() + 16 * i, b.ids[i].data, 16);
  *w.mutable_payload() = std::move(b.payload);
  return w;
}

absl::StatusOr<bsp::RelayBatch> FromWire(v1::RelayBatch&& w) {
  if (w.ids().size() % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "relay batch from partition ", w.from_partition(), ": IDs are not 16 bytes each"));
  }
  bsp::RelayBatch b;
  if (!v1::RelayBatch::Coding_IsValid(w.coding())) {
    return absl::InvalidArgumentError(absl::StrCat("relay batch from partition ",
                                                   w.from_partition(), ": unknown position coding ",
                                                   static_cast<int>(w.coding())));
  }
  b.coding = static_cast<bsp::PositionCoding>(w.coding());
  b.superstep = w.superstep();
  b.published = w.published();
  b.from_partition = w.from_partition();
  b.to_partition = w.to_partition();
  b.positions = std::move(*w.mutable_positions());
  b.sequence = w.sequence();
  b.ids.resize(w.ids().size() / 16);
  for (size_t i = 0; i < b.ids.size(); ++i) std::memcpy(b.ids[i].data, w.ids().data() + 16 * i, 16);
  b.payload = std::move(*w.mutable_payload());
  return b;
}

}  // namespace lockstep::dbsp::transport
