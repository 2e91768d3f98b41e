// The data plane between workers on loopback (docs/design.md §5.7): real peer servers and links,
// the collective all-to-all cut into bounded pieces, a job's key as its admission, and a peer
// that is gone named in the error.
#include "transport/peer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "job/peer_collective.h"

namespace lockstep::dbsp {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// A worker's receiving end for the tests: hands exchange pieces to its collective.
class CollectiveHandler final : public transport::PeerBatchHandler {
 public:
  explicit CollectiveHandler(job::PeerCollective& c) : collective_(c) {}
  grpc::Status OnPeerBatch(v1::PeerBatch& batch, const std::string&) override {
    if (!batch.has_chunk()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no chunk");
    ++batches;
    auto st = collective_.OnChunk(batch.from(), *batch.mutable_chunk());
    return st.ok() ? grpc::Status::OK
                   : grpc::Status(grpc::StatusCode::ABORTED, std::string(st.message()));
  }
  std::atomic<int> batches{0};

 private:
  job::PeerCollective& collective_;
};

// n workers in one process, each with its own peer server, links and collective.
struct Group {
  Group(uint32_t n, size_t piece_bytes, std::string key = std::string(16, 'k')) {
    std::vector<std::string> addresses;
    for (uint32_t w = 0; w < n; ++w) {
      auto server = transport::PeerServer::Start("127.0.0.1:0");
      EXPECT_TRUE(server.ok()) << server.status();
      addresses.push_back(absl::StrCat("127.0.0.1:", (*server)->port()));
      servers.push_back(std::move(*server));
    }
    for (uint32_t w = 0; w < n; ++w) {
      links.push_back(
          std::make_unique<transport::PeerLinks>(channels, addresses, w, key, 1 << 20, 10s));
      collectives.push_back(std::make_unique<job::PeerCollective>(*links[w], piece_bytes, 10s));
      handlers.push_back(std::make_unique<CollectiveHandler>(*collectives[w]));
      links[w]->SetFailureListener(
          [c = collectives[w].get()](const absl::Status& st) { c->Fail(st); });
    }
  }
  void RegisterAll(const std::string& key = std::string(16, 'k')) {
    for (size_t w = 0; w < servers.size(); ++w) servers[w]->Register(key, handlers[w].get());
  }
  ~Group() {
    for (auto& s : servers) {
      if (s) s->Unregister();
    }
  }

