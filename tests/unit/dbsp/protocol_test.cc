// The master's JobCoordinator as a state machine over fake payloads (DESIGN.md §4): no sockets, a
// `send` that records what the master would write on each worker's stream.
#include "lockstep/dbsp/coordinator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/v1/jobqueue.pb.h"

namespace lockstep::dbsp {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

// How long a wait that must not return is given before the test calls it blocked.
constexpr auto kBlocked = 100ms;

struct Sent {
  uint32_t worker;
  v1::MasterPayload payload;
};

// Records the coordinator's writes, in order, from any thread.
class Outbox {
 public:
  JobCoordinator::Send Sender() {
    return [this](uint32_t worker, v1::MasterPayload payload) {
      std::lock_guard<std::mutex> lock(mu_);
      sent_.push_back({worker, std::move(payload)});
    };
  }
  std::vector<Sent> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(sent_, {});
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_.size();
  }

 private:
  std::mutex mu_;
  std::vector<Sent> sent_;
};

v1::WorkerPayload StepPayload(v1::Step::Type type, uint64_t superstep, uint64_t active = 0) {
  v1::WorkerPayload payload;
  payload.mutable_step()->set_type(type);
  payload.mutable_step()->set_superstep(superstep);
  payload.mutable_step()->set_active(active);
  return payload;
}

v1::WorkerPayload RelayPayload(uint32_t from, uint32_t to, size_t id_bytes,
                               const std::string& data = "xyz") {
  v1::WorkerPayload payload;
  v1::RelayBatch* relay = payload.mutable_relay();
  relay->set_superstep(0);
  relay->set_from_partition(from);
  relay->set_to_partition(to);
  std::string ids(id_bytes, '\0');
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<char>(i * 7 + from);
  relay->set_ids(ids);
  relay->set_payload(data);
  return payload;
}

v1::Step Release(v1::Step::Type type, uint64_t superstep, bool stop = false) {
  v1::Step step;
  step.set_type(type);
  step.set_superstep(superstep);
  step.set_stop(stop);
  return step;
}

class CoordinatorTest : public ::testing::Test {
 protected:
  static std::vector<std::string> Names() {
    return {"worker 0 (ipv4:10.0.0.1:4000)", "worker 1 (ipv4:10.0.0.2:4000)",
            "worker 2 (ipv4:10.0.0.3:4000)"};
  }

  // All three workers enter `type` of `superstep`; the master waits for them and releases.
  void Barrier(v1::Step::Type type, uint64_t superstep, bool stop = false) {
    SCOPED_TRACE(v1::Step::Type_Name(type) + " of superstep " + std::to_string(superstep));
    for (uint32_t w = 0; w < 3; ++w) {
      ASSERT_TRUE(coordinator_.OnPayload(w, StepPayload(type, superstep)).ok())
          << coordinator_.status();
    }
    auto entries = coordinator_.WaitAll(type, superstep);
    ASSERT_TRUE(entries.ok()) << entries.status();
    ASSERT_EQ(entries->size(), 3u);
    for (const v1::Step& e : *entries) EXPECT_EQ(e.type(), type);
    coordinator_.ReleaseAll(Release(type, superstep, stop));
  }

  // Worker 0 breaks the protocol with `payload`; the job must be aborted with a reason naming it.
  void ExpectViolation(uint32_t worker, v1::WorkerPayload payload, const std::string& detail) {
    const absl::Status st = coordinator_.OnPayload(worker, std::move(payload));
    EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
    EXPECT_THAT(std::string(st.message()), AllOf(HasSubstr(Names()[worker]), HasSubstr(detail)));
    EXPECT_EQ(coordinator_.status(), st);
  }

  Outbox outbox_;
  JobCoordinator coordinator_{Names(), outbox_.Sender()};
};

