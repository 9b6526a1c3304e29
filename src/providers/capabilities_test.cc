// DescribeCapabilities: what an agent's capabilities.changed records of a runtime's lists, bounded
// and sanitized whatever the runtime reported.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "providers/provider.h"

namespace agentstream::providers {
namespace {

// A provider that only lists: every other call is out of this test's scope.
class ListingProvider final : public AgentProvider {
 public:
  std::vector<ModeInfo> modes;
  std::vector<ModelInfo> models;
  std::vector<ThinkingOption> thinking;
  std::vector<SlashCommand> commands;

  std::vector<ModeInfo> AvailableModes() const override { return modes; }
  std::vector<ModelInfo> AvailableModels() const override { return models; }
  std::vector<ThinkingOption> ThinkingOptions() const override { return thinking; }
  std::vector<SlashCommand> ListCommands() const override { return commands; }

  EventSubscription Subscribe(EventCallback) override { return {}; }
  void Start(Done) override {}
  void StartTurn(const TurnRequest&, Done) override {}
  void Interrupt(Done) override {}
  Result<std::vector<turn::ProviderEvent>> StreamHistory() override {
    return std::vector<turn::ProviderEvent>{};
  }
  RuntimeInfo GetRuntimeInfo() const override { return {}; }
  std::vector<PendingPermission> PendingPermissions() const override { return {}; }
  void RespondToPermission(const RequestId&, const PermissionReply&, Done) override {}
  std::optional<PersistenceHandle> DescribePersistence() const override { return std::nullopt; }
  void Close(Done) override {}

 protected:
  void Later(Done, Status) override {}
};

TEST(DescribeCapabilities, ListsWhatTheRuntimeOffers) {
  ListingProvider p;
  p.modes = {{"default", "Ask"}, {"plan", ""}};
  p.models = {{"opus", "Opus"}};
  p.thinking = {{"off", "Off"}};
  p.commands = {{"compact", "Summarise"}};
  const CapabilitiesChanged c = DescribeCapabilities(p);
  EXPECT_EQ(c.modes, (std::vector<Choice>{{"default", "Ask"}, {"plan", ""}}));
  EXPECT_EQ(c.models, (std::vector<Choice>{{"opus", "Opus"}}));
  EXPECT_EQ(c.thinking_options, (std::vector<Choice>{{"off", "Off"}}));
  EXPECT_EQ(c.commands, (std::vector<CommandInfo>{{"compact", "Summarise"}}));
  EXPECT_EQ(DescribeCapabilities(ListingProvider{}), CapabilitiesChanged{});
}

TEST(DescribeCapabilities, HostileListsAreBounded) {
  ListingProvider p;
  for (std::size_t i = 0; i < kMaxChoices + 50; ++i)
    p.commands.push_back({"c" + std::to_string(i), std::string(10'000, 'd')});
  p.models = {{"", "no id"},
              {std::string(kMaxChoiceIdBytes + 1, 'm'), "an id too long to name anything"},
              {"bad\xff", "an id that is not UTF-8"},
              {"ok", "label \xff with a bad byte"}};
  const CapabilitiesChanged c = DescribeCapabilities(p);
  ASSERT_EQ(c.commands.size(), kMaxChoices);
  EXPECT_EQ(c.commands.back().name, "c" + std::to_string(kMaxChoices - 1));
  for (const CommandInfo& command : c.commands)
    EXPECT_LE(command.description.size(), kMaxChoiceTextBytes);
  ASSERT_EQ(c.models.size(), 1u);  // the unusable ids are dropped, not cut
  EXPECT_EQ(c.models[0].id, "ok");
  EXPECT_EQ(c.models[0].label, "label \xEF\xBF\xBD with a bad byte");  // U+FFFD
}

}  // namespace
}  // namespace agentstream::providers
