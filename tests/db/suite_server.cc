#include "suite_server.h"

#include <gtest/gtest.h>

namespace lockstep::test {
namespace {

PostgresServer* server = nullptr;

class StopServer : public ::testing::Environment {
 public:
  void TearDown() override {
    delete server;
    server = nullptr;
  }
};
::testing::Environment* const stop = ::testing::AddGlobalTestEnvironment(new StopServer);

}  // namespace

PostgresServer& SuiteServer() {
  if (server == nullptr) server = new PostgresServer();
  return *server;
}

}  // namespace lockstep::test
