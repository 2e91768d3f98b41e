// A binary of the user's own: the lockstep command line with one extra app next to the built-in
// ones. `indegree_example run indegree --graph g.el --out out.txt` runs it locally.
#include "cli/cli.h"
#include "cli/registry.h"
#include "indegree.h"

int main(int argc, char** argv) {
  lockstep::bsp::AppRegistry apps = lockstep::cli::BuiltinApps();
  apps.Add(example::InDegreeInfo());
  return lockstep::cli::Main(argc, argv, apps);
}
