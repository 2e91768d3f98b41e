// Codecs for trivially copyable types, vertex IDs, and the output helpers: WriteFileAtomically
// and the number formatting results are written with.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bit>
#include <boost/uuid/name_generator_sha1.hpp>
#include <boost/uuid/string_generator.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/output.h"
#include "lockstep/bsp/vertex_id.h"
#include "test_graphs.h"
#include "util/temp_dir.h"

namespace lockstep::bsp {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// --- Codec ---------------------------------------------------------------------------------------

struct Pod {
  int32_t a;
  double b;
  char c[3];
  VertexId id;
};
static_assert(HasCodec<Pod>);
static_assert(HasCodec<double>);

TEST(CodecTest, TriviallyCopyableRoundTrip) {
  const Pod x{-7, 2.5, {'x', 'y', 'z'}, VertexIdFromExternal("x")};
  const Pod y{123456, -0.0, {'\0', '\n', '\xff'}, VertexIdFromExternal("y")};
  std::string bytes = "prefix";
  Codec<Pod>::Encode(x, bytes);
  Codec<Pod>::Encode(y, bytes);
  EXPECT_EQ(bytes.size(), 6 + 2 * sizeof(Pod));

  std::string_view in(bytes);
  in.remove_prefix(6);
  Pod a{}, b{};
  ASSERT_TRUE(Codec<Pod>::Decode(in, a));
  EXPECT_EQ(in.size(), sizeof(Pod));
  ASSERT_TRUE(Codec<Pod>::Decode(in, b));
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(a.a, -7);
  EXPECT_EQ(a.b, 2.5);
  EXPECT_THAT(a.c, ElementsAre('x', 'y', 'z'));
  EXPECT_EQ(a.id, x.id);
  EXPECT_EQ(b.a, 123456);
  EXPECT_TRUE(std::signbit(b.b));
  EXPECT_THAT(b.c, ElementsAre('\0', '\n', '\xff'));
  EXPECT_EQ(b.id, y.id);

  // Too few bytes: false, nothing consumed.
  std::string_view short_in = std::string_view(bytes).substr(6, sizeof(Pod) - 1);
  Pod c{};
  EXPECT_FALSE(Codec<Pod>::Decode(short_in, c));
  EXPECT_EQ(short_in.size(), sizeof(Pod) - 1);
}

TEST(CodecTest, ScalarsAndLengths) {
  std::string bytes;
  Codec<double>::Encode(std::numeric_limits<double>::quiet_NaN(), bytes);
  Codec<uint8_t>::Encode(200, bytes);
  EncodeLength(uint64_t{1} << 40, bytes);
  EXPECT_EQ(bytes.size(), 8u + 1u + 8u);
  std::string_view in(bytes);
  double d;
  uint8_t u;
  uint64_t n;
  ASSERT_TRUE(Codec<double>::Decode(in, d));
  ASSERT_TRUE(Codec<uint8_t>::Decode(in, u));
  ASSERT_TRUE(DecodeLength(in, n));
  EXPECT_TRUE(std::isnan(d));
  EXPECT_EQ(u, 200);
  EXPECT_EQ(n, uint64_t{1} << 40);
  EXPECT_FALSE(DecodeLength(in, n));
}

// --- Vertex IDs ----------------------------------------------------------------------------------

TEST(VertexIdTest, NameBasedV5ForNonUuids) {
  const VertexId one = VertexIdFromExternal("1");
  EXPECT_EQ(one, VertexIdFromExternal("1"));
  EXPECT_NE(one, VertexIdFromExternal("01"));
  EXPECT_NE(one, VertexIdFromExternal("1 "));
  EXPECT_EQ(one.version(), boost::uuids::uuid::version_name_based_sha1);
  EXPECT_EQ(one.variant(), boost::uuids::uuid::variant_rfc_4122);
  EXPECT_EQ(ToString(one).size(), 36u);
}

// Vertex UUIDs decide partitions, so they are fixed forever: RFC 4122 v5 in the project's
// namespace, as Python's uuid.uuid5 computes them, and as Boost's generator (used before OpenSSL
// took over the hashing) gives them at every name length around SHA-1's block boundaries.
TEST(VertexIdTest, NameBasedV5MatchesRfc4122AndBoostAtEveryLength) {
  EXPECT_EQ(ToString(VertexIdFromExternal("1")), "d2395151-283d-5d58-b4b5-ceeadf0e32c7");
  EXPECT_EQ(ToString(VertexIdFromExternal("alice")), "b1254cbc-efb7-5e5a-ae83-5649742046b5");
  EXPECT_EQ(ToString(VertexIdFromExternal(std::string(64, 'x'))),
            "4c895ec6-d6d1-5220-9bb8-790294094b72");
  const boost::uuids::uuid ns =
      boost::uuids::string_generator()("3f1c2a58-9d4e-4b7a-8c35-1e6d2f0a9b47");
  boost::uuids::name_generator_sha1 boost_v5(ns);
  std::string name;
  for (int length = 0; length <= 200; ++length) {
    EXPECT_EQ(VertexIdFromExternal(name), boost_v5(name.data(), name.size())) << length;
    name.push_back(static_cast<char>('a' + length % 26));
  }
}

// An integer's UUID is its decimal text's, made without the text.
TEST(VertexIdTest, IntegerIdsHashAsTheirDecimalText) {
  EXPECT_EQ(ToString(VertexIdFromInteger(1)), "d2395151-283d-5d58-b4b5-ceeadf0e32c7");
  // An empty name with no buffer behind it (the sanitizer build checks the copy of none).
  EXPECT_EQ(VertexIdFromExternal(std::string_view()), VertexIdFromExternal(std::string()));
  for (uint64_t v : {uint64_t{0}, uint64_t{9}, uint64_t{10}, uint64_t{1} << 20, uint64_t{1} << 32,
                     uint64_t{999999999999}, ~uint64_t{0}}) {
    EXPECT_EQ(VertexIdFromInteger(v), VertexIdFromExternal(std::to_string(v))) << v;
  }
}

TEST(VertexIdTest, ParseUuid) {
  VertexId id;
  ASSERT_TRUE(ParseUuid("00112233-4455-6677-8899-aAbBcCdDeEfF", id));
  EXPECT_EQ(ToString(id), "00112233-4455-6677-8899-aabbccddeeff");
  EXPECT_EQ(id.data[0], 0x00);
  EXPECT_EQ(id.data[15], 0xff);
  for (const char* bad :
       {"", "00112233-4455-6677-8899-aabbccddeef", "00112233-4455-6677-8899-aabbccddeeff0",
        "001122334455-6677-8899-aabbccddeeff", "00112233-4455-6677-8899_aabbccddeeff",
        "0011223g-4455-6677-8899-aabbccddeeff", "{00112233-4455-6677-8899-aabbccddeef}"}) {
    EXPECT_FALSE(ParseUuid(bad, id)) << bad;
  }
}

// --- WriteFileAtomically -------------------------------------------------------------------------

TEST(WriteFileAtomicallyTest, CreatesTheFile) {
  test::TempDir dir;
  const std::string path = (dir.path() / "out.txt").string();
  const std::string bytes("a\0b\nc", 5);
  ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());
  EXPECT_EQ(bsptest::ReadAll(path), bytes);
  EXPECT_THAT(dir.List(), ElementsAre("out.txt"));
  ASSERT_TRUE(WriteFileAtomically(path, "").ok());
  EXPECT_EQ(bsptest::ReadAll(path), "");
}

