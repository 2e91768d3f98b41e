#include "cli/cli.h"
#include "cli/registry.h"

int main(int argc, char** argv) {
  return lockstep::cli::Main(argc, argv, lockstep::cli::BuiltinApps());
}
