// A binary of the user's own: the lockstep command line with one extra app next to the built-in
// ones. `minreach_example run minreach --graph g.el --out out.txt` runs it locally.
#include "lockstep/cli/cli.h"
#include "lockstep/cli/registry.h"
#include "minreach.h"

int main(int argc, char** argv) {
  lockstep::catalogue::AppRegistry apps = lockstep::cli::BuiltinApps();
  apps.Add(example::MinReachInfo());
  return lockstep::cli::Main(argc, argv, apps);
}
