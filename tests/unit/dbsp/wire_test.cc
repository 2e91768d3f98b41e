// Conversions between the engine's and the protocol's plain types and the wire.
#include "transport/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lockstep/bsp/vertex_id.h"
#include "lockstep/partition/range.h"
#include "transport/peer.h"

namespace lockstep::dbsp {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using transport::FromWire;
using transport::ToWire;

transport::Assignment SampleDetails() {
  transport::Assignment a;
  a.peer_timeout = std::chrono::milliseconds(45000);
  runner::JobDetails& d = a.details;
  d.work.max_supersteps = 20000;
  d.work.job_id = "20240102-030405-abcd";
  d.work.created_at_unix_ms = 1704164645123;
  d.work.app = "pagerank";
  d.work.params = {{"damping", "0.85"}, {"max-iterations", "20"}, {"tolerance", "0"}};
  d.work.graph = {"/data/graphs/example.properties", "graphalytics", true};
  d.work.output = "/out/.result.job.staging/part-00002";
  d.resume.checkpoint_dir = "/shared/checkpoints/20240102-030405-abcd";
  d.resume.attempt = 2;
  d.resume.restore_from = "/shared/checkpoints/20240102-030405-abcd/superstep-0000000020";
  d.resume.superstep = 20;
  d.place.worker_index = 2;
  d.place.worker_count = 4;
  auto split = partition::Range::Whole(4);
  auto extents = split->Extents(2);
  d.place.range_first = extents->first;
  d.place.range_last = extents->second;
  a.peer_addresses = {"10.0.0.1:7000", "10.0.0.2:7000", "[::1]:7001", "w3.example:7000"};
  a.job_key = std::string("0123456789abcdef", 16);
  a.relay_direct = false;
  a.max_batch_bytes = 1 << 20;
  return a;
}

TEST(WireTest, JobDetailsRoundTrip) {
  const transport::Assignment a = SampleDetails();
  const runner::JobDetails& d = a.details;
  const v1::JobDetails w = ToWire(a);
  EXPECT_EQ(w.range_first().size(), 16u);
  EXPECT_EQ(w.range_last().size(), 16u);
  // Through bytes, as the stream carries it.
  v1::JobDetails parsed;
  ASSERT_TRUE(parsed.ParseFromString(w.SerializeAsString()));
  auto back = FromWire(parsed);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->details.work.job_id, d.work.job_id);
  EXPECT_EQ(back->details.work.created_at_unix_ms, d.work.created_at_unix_ms);
  EXPECT_EQ(back->details.work.app, d.work.app);
  EXPECT_EQ(back->details.work.params, d.work.params);
  EXPECT_EQ(back->details.work.graph.path, d.work.graph.path);
  EXPECT_EQ(back->details.work.graph.format, d.work.graph.format);
  EXPECT_EQ(back->details.work.graph.undirected, d.work.graph.undirected);
  EXPECT_EQ(back->details.work.output, d.work.output);
  EXPECT_EQ(back->details.resume.checkpoint_dir, d.resume.checkpoint_dir);
  EXPECT_EQ(back->details.resume.attempt, 2u);
  EXPECT_EQ(back->details.resume.restore_from, d.resume.restore_from);
  EXPECT_EQ(back->details.resume.superstep, 20u);
  EXPECT_EQ(back->details.place.worker_index, d.place.worker_index);
  EXPECT_EQ(back->details.place.worker_count, d.place.worker_count);
  EXPECT_EQ(back->details.place.range_first, d.place.range_first);
  EXPECT_EQ(back->details.place.range_last, d.place.range_last);
  EXPECT_FALSE(back->details.place.coordinator) << "a worker's job is never the coordinator's";
  // Every job option a worker needs travels (defect: --max-supersteps stayed on the master).
  EXPECT_EQ(back->details.work.max_supersteps, 20000u);
  EXPECT_EQ(back->peer_timeout, std::chrono::milliseconds(45000));
  // The data plane.
  EXPECT_EQ(back->peer_addresses, a.peer_addresses);
  EXPECT_EQ(back->job_key, a.job_key);
  EXPECT_FALSE(back->relay_direct);
  EXPECT_EQ(back->max_batch_bytes, uint64_t{1} << 20);
}

TEST(WireTest, ARestoreNamesBothItsCheckpointAndItsSuperstep) {
  transport::Assignment a = SampleDetails();
  a.details.resume.restore_from = "/shared/checkpoints/x/superstep-0000000020";
  a.details.resume.superstep = 0;
  EXPECT_THAT(std::string(FromWire(ToWire(a)).status().message()), HasSubstr("a restore needs"));
  a.details.resume.restore_from.clear();
  a.details.resume.superstep = 20;
  EXPECT_FALSE(FromWire(ToWire(a)).ok());
}

