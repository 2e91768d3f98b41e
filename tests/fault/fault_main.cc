// The `lockstep` command with the fault-injection apps registered beside the built-in ones: the
// master and the workers of the failure tests.
#include "fault_app.h"
#include "lockstep/cli/cli.h"
#include "lockstep/cli/registry.h"

int main(int argc, char** argv) {
  lockstep::catalogue::AppRegistry apps = lockstep::cli::BuiltinApps();
  apps.Add(lockstep::fault::FaultInfo());
  apps.Add(lockstep::fault::PoisonInfo());
  return lockstep::cli::Main(argc, argv, apps);
}