  transport::PeerChannels channels;
  std::vector<std::unique_ptr<transport::PeerServer>> servers;
  std::vector<std::unique_ptr<transport::PeerLinks>> links;
  std::vector<std::unique_ptr<job::PeerCollective>> collectives;
  std::vector<std::unique_ptr<CollectiveHandler>> handlers;
};

// What worker `from` sends worker `to` in round `round`: sizes from empty to several pieces.
std::string Payload(uint32_t from, uint32_t to, int round) {
  const size_t size = (from * 7919 + to * 104729 + round * 31) % 5000;
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>('a' + (from + to + i + round) % 26);
  return s;
}

TEST(PeerTest, AllToAllDeliversEveryPartInPiecesAcrossRounds) {
  constexpr uint32_t n = 4;
  Group g(n, 700);  // most parts take several pieces
  g.RegisterAll();
  std::vector<std::thread> threads;
  std::vector<std::string> errors(n);
  for (uint32_t w = 0; w < n; ++w) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < 3; ++round) {
        std::vector<std::string> out(n);
        for (uint32_t q = 0; q < n; ++q) out[q] = Payload(w, q, round);
        auto in = g.collectives[w]->AllToAll(std::move(out));
        if (!in.ok()) {
          errors[w] = std::string(in.status().message());
          return;
        }
        for (uint32_t p = 0; p < n; ++p) {
          if ((*in)[p] != Payload(p, w, round)) {
            errors[w] = absl::StrCat("round ", round, ": wrong bytes from ", p);
            return;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (uint32_t w = 0; w < n; ++w) EXPECT_EQ(errors[w], "") << "worker " << w;
  // Bounded pieces: more batches than one per peer and round.
  EXPECT_GT(g.handlers[0]->batches.load(), 3 * 3);
}

TEST(PeerTest, APeerThatHasNotStartedTheJobYetIsAskedAgain) {
  constexpr uint32_t n = 2;
  Group g(n, 1 << 20);
  g.servers[0]->Register(std::string(16, 'k'), g.handlers[0].get());
  std::thread late([&] {
    std::this_thread::sleep_for(300ms);  // worker 1 still reads its assignment
    g.servers[1]->Register(std::string(16, 'k'), g.handlers[1].get());
  });
  std::vector<absl::StatusOr<std::vector<std::string>>> in(n);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < n; ++w) {
    threads.emplace_back([&, w] { in[w] = g.collectives[w]->AllToAll({"to 0", "to 1"}); });
  }
  for (auto& t : threads) t.join();
  late.join();
  ASSERT_TRUE(in[0].ok()) << in[0].status();
  ASSERT_TRUE(in[1].ok()) << in[1].status();
  EXPECT_EQ((*in[0])[1], "to 0");
  EXPECT_EQ((*in[1])[0], "to 1");
}

TEST(PeerTest, ABatchOfAnotherJobIsRefusedAndNeverDelivered) {
  Group g(2, 1 << 20);
  g.RegisterAll(std::string(16, 'k'));
  // A sender of another job (its key differs) is refused until its own deadline.
  transport::PeerChannels channels;
  transport::PeerLinks stranger(channels,
                                {"127.0.0.1:1", absl::StrCat("127.0.0.1:", g.servers[1]->port())},
                                0, std::string(16, 'x'), 1 << 20, 500ms);
  v1::PeerBatch batch;
  batch.mutable_chunk()->set_last(true);
  ASSERT_TRUE(stranger.Send(1, batch).ok());
  const absl::Status st = stranger.Drain();
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("worker 1 (127.0.0.1:"));
  EXPECT_EQ(g.handlers[1]->batches.load(), 0);
}

TEST(PeerTest, APeerThatIsGoneFailsTheExchangeNamingIt) {
  Group g(2, 1 << 20);
  g.RegisterAll();
  g.servers[1].reset();  // worker 1's process is gone
  const auto start = std::chrono::steady_clock::now();
  auto in = g.collectives[0]->AllToAll({"", "to 1"});
  ASSERT_FALSE(in.ok());
  EXPECT_THAT(std::string(in.status().message()), HasSubstr("worker 1 (127.0.0.1:"));
  // Asked again for the connect grace, well before the 10 s peer timeout.
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, transport::PeerLinks::kConnectGrace / 2);
  EXPECT_LT(took, 8s);
}

TEST(PeerTest, APeerThatCannotBeReachedForAMomentIsAskedAgain) {
  constexpr uint32_t n = 2;
  Group g(n, 1 << 20);
  g.RegisterAll();
  // Worker 1 does not accept connections for 300 ms: the calls to it never left worker 0.
  const int port = g.servers[1]->port();
  g.servers[1].reset();
  std::thread back([&] {
    std::this_thread::sleep_for(300ms);
    auto server = transport::PeerServer::Start(absl::StrCat("127.0.0.1:", port));
    ASSERT_TRUE(server.ok()) << server.status();
    (*server)->Register(std::string(16, 'k'), g.handlers[1].get());
    g.servers[1] = std::move(*server);
  });
  std::vector<absl::StatusOr<std::vector<std::string>>> in(n);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < n; ++w) {
    threads.emplace_back([&, w] { in[w] = g.collectives[w]->AllToAll({"to 0", "to 1"}); });
  }
  for (auto& t : threads) t.join();
  back.join();
  ASSERT_TRUE(in[0].ok()) << in[0].status();
  ASSERT_TRUE(in[1].ok()) << in[1].status();
  EXPECT_EQ((*in[1])[0], "to 1");
}

}  // namespace
}  // namespace lockstep::dbsp
