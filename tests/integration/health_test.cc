// The gRPC health service that Kubernetes' probes use: a master's readiness, a worker's liveness
// and readiness as it connects to and loses its master, over real sockets on loopback.
#include "lockstep/dbsp/health.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "lockstep/dbsp/master.h"
#include "lockstep/dbsp/settings.h"
#include "lockstep/dbsp/worker.h"

namespace lockstep::dbsp {
namespace {

using namespace std::chrono_literals;

std::string Status(int port, const std::string& service) {
  auto status = CheckHealth("127.0.0.1:" + std::to_string(port), service, 2s);
  return status.ok() ? *status : std::string(status.status().message());
}

// Polls until `service` at `port` reports `want`, for up to 10 s.
bool Becomes(int port, const std::string& service, const std::string& want) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Status(port, service) == want) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

TEST(HealthTest, AMasterServesItsReadinessUntilItShutsDown) {
  auto master = Master::Start("127.0.0.1:0");
  ASSERT_TRUE(master.ok()) << master.status();
  const int port = (*master)->port();
  EXPECT_EQ(Status(port, ""), "SERVING");
  EXPECT_EQ(Status(port, kMasterHealthService), "SERVING");
  EXPECT_NE(Status(port, "no.such.Service").find("unknown service no.such.Service"),
            std::string::npos);
  (*master)->Shutdown();
  EXPECT_NE(Status(port, "").find("127.0.0.1:" + std::to_string(port)), std::string::npos);
}

TEST(HealthTest, AWorkerIsLiveAlwaysAndReadyWhileConnectedToItsMaster) {
  auto master = Master::Start("127.0.0.1:0");
  ASSERT_TRUE(master.ok()) << master.status();
  const std::string address = "127.0.0.1:" + std::to_string((*master)->port());
  (*master)->Shutdown();  // the worker starts with no master to dial

  std::atomic<int> health_port{0};
  std::atomic<bool> stop{false};
  WorkerOptions options;
  options.master = address;
  options.health_address = "127.0.0.1:0";
  options.health_started = [&](int port) { health_port.store(port); };
  absl::Status served;
  std::thread worker([&] { served = ServeWorker(catalogue::AppRegistry(), options, stop); });
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (health_port.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  const int hp = health_port.load();
  ASSERT_NE(hp, 0);
  EXPECT_EQ(Status(hp, ""), "SERVING");
  EXPECT_EQ(Status(hp, kWorkerHealthService), "NOT_SERVING");

  auto again = Master::Start(address);  // a master appears at the address the worker dials
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(Becomes(hp, kWorkerHealthService, "SERVING"));
  (*again)->Shutdown();
  EXPECT_TRUE(Becomes(hp, kWorkerHealthService, "NOT_SERVING"));
  EXPECT_EQ(Status(hp, ""), "SERVING");

  stop.store(true);
  worker.join();
  EXPECT_TRUE(served.ok()) << served;
}

TEST(HealthTest, AHealthPortInUseIsAnErrorNamingTheSetting) {
  auto first = HealthServer::Start("127.0.0.1:0", kWorkerHealthService);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second =
      HealthServer::Start("127.0.0.1:" + std::to_string((*first)->port()), kWorkerHealthService);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(SettingName(Setting::kHealthPort)), std::string::npos);
}

TEST(HealthTest, ASecondMasterOnABusyPortIsRefused) {
  auto first = Master::Start("127.0.0.1:0");
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Master::Start("127.0.0.1:" + std::to_string((*first)->port()));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(SettingName(Setting::kListen)), std::string::npos);
}

}  // namespace
}  // namespace lockstep::dbsp
