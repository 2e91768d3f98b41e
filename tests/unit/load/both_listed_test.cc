// `--symmetric` (GraphSource::both_listed, load/text/both_listed.h): an edge list that holds
// every edge in both directions loads as the list of its edges from their lower end read
// undirected, whatever the order of its lines, its ID kinds, its weights and its chunks; an edge
// without its reverse is an error naming its file and line (a table's: the table and the edge).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/load/source.h"
#include "tbb/task_arena.h"
#include "util/temp_dir.h"

namespace lockstep::load {
namespace {

using bsp::GraphInput;
using bsp::WeightUse;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class BothListedTest : public ::testing::Test {
 protected:
  absl::StatusOr<GraphInput> Load(const std::string& name, const std::string& text,
                                  bool both_listed, WeightUse use = WeightUse::kNonNegative) {
    return LoadGraph(
        {.path = dir_.Write(name, text), .undirected = true, .both_listed = both_listed}, use);
  }
  // The error of loading `text` --symmetric, which must fail with InvalidArgument.
  std::string ErrorOf(const std::string& text, WeightUse use = WeightUse::kNonNegative) {
    auto g = Load("bad.el", text, true, use);
    EXPECT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(g.status().message());
  }
  std::string PathOf(const std::string& name) const { return (dir_.path() / name).string(); }

  test::TempDir dir_;
};

// Loading `both` --symmetric gives exactly what loading `half` --undirected gives.
void ExpectSameInput(const absl::StatusOr<GraphInput>& both,
                     const absl::StatusOr<GraphInput>& half) {
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(both->external_ids, half->external_ids);
  EXPECT_EQ(both->src, half->src);
  EXPECT_EQ(both->dst, half->dst);
  EXPECT_EQ(both->weights, half->weights);
  EXPECT_TRUE(both->symmetric);
  EXPECT_FALSE(both->directed);
  EXPECT_EQ(both->num_reverse, half->num_reverse);
}

TEST_F(BothListedTest, KeepsEachPairOnceFromItsLowerEndInInputOrder) {
  // Reverses before and after their edges, a self-loop (its own reverse), parallel edges listed
  // twice each way, comments and blank lines.
  const std::string both =
      "# a symmetric graph\n3 1 2\n1 2 0.5\n2 2 4\n\n2 1 0.5\n1 3 2\n1 2 0.5\n2 1 0.5\n";
  const std::string half = "1 2 0.5\n2 2 4\n1 3 2\n1 2 0.5\n";
  ExpectSameInput(Load("both.el", both, true), Load("half.el", half, false));
  const auto g = Load("both.el", both, true);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->num_stored_edges(), 4u);
  EXPECT_EQ(g->num_edges(), 7u);
  EXPECT_THAT(g->weights, ElementsAre(0.5, 4, 2, 0.5));
  // Without weights read, the same edges.
  ExpectSameInput(Load("both.el", both, true, WeightUse::kIgnore),
                  Load("half.el", half, false, WeightUse::kIgnore));
}

TEST_F(BothListedTest, TextIdsPairByTheirOrderAndZeroPairsWithMinusZero) {
  ExpectSameInput(Load("both.el", "cat ant 0\nant cat -0\nbee ant 1e-3\nant bee 0.001\n", true),
                  Load("half.el", "ant cat -0\nant bee 0.001\n", false));
  // Integer IDs go before text ones (ExternalIdLess): 9 is the lower end of 9 -- a.
  ExpectSameInput(Load("both.el", "a 9\n9 a\n", true), Load("half.el", "9 a\n", false));
}

// A graph large enough to be parsed in many chunks, its lines shuffled.
TEST_F(BothListedTest, AShuffledGraphOfManyChunksLoadsAsItsHalf) {
  tbb::task_arena arena(4);
  std::mt19937 random(5);
  std::uniform_int_distribution<uint32_t> vertex(0, 20000), weight(1, 9);
  std::vector<std::string> lines;
  std::string half;
  for (int i = 0; i < 60000; ++i) {
    const uint32_t a = vertex(random), b = vertex(random), w = weight(random);
    const std::string fw = std::to_string(a) + " " + std::to_string(b) + " " + std::to_string(w);
    const std::string bw = std::to_string(b) + " " + std::to_string(a) + " " + std::to_string(w);
    lines.push_back(fw);
    if (a != b) lines.push_back(bw);
  }
  std::shuffle(lines.begin(), lines.end(), random);
  std::string both;
  for (const std::string& line : lines) {
    both += line + "\n";
    const size_t space = line.find(' ');
    if (std::stoul(line.substr(0, space)) <= std::stoul(line.substr(space + 1)))
      half += line + "\n";
  }
  arena.execute(
      [&] { ExpectSameInput(Load("both.el", both, true), Load("half.el", half, false)); });
  // One line gone, far into the file (the first there that is not a self-loop): the first
  // listing of its reverse is the edge without one, and the error names its line.
  size_t begin = both.rfind('\n', both.size() * 3 / 4) + 1;
  std::string line, a, b, w;
  for (;; begin += line.size() + 1) {
    line = both.substr(begin, both.find('\n', begin) - begin);
    const size_t s1 = line.find(' '), s2 = line.find(' ', s1 + 1);
    a = line.substr(0, s1);
    b = line.substr(s1 + 1, s2 - s1 - 1);
    w = line.substr(s2 + 1);
    if (a != b) break;
  }
  const std::string rest = both.substr(0, begin) + both.substr(begin + line.size() + 1);
  const size_t found = ("\n" + rest).find("\n" + b + " " + a + " " + w + "\n");
  ASSERT_NE(found, std::string::npos);
  const size_t line_no = std::count(rest.begin(), rest.begin() + found, '\n') + 1;
  arena.execute([&] {
    EXPECT_THAT(ErrorOf(rest),
                StartsWith(PathOf("bad.el") + ":" + std::to_string(line_no) + ": the edge " + b +
                           " -> " + a + " with weight " + w + " is listed"));
  });
}

TEST_F(BothListedTest, AnEdgeWithoutItsReverseNamesItsLine) {
  EXPECT_EQ(
      ErrorOf("1 2\n2 1\n# c\n\n3 2\n"),
      PathOf("bad.el") +
          ":5: the edge 3 -> 2 is listed 1 time(s), its reverse 2 -> 3 0 time(s) "
          "(a graph read as symmetric lists every edge in both directions, with the same weight)");
  // Listed twice one way and once the other: the first of the two.
  EXPECT_THAT(ErrorOf("1 2\n2 1\n1 2\n"),
              AllOf(StartsWith(PathOf("bad.el") + ":1: the edge 1 -> 2 is listed 2 time(s)"),
                    HasSubstr("its reverse 2 -> 1 1 time(s)")));
  // Of two unpaired edges, the one listed first.
  EXPECT_THAT(ErrorOf("5 6\n1 2\n6 5\n3 4\n"),
              StartsWith(PathOf("bad.el") + ":2: the edge 1 -> 2"));
  // IDs are quoted as in any input error.
  EXPECT_THAT(ErrorOf("a\x1b b\n"), HasSubstr("the edge a\\x1b -> b"));
}

TEST_F(BothListedTest, AReverseWithAnotherWeightIsNotOne) {
  EXPECT_EQ(
      ErrorOf("1 2 1.5\n2 1 2.5\n"),
      PathOf("bad.el") +
          ":1: the edge 1 -> 2 with weight 1.5 is listed 1 time(s), its reverse 2 -> 1 with "
          "that weight 0 time(s) (a graph read as symmetric lists every edge in both directions, "
          "with the same weight)");
  // An app that does not read weights does not mind them.
  EXPECT_TRUE(Load("w.el", "1 2 1.5\n2 1 2.5\n", true, WeightUse::kIgnore).ok());
}

TEST_F(BothListedTest, ADirectorysFilesAreOneInputAndErrorsNameTheFile) {
  std::filesystem::create_directories(dir_.path() / "d");
  dir_.Write("d/a.el", "1 2\n3 1\n");
  dir_.Write("d/b.el", "2 1\n# c\n1 3\n4 1\n");
  auto g =
      LoadGraph({.path = PathOf("d"), .undirected = true, .both_listed = true}, WeightUse::kIgnore);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              StartsWith(PathOf("d/b.el") + ":4: the edge 4 -> 1 is listed 1 time(s)"));
}