TEST(WireTest, JobDetailsWithoutTheDataPlaneAreAnError) {
  for (int broken = 0; broken < 3; ++broken) {
    transport::Assignment a = SampleDetails();
    if (broken == 0) a.peer_addresses.pop_back();
    if (broken == 1) a.job_key = "short";
    if (broken == 2) a.max_batch_bytes = 0;
    EXPECT_FALSE(FromWire(ToWire(a)).ok()) << broken;
  }
}

TEST(WireTest, APeerAddressComesFromTheAdvertisedPortAndTheStreamsHost) {
  EXPECT_EQ(transport::PeerAddressFor("w1:7000", "ipv4:10.0.0.3:5123"), "w1:7000");
  EXPECT_EQ(transport::PeerAddressFor(":7000", "ipv4:10.0.0.3:5123"), "10.0.0.3:7000");
  EXPECT_EQ(transport::PeerAddressFor(":7000", "ipv6:[::1]:5123"), "[::1]:7000");
  EXPECT_EQ(transport::PeerAddressFor(":7000", "unix:/tmp/s"), "");
  EXPECT_EQ(transport::PeerAddressFor("", "ipv4:10.0.0.3:5123"), "");
}

TEST(WireTest, JobDetailsRangeBytesAreBigEndianUuids) {
  transport::Assignment a = SampleDetails();
  ASSERT_TRUE(bsp::ParseUuid("00112233-4455-6677-8899-aabbccddeeff", a.details.place.range_first));
  const v1::JobDetails w = ToWire(a);
  EXPECT_EQ(w.range_first(), std::string("\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd"
                                         "\xee\xff",
                                         16));
}

TEST(WireTest, JobDetailsWithABadRangeBoundIsAnError) {
  for (const std::string& bad : {std::string(), std::string(15, 'x'), std::string(17, 'x')}) {
    v1::JobDetails w = ToWire(SampleDetails());
    w.set_range_first(bad);
    auto first = FromWire(w);
    EXPECT_EQ(first.status().code(), absl::StatusCode::kInvalidArgument) << bad.size();
    EXPECT_THAT(std::string(first.status().message()), HasSubstr("16 bytes"));

    w = ToWire(SampleDetails());
    w.set_range_last(bad);
    EXPECT_EQ(FromWire(w).status().code(), absl::StatusCode::kInvalidArgument) << bad.size();
  }
}

TEST(WireTest, JobDetailsWithABadWorkerIndexIsAnError) {
  v1::JobDetails w = ToWire(SampleDetails());
  w.set_worker_index(4);  // of 4
  auto st = FromWire(w).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("worker 4 of 4"));

  w.set_worker_index(0);
  w.set_worker_count(0);
  EXPECT_EQ(FromWire(w).status().code(), absl::StatusCode::kInvalidArgument);

  w.set_worker_count(1);
  w.mutable_peer_addresses()->DeleteSubrange(1, 3);  // one worker, one address
  EXPECT_TRUE(FromWire(w).ok());

  w.set_max_supersteps(0);
  EXPECT_THAT(std::string(FromWire(w).status().message()), HasSubstr("no superstep limit"));
}

bsp::RelayBatch SampleBatch() {
  bsp::RelayBatch b;
  b.superstep = 7;
  b.from_partition = 3;
  b.to_partition = 1;
  b.coding = bsp::PositionCoding::kDeltas;
  b.positions = std::string("\x00\x81\x01\x00", 4);  // positions 0, 129, 129
  b.ids = {bsp::VertexIdFromExternal("a"), bsp::VertexIdFromExternal("b"),
           bsp::VertexIdFromExternal("42")};
  static constexpr char kPayload[] = "\x01\x00\x02\xff payload with a NUL";
  b.payload = std::string(kPayload, sizeof(kPayload) - 1);
  return b;
}

TEST(WireTest, RelayBatchRoundTrip) {
  const bsp::RelayBatch original = SampleBatch();
  v1::RelayBatch w = ToWire(bsp::RelayBatch(original));
  EXPECT_EQ(w.ids().size(), 3u * 16u);
  EXPECT_EQ(w.ids().substr(16, 16),
            std::string(reinterpret_cast<const char*>(original.ids[1].data), 16));
  v1::RelayBatch parsed;
  ASSERT_TRUE(parsed.ParseFromString(w.SerializeAsString()));
  auto back = FromWire(std::move(parsed));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->superstep, original.superstep);
  EXPECT_EQ(back->from_partition, original.from_partition);
  EXPECT_EQ(back->to_partition, original.to_partition);
  EXPECT_EQ(back->coding, original.coding);
  EXPECT_EQ(back->positions, original.positions);
  EXPECT_EQ(back->ids, original.ids);
  EXPECT_EQ(back->payload, original.payload);
}