TEST_F(CoordinatorTest, WaitAllBlocksUntilEveryWorkerEntersAndReturnsEntriesInWorkerOrder) {
  EXPECT_EQ(coordinator_.num_workers(), 3u);
  auto waiting =
      std::async(std::launch::async, [&] { return coordinator_.WaitAll(v1::Step::PRE, 0); });
  ASSERT_EQ(waiting.wait_for(kBlocked), std::future_status::timeout);
  ASSERT_TRUE(coordinator_.OnPayload(2, StepPayload(v1::Step::PRE, 0, 102)).ok());
  ASSERT_EQ(waiting.wait_for(kBlocked), std::future_status::timeout);
  ASSERT_TRUE(coordinator_.OnPayload(0, StepPayload(v1::Step::PRE, 0, 100)).ok());
  ASSERT_EQ(waiting.wait_for(kBlocked), std::future_status::timeout)
      << "WaitAll returned with two of three workers in the barrier";
  ASSERT_TRUE(coordinator_.OnPayload(1, StepPayload(v1::Step::PRE, 0, 101)).ok());
  ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
  auto entries = waiting.get();
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 3u);
  for (uint32_t w = 0; w < 3; ++w) {
    EXPECT_EQ((*entries)[w].type(), v1::Step::PRE);
    EXPECT_EQ((*entries)[w].active(), 100 + w) << "entries are not in worker order";
  }
  EXPECT_EQ(outbox_.size(), 0u) << "nothing is sent before the release";
}

TEST_F(CoordinatorTest, ReleaseAllSendsTheReleaseToEveryWorker) {
  for (uint32_t w = 0; w < 3; ++w)
    ASSERT_TRUE(coordinator_.OnPayload(w, StepPayload(v1::Step::PRE, 0)).ok());
  ASSERT_TRUE(coordinator_.WaitAll(v1::Step::PRE, 0).ok());
  v1::Step release = Release(v1::Step::PRE, 0);
  release.set_active(42);
  coordinator_.ReleaseAll(release);
  const std::vector<Sent> sent = outbox_.Take();
  ASSERT_EQ(sent.size(), 3u);
  for (uint32_t w = 0; w < 3; ++w) {
    EXPECT_EQ(sent[w].worker, w);
    ASSERT_TRUE(sent[w].payload.has_step());
    EXPECT_EQ(sent[w].payload.step().SerializeAsString(), release.SerializeAsString());
  }
}

TEST_F(CoordinatorTest, FullJobSequence) {
  Barrier(v1::Step::PRE, 0);
  Barrier(v1::Step::POST, 0);
  Barrier(v1::Step::POST_KEEP_RUNNING, 0, /*stop=*/false);
  Barrier(v1::Step::PRE, 1);
  Barrier(v1::Step::POST, 1);
  Barrier(v1::Step::POST_KEEP_RUNNING, 1, /*stop=*/true);
  Barrier(v1::Step::EXECUTED_GRAPH, 1);
  Barrier(v1::Step::PERSISTED_RESULTS, 1);
  Barrier(v1::Step::COMPLETED_JOB, 1);
  EXPECT_TRUE(coordinator_.status().ok()) << coordinator_.status();
  const std::vector<Sent> sent = outbox_.Take();
  ASSERT_EQ(sent.size(), 9u * 3u);
  const v1::Step::Type order[] = {v1::Step::PRE,
                                  v1::Step::POST,
                                  v1::Step::POST_KEEP_RUNNING,
                                  v1::Step::PRE,
                                  v1::Step::POST,
                                  v1::Step::POST_KEEP_RUNNING,
                                  v1::Step::EXECUTED_GRAPH,
                                  v1::Step::PERSISTED_RESULTS,
                                  v1::Step::COMPLETED_JOB};
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].worker, i % 3);
    EXPECT_EQ(sent[i].payload.step().type(), order[i / 3]) << i;
  }
  // Nothing follows COMPLETED_JOB.
  ExpectViolation(1, StepPayload(v1::Step::PRE, 2), "PRE");
}

TEST_F(CoordinatorTest, KeepRunningOpensTheNextSuperstepNotTheEnd) {
  Barrier(v1::Step::PRE, 0);
  Barrier(v1::Step::POST, 0);
  Barrier(v1::Step::POST_KEEP_RUNNING, 0, /*stop=*/false);
  ExpectViolation(2, StepPayload(v1::Step::EXECUTED_GRAPH, 0), "EXECUTED_GRAPH");
}