// A table's rows (a database's): no lines, so the error names the table and the edge.
class Rows final : public bsp::GraphTextSource {
 public:
  explicit Rows(std::string edges) : edges_(std::move(edges)) {}
  absl::StatusOr<bsp::GraphText> ReadAll(bool) const override {
    return bsp::GraphText{.edges = edges_, .edges_name = EdgesName()};
  }
  absl::StatusOr<std::unique_ptr<bsp::GraphTextShare>> OpenShare(bool, bool, uint32_t,
                                                                 uint32_t) const override {
    return absl::UnimplementedError("not in this test");
  }
  std::string EdgesName() const override { return "table \"edges\""; }
  std::string VerticesName() const override { return "table \"vertices\""; }

 private:
  std::string edges_;
};

TEST_F(BothListedTest, ATablesRowsPairAsAFilesLinesDo) {
  const auto table = [](const std::string& rows, bool both) {
    return LoadGraph({.path = "postgresql://test",
                      .undirected = true,
                      .both_listed = both,
                      .text = std::make_shared<Rows>(rows)},
                     WeightUse::kNonNegative);
  };
  ExpectSameInput(table("3\t1\t2\n2\t1\t1\n1\t2\t1\n1\t3\t2\n", true),
                  table("1\t3\t2\n1\t2\t1\n", false));
  auto bad = table("3\t1\t2\n2\t1\t1\n1\t3\t2\n", true);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              StartsWith("table \"edges\": the edge 2 -> 1 with weight 1 is listed 1 time(s)"));
}

}  // namespace
}  // namespace lockstep::load
