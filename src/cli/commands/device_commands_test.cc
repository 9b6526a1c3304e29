// The pure parts of `agentstream pair`: its durations and its QR code's drawing.
#include "cli/commands/device_commands.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace agentstream::cli {
namespace {

// The lines of `text`, each as its code points (a half block is 3 bytes, a space 1).
std::vector<std::vector<std::string>> Cells(const std::string& text) {
  std::vector<std::vector<std::string>> lines(1);
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\n') {
      lines.emplace_back();
      ++i;
      continue;
    }
    const std::size_t n = static_cast<unsigned char>(text[i]) < 0x80 ? 1 : 3;
    lines.back().push_back(text.substr(i, n));
    i += n;
  }
  if (lines.back().empty()) lines.pop_back();
  return lines;
}

TEST(PairDuration, NumbersWithAUnit) {
  EXPECT_EQ(*ParseDuration("90s"), 90'000);
  EXPECT_EQ(*ParseDuration("10m"), 600'000);
  EXPECT_EQ(*ParseDuration("2h"), 7'200'000);
  EXPECT_EQ(*ParseDuration("1500ms"), 1500);
  for (const char* bad : {"", "10", "5x", "-1s", "m", "10 m", "1.5h", "99999999999999999h"})
    EXPECT_EQ(ParseDuration(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
}

TEST(PairQr, HalfBlocksWithAQuietZoneAndTheFinderPatterns) {
  const std::string url = "https://box.example.ts.net/#pair=asp_" + std::string(32, 'A');
  auto qr = RenderQr(url);
  ASSERT_TRUE(qr.ok()) << qr.status().ToString();
  const auto lines = Cells(*qr);
  ASSERT_FALSE(lines.empty());
  const std::size_t size = lines[0].size();  // modules across, the quiet zone included
  ASSERT_GE(size, 21u + 4);                  // version 1 is 21 modules
  EXPECT_EQ((size - 4 - 21) % 4, 0u);        // versions grow by 4 modules
  EXPECT_EQ(lines.size(), (size + 1) / 2);
  for (const auto& line : lines) EXPECT_EQ(line.size(), size);
  const std::string full = "\u2588";
  const std::string lower = "\u2584";
  // The first line is the quiet zone: light over light.
  for (const std::string& cell : lines[0]) EXPECT_EQ(cell, full);
  // Rows 2 and 3: the top-left finder's dark top edge, then its sides.
  EXPECT_EQ(lines[1][0], full);
  EXPECT_EQ(lines[1][1], full);
  EXPECT_EQ(lines[1][2], " ");
  for (int col = 3; col <= 7; ++col) EXPECT_EQ(lines[1][col], lower) << col;
  EXPECT_EQ(lines[1][8], " ");
  // And the top-right finder's, mirrored.
  EXPECT_EQ(lines[1][size - 3], " ");
  EXPECT_EQ(lines[1][size - 5], lower);
  EXPECT_EQ(lines[1][size - 1], full);
  // Another text, another code; text too long for any QR code is refused.
  EXPECT_NE(*RenderQr(url + "B"), *qr);
  EXPECT_EQ(RenderQr(std::string(8000, 'x')).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace agentstream::cli