TEST_F(CoordinatorTest, StopOpensTheEndNotTheNextSuperstep) {
  Barrier(v1::Step::PRE, 0);
  Barrier(v1::Step::POST, 0);
  Barrier(v1::Step::POST_KEEP_RUNNING, 0, /*stop=*/true);
  ExpectViolation(2, StepPayload(v1::Step::PRE, 1), "PRE of superstep 1");
}

TEST_F(CoordinatorTest, DuplicateEntryAbortsNamingTheWorker) {
  ASSERT_TRUE(coordinator_.OnPayload(1, StepPayload(v1::Step::PRE, 0)).ok());
  ExpectViolation(1, StepPayload(v1::Step::PRE, 0), "PRE of superstep 0");
  EXPECT_THAT(std::string(coordinator_.status().message()), Not(HasSubstr(Names()[0])));
  // The job stays aborted: later payloads and waits see the same reason.
  const absl::Status aborted = coordinator_.status();
  EXPECT_EQ(coordinator_.OnPayload(0, StepPayload(v1::Step::PRE, 0)), aborted);
  EXPECT_EQ(coordinator_.WaitAll(v1::Step::PRE, 0).status(), aborted);
}

TEST_F(CoordinatorTest, PostWhilePreIsOpenAborts) {
  ASSERT_TRUE(coordinator_.OnPayload(0, StepPayload(v1::Step::PRE, 0)).ok());
  ExpectViolation(2, StepPayload(v1::Step::POST, 0), "POST of superstep 0");
}

TEST_F(CoordinatorTest, NextSuperstepWhilePreIsOpenAborts) {
  ExpectViolation(0, StepPayload(v1::Step::PRE, 1), "PRE of superstep 1");
}

TEST_F(CoordinatorTest, EnteringTheNextBarrierBeforeTheReleaseAborts) {
  for (uint32_t w = 0; w < 3; ++w)
    ASSERT_TRUE(coordinator_.OnPayload(w, StepPayload(v1::Step::PRE, 0)).ok());
  // Worker 2 moves on to POST before the master has released PRE.
  ExpectViolation(2, StepPayload(v1::Step::POST, 0), "POST of superstep 0");
}

class UnknownStepTypeTest : public CoordinatorTest, public ::testing::WithParamInterface<int> {};

