// The provider half of the turn engine: routes each normalized provider event (router.h) and
// records it.
#include <boost/json.hpp>
#include <type_traits>

#include "core/turn/engine_internal.h"
#include "core/turn/router.h"
#include "core/utf8.h"

namespace agentstream::turn::internal {

namespace json = boost::json;

void Stepper::OnProvider(const ProviderEvent& event) {
  if (const auto* exited = std::get_if<ProviderExited>(&event)) return OnExited(*exited);
  if (const auto* echo = std::get_if<ProviderUserEcho>(&event)) return OnEcho(*echo);
  const RouteDecision route = Route(s_, event);
  switch (route.kind) {
    case RouteKind::kMetadata:
      return OnMetadata(event);
    case RouteKind::kTurn:
      return OnContent(event, route.turn);
    case RouteKind::kLate:
    case RouteKind::kUnowned:
      return OnContent(event, std::nullopt);
    case RouteKind::kNewAutonomous: {
      const TurnId turn =
          OpenRun(TurnOrigin::kAutonomous, std::nullopt, RouteKeysOf(event).task_id);
      return OnContent(event, turn);
    }
  }
}

void Stepper::Metadata(const std::string& type, json::object data,
                       const std::optional<TurnId>& turn) {
  Emit(agentstream::ProviderMetadata{s_.provider, type, json::value(std::move(data))}, turn);
}

void Stepper::OnMetadata(const ProviderEvent& event) {
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, ProviderTaskStarted>) {
          Metadata("task.started",
                   {{"taskId", e.task_id}, {"description", SanitizeUtf8(e.description)}},
                   std::nullopt);
        } else if constexpr (std::is_same_v<T, ProviderTaskNotification>) {
          Metadata(
              "task.notification",
              {{"taskId", e.task_id}, {"status", e.status}, {"summary", SanitizeUtf8(e.summary)}},
              std::nullopt);
        } else if constexpr (std::is_same_v<T, ProviderUsage>) {
          Emit(e.usage, std::nullopt);
        } else if constexpr (std::is_same_v<T, ProviderModeChanged>) {
          Emit(ModeChanged{e.mode}, std::nullopt);
        } else if constexpr (std::is_same_v<T, ProviderModelChanged>) {
          Emit(ModelChanged{e.model}, std::nullopt);
        } else if constexpr (std::is_same_v<T, ProviderUnknown>) {
          Emit(agentstream::ProviderMetadata{s_.provider, e.type, e.data}, std::nullopt);
        }
      },
      event);
}

// An echo of a prompt we recorded is dropped (one user message per foreground turn: invariant a
// of docs/timeline.md); its provider id is remembered so events that name it as parent route to
// the turn. Anything else is kept as metadata.
void Stepper::OnEcho(const ProviderUserEcho& echo) {
  const std::string text = SanitizeUtf8(echo.text);
  const Run* fg = s_.foreground ? Open(s_.foreground) : nullptr;
  const bool echo_of_fg =
      fg && (text == fg->prompt_text ||
             (echo.client_message_id && echo.client_message_id == fg->client_message_id));
  const bool echo_of_known =
      (echo.client_message_id && s_.known_client_ids.Contains(*echo.client_message_id)) ||
      text == s_.last_prompt_text;
  if (echo_of_fg) {
    if (echo.message_id) Remember(s_.by_message, *echo.message_id, fg->id, &Run::message_ids);
    MarkStreaming(fg->id);
    return;
  }
  if (echo_of_known) return;
  RouteDecision route = Route(s_, ProviderEvent(echo));
  std::optional<TurnId> turn = route.kind == RouteKind::kTurn ? route.turn : std::nullopt;
  json::object data{{"text", text}};
  if (echo.message_id) data["messageId"] = echo.message_id->str();
  Metadata("user.message.unmatched", std::move(data), turn);
}

void Stepper::OnExited(const ProviderExited& exited) {
  const std::string message = SanitizeUtf8(exited.message);
  // Nothing queued starts on a dead process: the next runtime runs the queue.
  s_.queue_held = true;
  FailAllOpen("provider_exited", message);
  Emit(Notice{NoticeLevel::kWarning,
              "the agent's process exited (" + message +
                  "); the next prompt starts it again, resuming the conversation"},
       std::nullopt);
  Do(RuntimeExited{message});
}

