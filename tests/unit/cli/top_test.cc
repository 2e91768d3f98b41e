// `run --top K`: the K largest values of a result file, ties by ID order, each line as the file
// has it; a vertex the source does not reach is not among the largest.
#include "lockstep/cli/top.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "util/temp_dir.h"

namespace lockstep::cli {
namespace {

std::string Top(const std::string& path, size_t k, std::string_view unreachable) {
  std::ostringstream out;
  const absl::Status st = PrintTop(path, k, unreachable, out);
  EXPECT_TRUE(st.ok()) << st;
  return out.str();
}

TEST(TopTest, LargestValuesFirstTiesByIdOrder) {
  test::TempDir dir("lockstep-top");
  const std::string path = dir.Write("r.txt", "b 0.5\n10 0.25\na 0.5\n9 0.25\nc 1e-3\n");
  EXPECT_EQ(Top(path, 3, ""), "a 0.5\nb 0.5\n9 0.25\n");
  EXPECT_EQ(Top(path, 9, ""), "a 0.5\nb 0.5\n9 0.25\n10 0.25\nc 1e-3\n");
  EXPECT_EQ(Top(path, 0, ""), "");
}

TEST(TopTest, UnreachableVerticesAreNotTheLargest) {
  test::TempDir dir("lockstep-top");
  const std::string sssp = dir.Write("d.txt", "s 0\nx Infinity\na 1\ny Infinity\nt 3.5\n");
  EXPECT_EQ(Top(sssp, 3, "Infinity"), "t 3.5\na 1\ns 0\n");
  EXPECT_EQ(Top(sssp, 9, "Infinity"), "t 3.5\na 1\ns 0\n");
  const std::string bfs =
      dir.Write("b.txt", "s 0\nx 9223372036854775807\na 1\ny 9223372036854775807\nt 2\n");
  EXPECT_EQ(Top(bfs, 2, "9223372036854775807"), "t 2\na 1\n");
}

}  // namespace
}  // namespace lockstep::cli
