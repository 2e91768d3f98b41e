// The wording of input errors, shared by the whole-graph and the partitioned loader so that they
// say the same. Private to the load library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::load::text {

std::string ListedTwiceMessage(std::string_view token, uint64_t first_line);
std::string UnlistedVertexMessage(std::string_view token, const std::string& vertex_file);
// An edge without a weight at a line of `error_file`, where line `weight_line` of `weight_file`
// has one (the file is named only if it is another).
std::string MissingWeightMessage(std::string_view error_file, std::string_view weight_file,
                                 uint64_t weight_line);
// A weight that is negative or infinite.
std::string BadWeightMessage(double weight, std::string_view token);

}  // namespace lockstep::load::text
