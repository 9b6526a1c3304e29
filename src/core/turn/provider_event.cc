#include "core/turn/provider_event.h"

#include <type_traits>

namespace agentstream::turn {

RouteKeys RouteKeysOf(const ProviderEvent& event) {
  return std::visit(
      [](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        RouteKeys k;
        if constexpr (std::is_same_v<T, ProviderTurnBegan> ||
                      std::is_same_v<T, ProviderTurnResult>) {
          k.task_id = e.task_id;
        } else if constexpr (std::is_same_v<T, ProviderMessageStart> ||
                             std::is_same_v<T, ProviderTextDelta>) {
          k.task_id = e.task_id, k.parent_message_id = e.parent_message_id;
          k.message_id = e.message_id;
        } else if constexpr (std::is_same_v<T, ProviderReasoningDelta>) {
          k.parent_message_id = e.parent_message_id, k.message_id = e.message_id;
        } else if constexpr (std::is_same_v<T, ProviderMessageStop>) {
          k.message_id = e.message_id;
        } else if constexpr (std::is_same_v<T, ProviderUserEcho>) {
          k.message_id = e.message_id;
        } else if constexpr (std::is_same_v<T, ProviderToolStart>) {
          k.task_id = e.task_id, k.parent_message_id = e.parent_message_id, k.call_id = e.call_id;
        } else if constexpr (std::is_same_v<T, ProviderToolOutput> ||
                             std::is_same_v<T, ProviderToolEnd>) {
          k.call_id = e.call_id;
        } else if constexpr (std::is_same_v<T, ProviderPermissionRequest>) {
          k.call_id = e.call_id, k.request_id = e.request_id;
        } else if constexpr (std::is_same_v<T, ProviderPermissionResolved>) {
          k.request_id = e.request_id;
        }
        return k;
      },
      event);
}

bool IsMetadata(const ProviderEvent& event) {
  return std::holds_alternative<ProviderTaskStarted>(event) ||
         std::holds_alternative<ProviderTaskNotification>(event) ||
         std::holds_alternative<ProviderUsage>(event) ||
         std::holds_alternative<ProviderModeChanged>(event) ||
         std::holds_alternative<ProviderModelChanged>(event) ||
         std::holds_alternative<ProviderUnknown>(event);
}

bool OpensAutonomousTurn(const ProviderEvent& event) {
  return std::holds_alternative<ProviderMessageStart>(event) ||
         std::holds_alternative<ProviderTextDelta>(event) ||
         std::holds_alternative<ProviderReasoningDelta>(event) ||
         std::holds_alternative<ProviderToolStart>(event) ||
         std::holds_alternative<ProviderPermissionRequest>(event) ||
         std::holds_alternative<ProviderPlan>(event);
}

}  // namespace agentstream::turn