TEST_P(UnknownStepTypeTest, Aborts) {
  v1::WorkerPayload payload = StepPayload(static_cast<v1::Step::Type>(GetParam()), 0);
  ExpectViolation(1, std::move(payload), "step type " + std::to_string(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Types, UnknownStepTypeTest, ::testing::Values(0, 42, -1));

TEST_F(CoordinatorTest, UnknownStepTypeFromTheWireAborts) {
  // A newer peer's enum value arrives as an unknown number on the wire.
  v1::Step step;
  step.set_superstep(0);
  std::string bytes = step.SerializeAsString();
  bytes += std::string("\x08\x2a", 2);  // field 1 (type), varint 42
  v1::WorkerPayload payload;
  ASSERT_TRUE(payload.mutable_step()->ParseFromString(bytes));
  ExpectViolation(0, std::move(payload), "step type 42");
}

TEST_F(CoordinatorTest, EmptyPayloadAborts) { ExpectViolation(2, v1::WorkerPayload(), "empty"); }

TEST_F(CoordinatorTest, RelayToAPartitionThatDoesNotExistAborts) {
  ExpectViolation(0, RelayPayload(0, 3, 16), "partition 3");
  EXPECT_EQ(outbox_.size(), 0u);
  EXPECT_EQ(coordinator_.relayed_batches(), 0u);
}

TEST_F(CoordinatorTest, RelayToTheSenderItselfAborts) {
  ExpectViolation(1, RelayPayload(1, 1, 16), "partition 1");
  EXPECT_EQ(outbox_.size(), 0u);
}

TEST_F(CoordinatorTest, RelayAsAnotherPartitionAborts) {
  ExpectViolation(1, RelayPayload(0, 2, 16), "as partition 0");
  EXPECT_EQ(outbox_.size(), 0u);
}

TEST_F(CoordinatorTest, RelayWithIdsNotAMultipleOf16BytesAborts) {
  ExpectViolation(2, RelayPayload(2, 0, 17), "16 bytes");
  EXPECT_EQ(outbox_.size(), 0u);
  EXPECT_EQ(coordinator_.relayed_bytes(), 0u);
}

TEST_F(CoordinatorTest, RelayIsForwardedUnchangedBeforeTheSendersNextEntryIsCounted) {
  Barrier(v1::Step::PRE, 0);
  outbox_.Take();
  // Compute of superstep 0: worker 0 relays to worker 1, then enters POST.
  const v1::WorkerPayload relay = RelayPayload(0, 1, 48, "three messages");
  ASSERT_TRUE(coordinator_.OnPayload(0, relay).ok()) << coordinator_.status();
  {
    // Queued on the destination's stream by the time OnPayload returns, unchanged.
    const std::vector<Sent> sent = outbox_.Take();
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].worker, 1u);
    ASSERT_TRUE(sent[0].payload.has_relay());
    EXPECT_EQ(sent[0].payload.relay().SerializeAsString(), relay.relay().SerializeAsString());
  }
  ASSERT_TRUE(coordinator_.OnPayload(0, StepPayload(v1::Step::POST, 0)).ok());
  ASSERT_TRUE(coordinator_.OnPayload(2, RelayPayload(2, 1, 16)).ok());
  ASSERT_TRUE(coordinator_.OnPayload(2, StepPayload(v1::Step::POST, 0)).ok());
  ASSERT_TRUE(coordinator_.OnPayload(1, StepPayload(v1::Step::POST, 0)).ok());
  ASSERT_TRUE(coordinator_.WaitAll(v1::Step::POST, 0).ok());
  coordinator_.ReleaseAll(Release(v1::Step::POST, 0));
  // On worker 1's stream both batches precede the release of POST.
  std::vector<std::string> to_worker_1;
  for (const Sent& s : outbox_.Take()) {
    if (s.worker != 1) continue;
    to_worker_1.push_back(s.payload.has_relay()
                              ? "relay from " + std::to_string(s.payload.relay().from_partition())
                              : v1::Step::Type_Name(s.payload.step().type()));
  }
  EXPECT_THAT(to_worker_1, ::testing::ElementsAre("relay from 2", "POST"));
  EXPECT_EQ(coordinator_.relayed_batches(), 2u);
}

TEST_F(CoordinatorTest, CountsRelayedBatchesAndBytes) {
  EXPECT_EQ(coordinator_.relayed_batches(), 0u);
  EXPECT_EQ(coordinator_.relayed_bytes(), 0u);
  Barrier(v1::Step::PRE, 0);
  outbox_.Take();
  ASSERT_TRUE(coordinator_.OnPayload(0, RelayPayload(0, 2, 32, "12345")).ok());
  ASSERT_TRUE(coordinator_.OnPayload(2, RelayPayload(2, 1, 16, "abc")).ok());
  EXPECT_EQ(coordinator_.relayed_batches(), 2u);
  EXPECT_EQ(coordinator_.relayed_bytes(), 32u + 5u + 16u + 3u);
}

TEST_F(CoordinatorTest, RelayOutsideItsSuperstepAborts) {
  // Before PRE(0) is released no batch of superstep 0 may travel.
  ExpectViolation(0, RelayPayload(0, 1, 16), "while the job is at PRE of superstep 0");
}

TEST_F(CoordinatorTest, RelayOfAnotherSuperstepAborts) {
  Barrier(v1::Step::PRE, 0);
  v1::WorkerPayload late = RelayPayload(0, 1, 16);
  late.mutable_relay()->set_superstep(1);
  ExpectViolation(0, std::move(late), "relay batch of superstep 1");
}

