#pragma once

// An in-process cluster's answer as a job would write it: every vertex's formatted value by its
// external ID, with the names taken from the whole input the test holds.

#include <cstdint>
#include <map>
#include <string>

#include "lockstep/bsp/app.h"
#include "lockstep/bsp/graph_input.h"
#include "util/engine_cluster.h"

namespace lockstep::test {

class InputNames final : public bsp::VertexNames {
 public:
  explicit InputNames(const bsp::GraphInput& input) : input_(input) {}
  void Append(uint32_t g, std::string& out) const override { out += input_.external_ids[g]; }

 private:
  const bsp::GraphInput& input_;
};

template <class App>
std::map<std::string, std::string> FormattedValues(EngineCluster<typename App::Program>& cluster,
                                                   const bsp::GraphInput& input) {
  std::map<std::string, std::string> output;
  const InputNames names(input);
  for (uint32_t p = 0; p < cluster.size(); ++p) {
    const auto& engine = cluster.engine(p);
    for (uint32_t v = 0; v < engine.topology().num_local(); ++v) {
      std::string& text = output[std::string(engine.topology().external_id(v))];
      if constexpr (requires(std::string & out) {
                      App::Format(engine.program(), engine.values()[v], names, out);
                    }) {
        App::Format(engine.program(), engine.values()[v], names, text);
      } else {
        App::Format(engine.program(), engine.values()[v], text);
      }
    }
  }
  return output;
}

}  // namespace lockstep::test
