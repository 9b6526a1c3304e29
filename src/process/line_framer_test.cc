#include "process/line_framer.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

namespace agentstream::process {
namespace {

std::vector<std::string> Texts(const std::vector<Frame>& frames) {
  std::vector<std::string> out;
  for (const Frame& f : frames) out.push_back(f.text);
  return out;
}

TEST(LineFramerTest, SplitsLinesAcrossChunks) {
  LineFramer f(100);
  EXPECT_TRUE(f.Feed("{\"a\":").empty());
  auto frames = f.Feed("1}\n{\"b\":2}\n{\"c\"");
  EXPECT_EQ(Texts(frames), (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  frames = f.Finish();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].text, "{\"c\"");
  EXPECT_EQ(frames[0].kind, Frame::Kind::kLine);
}

TEST(LineFramerTest, OversizeLineIsCutAndTheNextLineIsIntact) {
  LineFramer f(4);
  auto frames = f.Feed("abcdefgh");
  EXPECT_TRUE(frames.empty());
  frames = f.Feed("ij\nok\n");
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].kind, Frame::Kind::kOversize);
  EXPECT_EQ(frames[0].text, "abcd");
  EXPECT_EQ(frames[0].dropped, 6u);
  EXPECT_EQ(frames[1].kind, Frame::Kind::kLine);
  EXPECT_EQ(frames[1].text, "ok");
}

TEST(LineFramerTest, EmptyLinesAreFrames) {
  LineFramer f(10);
  EXPECT_EQ(Texts(f.Feed("\n\nx\n")), (std::vector<std::string>{"", "", "x"}));
  EXPECT_TRUE(f.Finish().empty());
}

// Whatever the chunking, the frames are the lines of the input (bounded to max bytes).
RC_GTEST_PROP(LineFramerProperty, ChunkingDoesNotMatter, (std::vector<std::string> lines)) {
  std::string all;
  for (auto& l : lines) {
    l.erase(std::remove(l.begin(), l.end(), '\n'), l.end());
    all += l + "\n";
  }
  const std::size_t max = *rc::gen::inRange<std::size_t>(1, 20);
  LineFramer f(max);
  std::vector<Frame> frames;
  std::size_t pos = 0;
  while (pos < all.size()) {
    const std::size_t n = *rc::gen::inRange<std::size_t>(1, 8);
    for (Frame& fr : f.Feed(std::string_view(all).substr(pos, n))) frames.push_back(fr);
    pos += n;
  }
  RC_ASSERT(f.Finish().empty());
  RC_ASSERT(frames.size() == lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    RC_ASSERT(frames[i].text == lines[i].substr(0, max));
    RC_ASSERT((frames[i].kind == Frame::Kind::kOversize) == (lines[i].size() > max));
    RC_ASSERT(frames[i].text.size() + frames[i].dropped == lines[i].size());
  }
}

TEST(ByteRingTest, KeepsTheLastBytes) {
  ByteRing r(5);
  r.Write("abc");
  EXPECT_EQ(r.Contents(), "abc");
  r.Write("defg");
  EXPECT_EQ(r.Contents(), "cdefg");
  r.Write("0123456789");
  EXPECT_EQ(r.Contents(), "56789");
  r.Write("x");
  EXPECT_EQ(r.Contents(), "6789x");
  EXPECT_EQ(r.total_written(), 18u);
}

}  // namespace
}  // namespace agentstream::process