TEST_F(CoordinatorTest, RelayAfterTheSendersPostEntryAborts) {
  Barrier(v1::Step::PRE, 0);
  ASSERT_TRUE(coordinator_.OnPayload(0, StepPayload(v1::Step::POST, 0)).ok());
  ExpectViolation(0, RelayPayload(0, 1, 16), "after its own entry");
}

TEST_F(CoordinatorTest, RelayAfterAbortIsNotForwarded) {
  coordinator_.Abort(absl::CancelledError("master is shutting down"));
  EXPECT_EQ(coordinator_.OnPayload(0, RelayPayload(0, 1, 16)).code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(outbox_.size(), 0u);
  EXPECT_EQ(coordinator_.relayed_batches(), 0u);
}

TEST_F(CoordinatorTest, FailureReportAbortsWithTheWorkersReason) {
  v1::WorkerPayload failure;
  failure.mutable_failure()->set_reason("compute failed for vertex 'v7': boom");
  ExpectViolation(2, std::move(failure), "compute failed for vertex 'v7': boom");
}

TEST_F(CoordinatorTest, AbortWakesABlockedWaitAllWithTheReason) {
  ASSERT_TRUE(coordinator_.OnPayload(0, StepPayload(v1::Step::PRE, 0)).ok());
  auto waiting =
      std::async(std::launch::async, [&] { return coordinator_.WaitAll(v1::Step::PRE, 0); });
  ASSERT_EQ(waiting.wait_for(kBlocked), std::future_status::timeout);
  coordinator_.Abort(absl::UnavailableError("worker 2 (ipv4:10.0.0.3:4000) disconnected"));
  ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
  const absl::Status st = waiting.get().status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(st.message()), HasSubstr("worker 2 (ipv4:10.0.0.3:4000) disconnected"));
}

TEST_F(CoordinatorTest, ViolationWakesABlockedWaitAll) {
  auto waiting =
      std::async(std::launch::async, [&] { return coordinator_.WaitAll(v1::Step::PRE, 0); });
  ASSERT_EQ(waiting.wait_for(kBlocked), std::future_status::timeout);
  ASSERT_FALSE(coordinator_.OnPayload(1, StepPayload(v1::Step::POST, 0)).ok());
  ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
  EXPECT_THAT(std::string(waiting.get().status().message()), HasSubstr(Names()[1]));
}

TEST_F(CoordinatorTest, FirstAbortReasonWins) {
  coordinator_.Abort(absl::DeadlineExceededError("first"));
  coordinator_.Abort(absl::InternalError("second"));
  v1::WorkerPayload failure;
  failure.mutable_failure()->set_reason("third");
  EXPECT_EQ(coordinator_.OnPayload(0, std::move(failure)), absl::DeadlineExceededError("first"));
  EXPECT_EQ(coordinator_.status(), absl::DeadlineExceededError("first"));
}

TEST_F(CoordinatorTest, AbortWithoutAReasonStillFailsTheJob) {
  coordinator_.Abort(absl::OkStatus());
  EXPECT_EQ(coordinator_.status().code(), absl::StatusCode::kAborted);
  EXPECT_FALSE(coordinator_.WaitAll(v1::Step::PRE, 0).ok());
}

TEST_F(CoordinatorTest, ReleaseAfterAbortSendsNothing) {
  for (uint32_t w = 0; w < 3; ++w)
    ASSERT_TRUE(coordinator_.OnPayload(w, StepPayload(v1::Step::PRE, 0)).ok());
  coordinator_.Abort(absl::CancelledError("cancelled"));
  coordinator_.ReleaseAll(Release(v1::Step::PRE, 0));
  EXPECT_EQ(outbox_.size(), 0u);
}

TEST_F(CoordinatorTest, MasterWaitingForTheWrongBarrierIsAnInternalError) {
  EXPECT_EQ(coordinator_.WaitAll(v1::Step::POST, 0).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(coordinator_.WaitAll(v1::Step::PRE, 1).status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace lockstep::dbsp
