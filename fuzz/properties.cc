// The Graphalytics .properties reader (ReadGraphalyticsProperties, over ReadProperties), on a
// file holding the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "input_file.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/load/graphalytics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = lockstep::fuzz::InputFile(data, size);
  if (path.empty()) return 0;
  (void)lockstep::load::ReadGraphalyticsProperties(path);
  return 0;
}
