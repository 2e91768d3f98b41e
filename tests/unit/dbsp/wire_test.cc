// Conversions between the engine's plain types and the wire protocol.
#include "lockstep/dbsp/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "lockstep/bsp/vertex_id.h"
#include "lockstep/partition/range.h"

namespace lockstep::dbsp {
namespace {

using ::testing::HasSubstr;

bsp::JobDetails SampleDetails() {
  bsp::JobDetails d;
  d.job_id = "20240102-030405-abcd";
  d.created_at_unix_ms = 1704164645123;
  d.app = "pagerank";
  d.params = {{"damping", "0.85"}, {"max-iterations", "20"}, {"tolerance", "0"}};
  d.graph = {"/data/graphs/example.properties", "graphalytics", true};
  d.output = "/out/.result.job.staging/part-00002";
  d.worker_index = 2;
  d.worker_count = 4;
  auto split = partition::Range::Whole(4);
  auto extents = split->Extents(2);
  d.range_first = extents->first;
  d.range_last = extents->second;
  return d;
}

TEST(WireTest, JobDetailsRoundTrip) {
  const bsp::JobDetails d = SampleDetails();
  const v1::JobDetails w = ToWire(d);
  EXPECT_EQ(w.range_first().size(), 16u);
  EXPECT_EQ(w.range_last().size(), 16u);
  // Through bytes, as the stream carries it.
  v1::JobDetails parsed;
  ASSERT_TRUE(parsed.ParseFromString(w.SerializeAsString()));
  auto back = FromWire(parsed);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->job_id, d.job_id);
  EXPECT_EQ(back->created_at_unix_ms, d.created_at_unix_ms);
  EXPECT_EQ(back->app, d.app);
  EXPECT_EQ(back->params, d.params);
  EXPECT_EQ(back->graph.path, d.graph.path);
  EXPECT_EQ(back->graph.format, d.graph.format);
  EXPECT_EQ(back->graph.undirected, d.graph.undirected);
  EXPECT_EQ(back->output, d.output);
  EXPECT_EQ(back->worker_index, d.worker_index);
  EXPECT_EQ(back->worker_count, d.worker_count);
  EXPECT_EQ(back->range_first, d.range_first);
  EXPECT_EQ(back->range_last, d.range_last);
  EXPECT_FALSE(back->coordinator) << "a worker's job is never the coordinator's";
}

TEST(WireTest, JobDetailsRangeBytesAreBigEndianUuids) {
  bsp::JobDetails d = SampleDetails();
  ASSERT_TRUE(bsp::ParseUuid("00112233-4455-6677-8899-aabbccddeeff", d.range_first));
  const v1::JobDetails w = ToWire(d);
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
  EXPECT_TRUE(FromWire(w).ok());
}

bsp::RelayBatch SampleBatch() {
  bsp::RelayBatch b;
  b.superstep = 7;
  b.from_partition = 3;
  b.to_partition = 1;
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
  EXPECT_EQ(back->ids, original.ids);
  EXPECT_EQ(back->payload, original.payload);
}

TEST(WireTest, EmptyRelayBatchRoundTrip) {
  auto back = FromWire(ToWire(bsp::RelayBatch{}));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->ids.empty());
  EXPECT_TRUE(back->payload.empty());
}

TEST(WireTest, RelayBatchWithIdsNotAMultipleOf16BytesIsAnError) {
  v1::RelayBatch w = ToWire(SampleBatch());
  w.mutable_ids()->pop_back();
  auto back = FromWire(std::move(w));
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(back.status().message()), HasSubstr("partition 3"));
}

}  // namespace
}  // namespace lockstep::dbsp
