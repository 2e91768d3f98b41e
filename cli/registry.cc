#include "cli/registry.h"

#include "bfs/bfs.h"
#include "cdlp/cdlp.h"
#include "coloring/coloring.h"
#include "lcc/lcc.h"
#include "pagerank/pagerank.h"
#include "sssp/sssp.h"
#include "wcc/wcc.h"

namespace lockstep::cli {

bsp::AppRegistry BuiltinApps() {
  bsp::AppRegistry apps;
  apps.Add(apps::pagerank::Info());
  apps.Add(apps::sssp::Info());
  apps.Add(apps::coloring::Info());
  apps.Add(apps::bfs::Info());
  apps.Add(apps::wcc::Info());
  apps.Add(apps::cdlp::Info());
  apps.Add(apps::lcc::Info());
  return apps;
}

}  // namespace lockstep::cli
