#include "flags.h"

#include <algorithm>
#include <limits>
#include <string>

namespace lockstep::cli {

const CLI::Validator kCount(
    [](std::string& text) -> std::string {
      const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                       [](char c) { return c >= '0' && c <= '9'; });
      return digits ? std::string() : "expected a whole number >= 0, got '" + text + "'";
    },
    "COUNT");

void AddThreadsOption(CLI::App* command, int& threads) {
  command
      ->add_option("--threads", threads, "threads for loading and compute (default: all cores)")
      // Not CLI::PositiveNumber: its error for 0 reads "Value 0 not in range 0 to 1.79e308".
      ->check(CLI::Range(1, std::numeric_limits<int>::max()));
}

}  // namespace lockstep::cli