TEST(WireTest, EveryPositionCodingRoundTrips) {
  for (auto coding : {bsp::PositionCoding::kNone, bsp::PositionCoding::kDeltas,
                      bsp::PositionCoding::kBitmap, bsp::PositionCoding::kAll}) {
    bsp::RelayBatch b = SampleBatch();
    b.coding = coding;
    b.published = coding == bsp::PositionCoding::kAll;
    v1::RelayBatch parsed;
    ASSERT_TRUE(parsed.ParseFromString(ToWire(std::move(b)).SerializeAsString()));
    auto back = FromWire(std::move(parsed));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->coding, coding);
    EXPECT_EQ(back->published, coding == bsp::PositionCoding::kAll);
  }
}

// A batch by position costs its positions and payload and a few bytes of header: no UUID.
TEST(WireTest, ABatchByPositionCarriesNoUuid) {
  bsp::RelayBatch b;
  b.superstep = 3;
  b.from_partition = 1;
  b.to_partition = 2;
  b.coding = bsp::PositionCoding::kAll;
  b.payload.assign(8 * 1000, 'x');  // a thousand doubles
  const std::string bytes = ToWire(std::move(b)).SerializeAsString();
  EXPECT_LE(bytes.size(), 8u * 1000u + 16u);
}

TEST(WireTest, RelayBatchWithAnUnknownCodingIsAnError) {
  v1::RelayBatch w = ToWire(SampleBatch());
  w.set_coding(static_cast<v1::RelayBatch::Coding>(9));
  v1::RelayBatch parsed;
  ASSERT_TRUE(parsed.ParseFromString(w.SerializeAsString()));
  auto back = FromWire(std::move(parsed));
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(back.status().message()),
              AllOf(HasSubstr("partition 3"), HasSubstr("unknown position coding 9")));
}

TEST(WireTest, EmptyRelayBatchRoundTrip) {
  auto back = FromWire(ToWire(bsp::RelayBatch{}));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->ids.empty());
  EXPECT_TRUE(back->positions.empty());
  EXPECT_EQ(back->coding, bsp::PositionCoding::kNone);
  EXPECT_TRUE(back->payload.empty());
}

TEST(WireTest, RelayBatchWithIdsNotAMultipleOf16BytesIsAnError) {
  v1::RelayBatch w = ToWire(SampleBatch());
  w.mutable_ids()->pop_back();
  auto back = FromWire(std::move(w));
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(back.status().message()), HasSubstr("partition 3"));
}

TEST(WireTest, StepRoundTrip) {
  protocol::Step s;
  s.barrier = protocol::Barrier::kPersistedResults;
  s.superstep = 12;
  s.aggregators = {{"a", std::string("\0\1", 2)}, {"b", "x"}};
  s.active = 1;
  s.messages = 2;
  s.unhalted = 3;
  s.stop = true;
  s.vertices = 4;
  s.part = {5, 6, 0xdeadbeef};
  v1::Step parsed;
  ASSERT_TRUE(parsed.ParseFromString(ToWire(s).SerializeAsString()));
  auto back = FromWire(parsed);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->checkpoint);
  EXPECT_EQ(back->barrier, s.barrier);
  EXPECT_EQ(back->superstep, 12u);
  EXPECT_EQ(back->aggregators, s.aggregators);
  EXPECT_EQ(
      std::make_tuple(back->active, back->messages, back->unhalted, back->stop, back->vertices),
      std::make_tuple(1u, 2u, 3u, true, 4u));
  EXPECT_EQ(back->part.vertices, 5u);
  EXPECT_EQ(back->part.bytes, 6u);
  EXPECT_EQ(back->part.crc32c, 0xdeadbeefu);
}

TEST(WireTest, ACheckpointStepRoundTrips) {
  protocol::Step release;
  release.barrier = protocol::Barrier::kPostKeepRunning;
  release.superstep = 4;
  release.checkpoint = true;
  auto back = FromWire(ToWire(release));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->checkpoint);
  protocol::Step entry;
  entry.barrier = protocol::Barrier::kCheckpoint;
  entry.superstep = 5;
  entry.part = {7, 8, 9};
  back = FromWire(ToWire(entry));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->position(), (protocol::Position{protocol::Barrier::kCheckpoint, 5}));
  EXPECT_EQ(back->part.bytes, 8u);
}

TEST(WireTest, AnUnknownStepTypeIsAnError) {
  v1::Step w;
  w.set_type(static_cast<v1::Step::Type>(42));
  EXPECT_THAT(std::string(FromWire(w).status().message()), HasSubstr("unsupported step type 42"));
  w.set_type(v1::Step::INVALID);
  EXPECT_FALSE(FromWire(w).ok());
}

}  // namespace
}  // namespace lockstep::dbsp
