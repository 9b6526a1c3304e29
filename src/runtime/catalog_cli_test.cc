// An agent of the ACP catalog that is installed runs as the provider acp:ID by the catalog's
// command alone (docs/providers.md, "The catalog"): a catalog file names the real gemini CLI
// (tests/peers, pinned; offline against the scripted model server) under an id of its own, with
// no preset behind it, and it answers a prompt. A listed agent that is not installed is refused
// with the command that installs it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/testing/real_cli_fixture.h"

namespace agentstream::runtime {
namespace {

namespace acp_testing = providers::acp::testing;
namespace fs = std::filesystem;

class CatalogCli : public testing::RealCliFixture<> {
 protected:
  void Configure(ProviderFactoryOptions& options) override {
    // The program on a PATH of its own, under a name no preset has.
    const fs::path bin = fs::path(root_) / "bin";
    fs::create_directories(bin);
    fs::create_symlink(acp_testing::AgentProgram(acp_testing::Agent::kGemini), bin / "gem-acp");
    std::string path = "PATH=" + bin.string();
    const char* inherited = std::getenv("PATH");
    for (const std::string& e : options.acp_env)
      if (e.starts_with("PATH=")) inherited = e.c_str() + 5;
    if (inherited != nullptr) path += std::string(":") + inherited;
    std::erase_if(options.acp_env, [](const std::string& e) { return e.starts_with("PATH="); });
    options.acp_env.push_back(path);
    // The registry's format; reserved variables (PATH) of an entry are dropped.
    const std::string model = setup_.model.value_or("gemini-2.5-flash");
    const Status merged = options.acp_catalog.Merge(R"({"version":"1.0.0","agents":[
      {"id":"my-gemini","name":"My Gemini","version":"0.61.0","description":"gemini by catalog",
       "distribution":{"npx":{"package":"@google/gemini-cli@0.61.0","cmd":"gem-acp",
         "args":["--acp","-m",")" + model + R"("],
         "env":{"PATH":"/nowhere","AGENTSTREAM_CATALOG_TEST":"1"}}}}]})",
                                                    "test-catalog.json");
    ASSERT_TRUE(merged.ok()) << merged.ToString();
  }

  Result<api::AgentSnapshot> Create(const std::string& provider) {
    return Wait<api::AgentSnapshot>([&](const Callback<api::AgentSnapshot>& d) {
      manager_->Create(api::AgentConfig{provider, setup_.work, {}, {}, {}}, d);
    });
  }
};

TEST_P(CatalogCli, AnInstalledEntryRunsByTheCatalogsCommand) {
  Result<api::AgentSnapshot> agent = Create("acp:my-gemini");
  ASSERT_TRUE(agent.ok()) << agent.status().ToString();
  Result<api::SendReply> sent = Wait<api::SendReply>([&](const Callback<api::SendReply>& d) {
    manager_->Send(agent->id, api::SendRequest{"c1", "[say hello]", {}}, d);
  });
  ASSERT_TRUE(sent.ok() && sent->accepted) << sent.status().ToString();
  ASSERT_TRUE(WaitNotRunning(agent->id)) << "the turn never ended";
  Result<api::AgentSnapshot> s = Get(agent->id);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->status, turn::SessionStatus::kIdle);
  std::string text;
  for (const Event& e : Events(agent->id))
    if (const auto* d = std::get_if<AssistantMessageDelta>(&e.payload)) text += d->text;
  EXPECT_NE(text.find("hello"), std::string::npos) << "the catalog's agent answered: " << text;
}

TEST_P(CatalogCli, TheListingSaysWhatIsInstalledAndHowToInstallTheRest) {
  bool mine = false, cline = false;
  for (const CatalogAgent& agent : factory_->Catalog()) {
    if (agent.entry.id == "my-gemini") {
      mine = true;
      EXPECT_TRUE(agent.installed);
      EXPECT_EQ(agent.command.front(), "gem-acp");
      EXPECT_EQ(agent.entry.source, "test-catalog.json");
    }
    if (agent.entry.id == "cline") {  // built in, and not installed here
      cline = true;
      EXPECT_FALSE(agent.installed);
    }
    if (agent.entry.id == "codex-acp") {
      EXPECT_EQ(agent.entry.preset, "codex");
    }
  }
  EXPECT_TRUE(mine && cline);

  Result<api::AgentSnapshot> missing = Create("acp:cline");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("npm install -g cline@"), std::string::npos)
      << missing.status().message();
  Result<api::AgentSnapshot> unknown = Create("acp:no-such-agent");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown provider"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Gemini, CatalogCli,
                         ::testing::Values(testing::RealCli{"gemini", "acp:my-gemini",
                                                            acp_testing::Agent::kGemini}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace agentstream::runtime
