#include "lockstep/cli/cli.h"
#include "lockstep/cli/registry.h"

int main(int argc, char** argv) {
  return lockstep::cli::Main(argc, argv, lockstep::cli::BuiltinApps());
}