TEST(WriteFileAtomicallyTest, ReplacesAtomically) {
  test::TempDir dir;
  const std::string path = dir.Write("out.txt", "old contents\n");
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  // A reader that opened the file before keeps seeing the complete old file: the new one is
  // renamed over it, never written into it.
  std::ifstream reader(path, std::ios::binary);
  ASSERT_TRUE(WriteFileAtomically(path, "new\n").ok());
  struct stat after;
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);
  EXPECT_EQ(bsptest::ReadAll(path), "new\n");
  const std::string old((std::istreambuf_iterator<char>(reader)), std::istreambuf_iterator<char>());
  EXPECT_EQ(old, "old contents\n");
  EXPECT_THAT(dir.List(), ElementsAre("out.txt"));
}

TEST(WriteFileAtomicallyTest, FailedWriteLeavesOldFileAndNoTemporary) {
  test::TempDir dir;
  const std::string path = dir.Write("out.txt", "old contents\n");
  // Make the write itself fail: a file size limit turns writes past 4 KiB into EFBIG.
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit small = saved;
  small.rlim_cur = 4096;
  void (*old_handler)(int) = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status st = WriteFileAtomically(path, std::string(1 << 16, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr(path));
  EXPECT_EQ(bsptest::ReadAll(path), "old contents\n");
  EXPECT_THAT(dir.List(), ElementsAre("out.txt"));
}

TEST(WriteFileAtomicallyTest, FailedRenameLeavesTargetAndNoTemporary) {
  test::TempDir dir;
  // The target is a non-empty directory, so the final rename fails.
  std::filesystem::create_directory(dir.path() / "out");
  dir.Write("out/keep.txt", "kept");
  const std::string path = (dir.path() / "out").string();
  const absl::Status st = WriteFileAtomically(path, "data");
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr(path));
  EXPECT_THAT(dir.List(), ElementsAre("out"));
  EXPECT_EQ(bsptest::ReadAll((dir.path() / "out" / "keep.txt").string()), "kept");
}

TEST(WriteFileAtomicallyTest, MissingDirectoryIsAnErrorNamingThePath) {
  test::TempDir dir;
  const std::string path = (dir.path() / "no-such-dir" / "out.txt").string();
  const absl::Status st = WriteFileAtomically(path, "data");
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr(path));
  EXPECT_TRUE(dir.List().empty());
}

