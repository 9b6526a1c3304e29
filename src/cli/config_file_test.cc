#include "cli/config_file.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "testing/temp_dir.h"

namespace agentstream::cli {
namespace {

using Kind = ConfigEntry::Kind;

ConfigFile Parsed(std::string_view text) {
  Result<ConfigFile> file = ParseConfig(text);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  return file.ok() ? *file : ConfigFile{};
}

std::string ErrorOf(std::string_view text) {
  Result<ConfigFile> file = ParseConfig(text);
  EXPECT_FALSE(file.ok()) << text;
  return file.ok() ? "" : file.status().message();
}

TEST(ConfigFileTest, ReadsTopLevelKeysTablesAndValuesWithTheirKinds) {
  const ConfigFile file = Parsed(R"(# agentstream
data = "/var/lib/agentstream"   # a comment
store = 'sqlite:/tmp/a#b.db'

[serve]
listen = "127.0.0.1:0"
owner-ttl-ms = 1_000
flag = true
acp-agent = [
  "echo=node fake.mjs --acp",  # one
  "two=\"quoted\"\tx\\y",
]
allow-origin = []
)");
  ASSERT_EQ(file.entries.size(), 7u);
  ASSERT_EQ(file.tables.size(), 1u);
  EXPECT_EQ(file.tables[0].first, "serve");
  EXPECT_EQ(file.tables[0].second, 5);

  const ConfigEntry& data = file.entries[0];
  EXPECT_EQ(data.table, "");
  EXPECT_EQ(data.key, "data");
  EXPECT_EQ(data.line, 2);
  EXPECT_EQ(data.kind, Kind::kString);
  EXPECT_FALSE(data.array);
  EXPECT_EQ(data.values, std::vector<std::string>{"/var/lib/agentstream"});
  EXPECT_EQ(file.entries[1].values[0], "sqlite:/tmp/a#b.db");  // '#' inside a string is text

  const ConfigEntry& ttl = file.entries[3];
  EXPECT_EQ(ttl.table, "serve");
  EXPECT_EQ(ttl.kind, Kind::kInteger);
  EXPECT_EQ(ttl.values[0], "1000");
  EXPECT_EQ(file.entries[4].kind, Kind::kBoolean);

  const ConfigEntry& agents = file.entries[5];
  EXPECT_TRUE(agents.array);
  EXPECT_EQ(agents.line, 9);
  EXPECT_EQ(agents.values,
            (std::vector<std::string>{"echo=node fake.mjs --acp", "two=\"quoted\"\tx\\y"}));
  EXPECT_TRUE(file.entries[6].array);
  EXPECT_TRUE(file.entries[6].values.empty());
  EXPECT_EQ(file.entries[6].line, 13);
}

TEST(ConfigFileTest, IntegersLoseTheirPlusAndUnderscores) {
  const ConfigFile file = Parsed("a = +5\nb = -3\nc = 1_000_000\n");
  ASSERT_EQ(file.entries.size(), 3u);
  EXPECT_EQ(file.entries[0].values[0], "5");
  EXPECT_EQ(file.entries[1].values[0], "-3");
  EXPECT_EQ(file.entries[2].values[0], "1000000");
  EXPECT_NE(ErrorOf("d = 1__0").find("got 1__0"), std::string::npos);
}

TEST(ConfigFileTest, AnEmptyFileHasNothing) {
  EXPECT_TRUE(Parsed("").entries.empty());
  EXPECT_TRUE(Parsed("\n# only a comment\r\n\n").entries.empty());
}

TEST(ConfigFileTest, ErrorsNameTheLine) {
  EXPECT_EQ(ErrorOf("a = 1\nlisten = 127.0.0.1:0\n"),
            "line 2: expected a value (a \"string\", an integer, true, false or an [array]), got "
            "127.0.0.1:0");
  EXPECT_EQ(ErrorOf("\n\nx = \"open\n"), "line 3: unterminated string");
  EXPECT_EQ(ErrorOf("x = 1\nx = 2\n"), "line 2: key x given twice");
  EXPECT_EQ(ErrorOf("[a]\n[a]\n"), "line 2: table [a] given twice");
  EXPECT_EQ(ErrorOf("x = [1, \"a\"]"), "line 1: an array's elements must be of one kind");
  EXPECT_EQ(ErrorOf("x = \"a\" \"b\""), "line 1: unexpected '\"' after the value");
  EXPECT_EQ(ErrorOf("serve.listen = \"x\""),
            "line 1: dotted keys are not supported: put the key in a [table]");
  EXPECT_EQ(ErrorOf("x"), "line 1: expected = after the key x");
  EXPECT_NE(ErrorOf("x = 1.5").find("got 1.5"), std::string::npos);
  EXPECT_NE(ErrorOf("x = \"\\u0041\"").find("unsupported escape \\u"), std::string::npos);
  EXPECT_NE(ErrorOf("[[t]]").find("arrays of tables"), std::string::npos);
  EXPECT_NE(ErrorOf("x = {a = 1}").find("inline tables"), std::string::npos);
  EXPECT_NE(ErrorOf("x = [[1]]").find("nested arrays"), std::string::npos);
  EXPECT_NE(ErrorOf("x = [1, 2").find("line 1"), std::string::npos);
  EXPECT_NE(ErrorOf("x =").find("got nothing"), std::string::npos);
}

TEST(ConfigFileTest, TextThatIsNotUtf8IsRefusedNamingItsLine) {
  EXPECT_EQ(ErrorOf("[serve]\nlisten = \"caf\xE9\"\n"),
            "line 2: not UTF-8 text (the file must be UTF-8)");
  EXPECT_EQ(ErrorOf("\xFF\xFE"), "line 1: not UTF-8 text (the file must be UTF-8)");
  EXPECT_EQ(ErrorOf("# \xED\xA0\x80 (a surrogate)\n"),
            "line 1: not UTF-8 text (the file must be UTF-8)");
  EXPECT_EQ(ErrorOf("x = 1\n# \xC0\xAF (overlong)"),
            "line 2: not UTF-8 text (the file must be UTF-8)");
  // A byte order mark and UTF-8 text are fine.
  EXPECT_EQ(Parsed("\xEF\xBB\xBFtitle = \"caf\xC3\xA9 \xE2\x9C\x93\"").entries.at(0).values,
            std::vector<std::string>{"caf\xC3\xA9 \xE2\x9C\x93"});
}

TEST(ConfigFileTest, AFileOfMoreThanOneMebibyteIsRefusedUnread) {
  test_support::TempDir dir("config-file");
  const std::string comment = "#" + std::string(kMaxConfigBytes - 2, 'x') + "\n";
  std::ofstream(dir.File("max.toml"), std::ios::binary) << comment;
  std::ofstream(dir.File("over.toml"), std::ios::binary) << comment << "\n";
  Result<std::string> max = ReadConfigFile(dir.File("max.toml"));
  ASSERT_TRUE(max.ok()) << max.status().ToString();
  EXPECT_EQ(max->size(), kMaxConfigBytes);
  EXPECT_TRUE(ParseConfig(*max).ok());
  Result<std::string> over = ReadConfigFile(dir.File("over.toml"));
  EXPECT_EQ(over.status().code(), ErrorCode::kTooLarge);
  EXPECT_EQ(over.status().message(), "larger than 1 MiB (1048576 bytes)");
  EXPECT_EQ(ParseConfig(comment + "\n").status().code(), ErrorCode::kTooLarge);
  // An endless device is read up to the bound only.
  EXPECT_EQ(ReadConfigFile("/dev/zero").status().code(), ErrorCode::kTooLarge);
  EXPECT_EQ(ReadConfigFile(dir.File("missing.toml")).status().code(), ErrorCode::kIoError);
}

TEST(ConfigFileTest, DefaultPathFollowsXdgConfigHome) {
  const char* saved = std::getenv("XDG_CONFIG_HOME");
  const std::string old = saved ? saved : "";
  setenv("XDG_CONFIG_HOME", "/x/conf", 1);
  EXPECT_EQ(DefaultConfigPath(), "/x/conf/agentstream/config.toml");
  unsetenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  EXPECT_EQ(DefaultConfigPath(),
            std::string(home && *home ? home : ".") + "/.config/agentstream/config.toml");
  if (saved) setenv("XDG_CONFIG_HOME", old.c_str(), 1);
}

}  // namespace
}  // namespace agentstream::cli
