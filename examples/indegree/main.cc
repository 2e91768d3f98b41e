// A binary of the user's own: the lockstep command line with one extra app next to the built-in
// ones. `indegree_example run indegree --graph g.el --out out.txt` runs it locally.
#include "indegree.h"
#include "lockstep/cli/cli.h"
#include "lockstep/cli/registry.h"

int main(int argc, char** argv) {
  lockstep::catalogue::AppRegistry apps = lockstep::cli::BuiltinApps();
  apps.Add(example::InDegreeInfo());
  return lockstep::cli::Main(argc, argv, apps);
}