// Atomic replacement is for regular files: renaming a temporary file onto a device replaced
// /dev/null with a regular file (as root, for every program on the machine). The device here is a
// copy of /dev/null's (char 1:3) made in a temporary directory; the real one is never touched.
TEST(WriteFileAtomicallyTest, CharacterDeviceIsWrittenIntoNotReplaced) {
  test::TempDir dir;
  const std::string path = (dir.path() / "null").string();
  // Tests run as root (CI does); without root this fails rather than skip the check.
  ASSERT_EQ(::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0)
      << "mknod " << path << ": " << std::strerror(errno) << " (this test needs root)";
  ASSERT_TRUE(WriteFileAtomically(path, "1 0.5\n2 0.5\n").ok());
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device was replaced";
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_THAT(dir.List(), ElementsAre("null"));  // no temporary left beside it
}

TEST(WriteFileAtomicallyTest, FifoIsWrittenIntoForItsReader) {
  test::TempDir dir;
  const std::string path = (dir.path() / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  // The reader is detached: if the FIFO were replaced it would wait for a writer for ever.
  auto received = std::make_shared<std::promise<std::string>>();
  std::future<std::string> done = received->get_future();
  std::thread([path, received] { received->set_value(bsptest::ReadAll(path)); }).detach();
  const std::string bytes(100000, 'x');  // more than a pipe holds
  const absl::Status st = WriteFileAtomically(path, bytes);
  EXPECT_TRUE(st.ok()) << st;
  ASSERT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the FIFO's reader never got the bytes";
  EXPECT_EQ(done.get(), bytes);
  struct stat info;
  ASSERT_EQ(::lstat(path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
  EXPECT_THAT(dir.List(), ElementsAre("fifo"));
}

TEST(WriteFileAtomicallyTest, SymlinkKeepsTheLinkAndReplacesItsTarget) {
  test::TempDir dir;
  const std::string target = dir.Write("target.txt", "old\n");
  const std::string link = (dir.path() / "link.txt").string();
  std::filesystem::create_symlink("target.txt", link);
  ASSERT_TRUE(WriteFileAtomically(link, "new\n").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(bsptest::ReadAll(target), "new\n");
  EXPECT_THAT(dir.List(), ::testing::UnorderedElementsAre("link.txt", "target.txt"));
}

TEST(WriteFileAtomicallyTest, OwnDescriptorIsWrittenInto) {
  test::TempDir dir;
  const std::string path = dir.Write("captured.txt", "");
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteFileAtomically("/dev/fd/" + std::to_string(fd), "via fd\n").ok());
  ASSERT_TRUE(WriteFileAtomically("/proc/self/fd/" + std::to_string(fd), "again\n").ok());
  ::close(fd);
  EXPECT_EQ(bsptest::ReadAll(path), "via fd\nagain\n");
  EXPECT_THAT(dir.List(), ElementsAre("captured.txt"));
}

// --- Number formatting ---------------------------------------------------------------------------

std::string Double(double x) {
  std::string out;
  AppendDouble(x, out);
  return out;
}

TEST(AppendDoubleTest, SeventeenSignificantDigits) {
  EXPECT_EQ(Double(0.1), "0.10000000000000001");
  EXPECT_EQ(Double(1.0 / 3), "0.33333333333333331");
  EXPECT_EQ(Double(1.0), "1");
  EXPECT_EQ(Double(-2.5), "-2.5");
  EXPECT_EQ(Double(0.0), "0");
  EXPECT_EQ(Double(1e300), "1.0000000000000001e+300");
  EXPECT_EQ(Double(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(Double(-std::numeric_limits<double>::infinity()), "-Infinity");
  std::string out = "x=";
  AppendDouble(0.5, out);
  EXPECT_EQ(out, "x=0.5");
}

TEST(AppendDoubleTest, RoundTripsExactly) {
  std::mt19937_64 rng(5);
  std::vector<double> values = {std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::lowest(),
                                -0.0,
                                0.15,
                                2.0 / 3,
                                123456789.123456789};
  for (int i = 0; i < 20000; ++i) {
    const double x = std::bit_cast<double>(rng());
    if (std::isfinite(x)) values.push_back(x);
    values.push_back(std::ldexp(static_cast<double>(rng() >> 11), -53));  // in [0, 1)
  }
  for (double x : values) {
    const std::string text = Double(x);
    ASSERT_EQ(std::bit_cast<uint64_t>(std::strtod(text.c_str(), nullptr)),
              std::bit_cast<uint64_t>(x))
        << text;
  }
}

TEST(AppendIntTest, Extremes) {
  std::string out;
  AppendInt(std::numeric_limits<int64_t>::min(), out);
  out += ' ';
  AppendInt(-1, out);
  out += ' ';
  AppendUint(std::numeric_limits<uint64_t>::max(), out);
  out += ' ';
  AppendUint(0, out);
  EXPECT_EQ(out, "-9223372036854775808 -1 18446744073709551615 0");
}

}  // namespace
}  // namespace lockstep::bsp
