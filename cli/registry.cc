#include "cli/registry.h"

#include "coloring/coloring.h"
#include "pagerank/pagerank.h"
#include "sssp/sssp.h"

namespace lockstep::cli {

bsp::AppRegistry BuiltinApps() {
  bsp::AppRegistry apps;
  apps.Add(apps::pagerank::Info());
  apps.Add(apps::sssp::Info());
  apps.Add(apps::coloring::Info());
  return apps;
}

}  // namespace lockstep::cli