template <class Map, class Key>
void Stepper::Remember(Map& map, const Key& key, const std::optional<TurnId>& turn,
                       std::vector<Key> Run::*list) {
  Run* run = Open(turn);
  if (!run) return;  // late and unowned events never claim a key
  auto [it, inserted] = map.try_emplace(key, *turn);
  if (!inserted) {
    if (it->second == *turn) return;
    it->second = *turn;
  }
  (run->*list).push_back(key);
}

void Stepper::OnContent(const ProviderEvent& event, const std::optional<TurnId>& turn) {
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, ProviderTurnBegan>) {
          if (Open(turn)) return MarkStreaming(turn);
          json::object data;
          if (e.task_id) data["taskId"] = *e.task_id;
          Metadata("turn.began.unowned", std::move(data), std::nullopt);
        } else if constexpr (std::is_same_v<T, ProviderMessageStart>) {
          Remember(s_.by_message, e.message_id, turn, &Run::message_ids), MarkStreaming(turn);
          Emit(AssistantMessageStart{e.message_id, e.parent_message_id}, turn);
        } else if constexpr (std::is_same_v<T, ProviderTextDelta>) {
          Remember(s_.by_message, e.message_id, turn, &Run::message_ids), MarkStreaming(turn);
          Emit(AssistantMessageDelta{e.message_id, SanitizeUtf8(e.text)}, turn);
        } else if constexpr (std::is_same_v<T, ProviderMessageStop>) {
          Emit(AssistantMessageEnd{e.message_id, e.stop_reason}, turn);
        } else if constexpr (std::is_same_v<T, ProviderReasoningDelta>) {
          Remember(s_.by_message, e.message_id, turn, &Run::message_ids), MarkStreaming(turn);
          Emit(Reasoning{e.message_id, SanitizeUtf8(e.text)}, turn);
        } else if constexpr (std::is_same_v<T, ProviderToolStart>) {
          Remember(s_.by_call, e.call_id, turn, &Run::call_ids), MarkStreaming(turn);
          std::optional<std::string> title;
          if (e.title) title = SanitizeUtf8(*e.title);
          Emit(ToolCallStart{e.call_id, SanitizeUtf8(e.name), title, e.input, e.parent_message_id},
               turn);
        } else if constexpr (std::is_same_v<T, ProviderToolOutput>) {
          BoundedText out = BoundUtf8(e.text);
          Emit(ToolCallOutput{e.call_id, std::move(out.text), out.truncated}, turn);
        } else if constexpr (std::is_same_v<T, ProviderToolEnd>) {
          ToolCallEnd end{e.call_id, e.status, std::nullopt, false, std::nullopt};
          if (e.output) {
            BoundedText out = BoundUtf8(*e.output);
            end.output = std::move(out.text), end.truncated = out.truncated;
          }
          if (e.error) end.error = BoundUtf8(*e.error).text;
          Emit(end, turn);
        } else if constexpr (std::is_same_v<T, ProviderPermissionRequest>) {
          Remember(s_.by_request, e.request_id, turn, &Run::request_ids);
          if (Run* run = Open(turn)) run->pending_permissions.insert(e.request_id);
          Emit(PermissionRequested{e.request_id, e.call_id, SanitizeUtf8(e.title), e.tool_name,
                                   e.input, e.options},
               turn);
        } else if constexpr (std::is_same_v<T, ProviderPermissionResolved>) {
          ResolvePermission(s_, e.request_id);
          Emit(PermissionResolved{e.request_id, e.decision, e.option_id, e.message}, turn);
        } else if constexpr (std::is_same_v<T, ProviderPlan>) {
          Emit(Plan{e.entries}, turn);
        } else if constexpr (std::is_same_v<T, ProviderTurnResult>) {
          if (Open(turn)) return CloseRun(*turn, e.outcome, e.error_code, e.message, e.stop_reason);
          json::object data{{"outcome", static_cast<int>(e.outcome)},
                            {"message", SanitizeUtf8(e.message)}};
          Metadata("turn.result.stale", std::move(data), std::nullopt);
        } else if constexpr (std::is_same_v<T, ProviderError>) {
          Emit(ErrorEvent{SanitizeUtf8(e.code), SanitizeUtf8(e.message), e.fatal}, turn);
          if (e.fatal) {
            s_.errored = true;
            FailAllOpen(e.code.empty() ? "provider_error" : SanitizeUtf8(e.code),
                        SanitizeUtf8(e.message));
          }
        }
      },
      event);
}

}  // namespace agentstream::turn::internal
