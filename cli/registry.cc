#include "lockstep/cli/registry.h"

#include "lockstep/apps/bfs/bfs.h"
#include "lockstep/apps/cdlp/cdlp.h"
#include "lockstep/apps/coloring/coloring.h"
#include "lockstep/apps/lcc/lcc.h"
#include "lockstep/apps/pagerank/pagerank.h"
#include "lockstep/apps/sssp/sssp.h"
#include "lockstep/apps/wcc/wcc.h"

namespace lockstep::cli {

catalogue::AppRegistry BuiltinApps() {
  catalogue::AppRegistry apps;
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
