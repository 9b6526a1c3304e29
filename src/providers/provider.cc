#include "providers/provider.h"

#include <memory>

#include "core/utf8.h"

namespace agentstream::providers {

void AgentProvider::Run(const TurnRequest& request, std::function<void(Result<RunResult>)> done) {
  struct State {
    EventSubscription sub;
    RunResult result;
    bool accepted = false, finished = false;
    std::function<void(Result<RunResult>)> done;
  };
  auto state = std::make_shared<State>();
  state->done = std::move(done);
  state->sub = Subscribe([state](const turn::ProviderEvent& event) {
    if (state->finished) return;
    if (const auto* delta = std::get_if<turn::ProviderTextDelta>(&event)) {
      state->result.text += delta->text;
    } else if (const auto* r = std::get_if<turn::ProviderTurnResult>(&event)) {
      if (!state->accepted) return;
      state->finished = true;
      state->result.outcome = r->outcome;
      state->result.message = r->message;
      state->sub.Cancel();
      state->done(state->result);
    } else if (const auto* exited = std::get_if<turn::ProviderExited>(&event)) {
      state->finished = true;
      state->sub.Cancel();
      state->done(Error(ErrorCode::kUnavailable, "provider exited: " + exited->message));
    }
  });
  StartTurn(request, [state](const Status& status) {
    if (state->finished) return;
    if (!status.ok()) {
      state->finished = true;
      state->sub.Cancel();
      return state->done(status);
    }
    state->accepted = true;
  });
}

void AgentProvider::SetMode(const std::string& mode, Done done) {
  Later(std::move(done), Error(ErrorCode::kInvalidArgument, "no mode " + mode));
}

void AgentProvider::SetModel(const std::string& model, Done done) {
  Later(std::move(done), Error(ErrorCode::kInvalidArgument, "no model " + model));
}

void AgentProvider::SetThinkingOption(const std::string& option, Done done) {
  Later(std::move(done), Error(ErrorCode::kInvalidArgument, "no thinking option " + option));
}

namespace {

// `text` sanitized and cut to kMaxChoiceTextBytes.
std::string BoundText(std::string_view text) { return BoundUtf8(text, kMaxChoiceTextBytes).text; }

// A usable id: non-empty, within kMaxChoiceIdBytes, valid UTF-8.
bool UsableId(const std::string& id) {
  return !id.empty() && id.size() <= kMaxChoiceIdBytes && IsValidUtf8(id);
}

std::vector<Choice> BoundChoices(std::vector<Choice> choices) {
  std::vector<Choice> out;
  for (Choice& c : choices) {
    if (out.size() == kMaxChoices) break;
    if (!UsableId(c.id)) continue;
    out.push_back(Choice{std::move(c.id), BoundText(c.label)});
  }
  return out;
}

}  // namespace

CapabilitiesChanged DescribeCapabilities(const AgentProvider& provider) {
  CapabilitiesChanged out;
  out.modes = BoundChoices(provider.AvailableModes());
  out.models = BoundChoices(provider.AvailableModels());
  out.thinking_options = BoundChoices(provider.ThinkingOptions());
  for (CommandInfo& c : provider.ListCommands()) {
    if (out.commands.size() == kMaxChoices) break;
    if (!UsableId(c.name)) continue;
    out.commands.push_back(CommandInfo{std::move(c.name), BoundText(c.description)});
  }
  return out;
}

}  // namespace agentstream::providers
