#include "cli/client/turn_wait.h"

#include <variant>

namespace agentstream::cli::client {

Result<TurnEnd> WaitForTurn(HttpClient& http, const std::string& agent, const std::string& from,
                            const std::string& client_id, std::optional<std::string> turn,
                            const EventFollower::RetryCallback& on_retry,
                            const std::atomic<bool>* stop) {
  EventFollower follower(http, agent, EventFollowerOptions{.from = from, .stop = stop});
  TurnEnd end;
  auto on_event = [&](const EventRecord& record) {
    auto event = DecodeRecord(record);
    if (!event.ok() || !record.turn) return true;
    const auto* started = std::get_if<TurnStarted>(&event->payload);
    if (!turn && started && started->client_message_id == client_id) turn = record.turn->str();
    if (!turn || record.turn->str() != *turn) return true;
    if (const auto* done = std::get_if<TurnCompleted>(&event->payload)) {
      end.outcome = "completed";
      end.reason = done->stop_reason.value_or("");
    } else if (const auto* canceled = std::get_if<TurnCanceled>(&event->payload)) {
      end.outcome = "canceled";
      end.reason = canceled->reason;
    } else if (const auto* failed = std::get_if<TurnFailed>(&event->payload)) {
      end.outcome = "failed";
      end.reason = failed->code + (failed->message.empty() ? "" : ": " + failed->message);
    } else {
      return true;
    }
    end.turn = *turn;
    end.at = record.cursor();
    return false;
  };
  AS_RETURN_IF_ERROR(follower.Run(on_event, on_retry));
  if (end.outcome.empty() && turn) end.turn = *turn;
  return end;
}

}  // namespace agentstream::cli::client
