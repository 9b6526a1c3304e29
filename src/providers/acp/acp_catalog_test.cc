// The ACP catalog: files in the registry's format read tolerantly and bounded, merged by id, and
// the command each entry starts with on this host.
#include "providers/acp/acp_catalog.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <fstream>
#include <sstream>
#include <string>

namespace agentstream::providers::acp {
namespace {

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(AGENTSTREAM_SOURCE_DIR) + "/" + relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string OneAgent(const std::string& agent) {
  return R"({"version":"1.0.0","agents":[)" + agent + R"(],"extensions":[]})";
}

TEST(AcpCatalog, TheBuiltInFileIsValidAndWhole) {
  Catalog read;
  const Status merged = read.Merge(ReadSource("src/providers/acp/acp_catalog.json"), "file");
  ASSERT_TRUE(merged.ok()) << merged.ToString();
  const Catalog built_in = Catalog::BuiltIn();
  ASSERT_EQ(built_in.entries().size(), read.entries().size()) << "an entry this host cannot start";
  for (const CatalogEntry& e : built_in.entries()) {
    EXPECT_EQ(e.source, "built-in");
    EXPECT_FALSE(e.description.empty()) << e.id;
  }
}

// Each entry that runs as a preset names the very version tests/peers pins, which CI drives.
TEST(AcpCatalog, ProvenEntriesAreTheVersionsTheTestsPin) {
  const boost::json::value peers = boost::json::parse(ReadSource("tests/peers/package.json"));
  const boost::json::object& pinned = peers.at("dependencies").as_object();
  int proven = 0;
  const Catalog built_in = Catalog::BuiltIn();
  for (const CatalogEntry& e : built_in.entries()) {
    if (e.preset.empty()) continue;
    ++proven;
    ASSERT_EQ(e.distribution, "npx") << e.id;
    const std::size_t at = e.package.rfind('@');
    ASSERT_NE(at, std::string::npos) << e.package;
    const std::string name = e.package.substr(0, at);
    ASSERT_TRUE(pinned.contains(name)) << name << " is not in tests/peers";
    EXPECT_EQ(pinned.at(name).as_string(), e.package.substr(at + 1)) << e.id;
    EXPECT_EQ(e.version, e.package.substr(at + 1)) << e.id;
  }
  EXPECT_EQ(proven, 6);
}

TEST(AcpCatalog, KnownIdsRunAsTheirPresets) {
  const Catalog c = Catalog::BuiltIn();
  ASSERT_NE(c.Find("codex-acp"), nullptr);
  EXPECT_EQ(c.Find("codex-acp")->preset, "codex");
  EXPECT_EQ(c.Find("codex-acp")->command, (std::vector<std::string>{"codex-acp"}));
  EXPECT_EQ(c.Find("qwen-code")->command, (std::vector<std::string>{"qwen", "--acp"}));
  EXPECT_EQ(c.Find("gemini")->command, (std::vector<std::string>{"gemini", "--acp"}));
  EXPECT_EQ(c.Find("claude-acp")->preset, "claude-agent");
  EXPECT_EQ(PresetOfRegistryId("cline"), "");
  ASSERT_NE(c.Find("cline"), nullptr);
  EXPECT_EQ(c.Find("cline")->command, (std::vector<std::string>{"cline", "--acp"}));
  EXPECT_EQ(InstallHint(*c.Find("cline")), "npm install -g cline@3.0.4");
}

TEST(AcpCatalog, CommandsFollowTheRegistrysConventions) {
  Catalog c;
  ASSERT_TRUE(c.Merge(R"({"agents":[
      {"id":"scoped","name":"S","distribution":{"npx":{"package":"@acme/scoped-agent@1.2.3"}}},
      {"id":"with-cmd","name":"W","distribution":{"npx":{"package":"@acme/pkg@1.0.0",
        "cmd":"acme-acp","args":["serve","--acp"]}}},
      {"id":"python","name":"P","distribution":{"uvx":{"package":"py-agent==0.10.1"}}},
      {"id":"archive","name":"A","distribution":{"binary":{
        "linux-x86_64":{"archive":"https://example.com/a-x64.tar.gz","cmd":"./dist/a-agent",
          "args":["acp"]},
        "linux-aarch64":{"archive":"https://example.com/a-arm.tar.gz","cmd":"./dist/a-agent",
          "args":["acp"]}}}},
      {"id":"mac-only","name":"M","distribution":{"binary":{
        "darwin-aarch64":{"archive":"https://example.com/m.zip","cmd":"./m"}}}}],
      "newer-member":{"ignored":true}})",
                      "mine.json")
                  .ok());
  EXPECT_EQ(c.Find("scoped")->command, (std::vector<std::string>{"scoped-agent"}));
  EXPECT_EQ(InstallHint(*c.Find("scoped")), "npm install -g @acme/scoped-agent@1.2.3");
  EXPECT_EQ(c.Find("with-cmd")->command, (std::vector<std::string>{"acme-acp", "serve", "--acp"}));
  EXPECT_EQ(c.Find("python")->command, (std::vector<std::string>{"py-agent"}));
  EXPECT_EQ(InstallHint(*c.Find("python")), "uv tool install py-agent==0.10.1");
  ASSERT_NE(c.Find("archive"), nullptr);
  EXPECT_EQ(c.Find("archive")->command, (std::vector<std::string>{"a-agent", "acp"}));
  EXPECT_EQ(c.Find("archive")->distribution, "binary");
  EXPECT_EQ(c.Find("mac-only"), nullptr) << "no binary for this platform: left out";
  EXPECT_EQ(c.Find("python")->source, "mine.json");
}

TEST(AcpCatalog, ALaterFileReplacesAnEntryByIdAndAddsTheRest) {
  Catalog c = Catalog::BuiltIn();
  const std::size_t before = c.entries().size();
  ASSERT_TRUE(c.Merge(OneAgent(R"({"id":"cline","name":"Cline","version":"9.9.9",
      "distribution":{"npx":{"package":"cline@9.9.9","args":["--acp"]}}},
      {"id":"zz-new","name":"New","distribution":{"npx":{"package":"zz-new@1.0.0"}}})"),
                      "config.json")
                  .ok());
  EXPECT_EQ(c.entries().size(), before + 1);
  EXPECT_EQ(c.Find("cline")->version, "9.9.9");
  EXPECT_EQ(c.Find("cline")->source, "config.json");
  EXPECT_EQ(c.entries().back().id, "zz-new") << "kept by id";
}

TEST(AcpCatalog, AnEntrysEnvironmentCannotTouchReservedNames) {
  Catalog c;
  ASSERT_TRUE(c.Merge(OneAgent(R"({"id":"env","name":"E","distribution":{"npx":{
      "package":"env@1.0.0","env":{"PATH":"/evil","ld_preload":"/evil.so","NODE_OPTIONS":"-r x",
        "AWS_SECRET_ACCESS_KEY":"x","1BAD":"x","BAD NAME":"x","MODEL":"fast","NUL":"a\u0000b",
        "NUMBER":5}}}})"),
                      "f")
                  .ok());
  EXPECT_EQ(c.Find("env")->env, (std::vector<std::string>{"MODEL=fast"}));
}

TEST(AcpCatalog, BadFilesAreRefusedWholeWithTheirSourceNamed) {
  const auto refused = [](const std::string& text) {
    Catalog c = Catalog::BuiltIn();
    const std::size_t before = c.entries().size();
    const Status s = c.Merge(text, "/etc/agentstream/bad.json");
    EXPECT_EQ(c.entries().size(), before) << "merged part of a bad file";
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find("/etc/agentstream/bad.json"), std::string::npos) << s.message();
    return s.message();
  };
  refused("not json");
  refused(R"({"agents":{}})");
  refused(R"([1,2])");
  refused(OneAgent(R"({"id":"fine","name":"F","distribution":{"npx":{"package":"f@1"}}}, 7)"));
  EXPECT_NE(refused(OneAgent(R"({"id":"Bad_Id","name":"B","distribution":{}})")).find("Bad_Id"),
            std::string::npos);
  refused(OneAgent(R"({"id":"../../x","name":"B","distribution":{}})"));
  refused(OneAgent(R"({"id":"noname","distribution":{"npx":{"package":"n@1"}}})"));
  refused(OneAgent(R"({"id":"nodist","name":"N"})"));
  refused(OneAgent(R"({"id":")" + std::string(65, 'a') + R"(","name":"L","distribution":{}})"));
  std::string many = R"({"agents":[)";
  for (std::size_t i = 0; i <= kMaxCatalogAgents; ++i) many += (i ? "," : "") + std::string("{}");
  refused(many + "]}");
  refused(std::string(kMaxCatalogBytes + 1, ' '));
}

TEST(AcpCatalog, UnstartableEntriesAreLeftOutNotRefused) {
  Catalog c;
  ASSERT_TRUE(c.Merge(OneAgent(R"({"id":"nul-arg","name":"N","distribution":{"npx":{
      "package":"n@1","args":["a\u0000b"]}}},
      {"id":"no-package","name":"P","distribution":{"npx":{}}},
      {"id":"dot","name":"D","distribution":{"binary":{"linux-x86_64":{"archive":"https://x/a",
        "cmd":"./.."},"linux-aarch64":{"archive":"https://x/a","cmd":"./.."}}}},
      {"id":"good","name":"G","distribution":{"npx":{"package":"g@1"}}})"),
                      "f")
                  .ok());
  ASSERT_EQ(c.entries().size(), 1u);
  EXPECT_EQ(c.entries().front().id, "good");
}

TEST(AcpCatalog, LongTextsAreCut) {
  Catalog c;
  const std::string description(2000, 'd');
  ASSERT_TRUE(c.Merge(OneAgent(R"({"id":"long","name":"L","description":")" + description +
                               R"(","distribution":{"npx":{"package":"l@1"}}})"),
                      "f")
                  .ok());
  EXPECT_EQ(c.Find("long")->description.size(), 512u);
}

}  // namespace
}  // namespace agentstream::providers::acp
