#include "client/turn_wait.h"

#include <variant>

namespace agentstream::client {

bool TurnEndMatcher::Ended(const EventRecord& record) {
  auto event = DecodeRecord(record);
  if (!event.ok() || !record.turn) return false;
  const auto* started = std::get_if<TurnStarted>(&event->payload);
  if (!turn_ && started && started->client_message_id == client_id_) turn_ = record.turn->str();
  if (!turn_ || record.turn->str() != *turn_) return false;
  if (const auto* done = std::get_if<TurnCompleted>(&event->payload)) {
    end_.outcome = "completed";
    end_.reason = done->stop_reason.value_or("");
  } else if (const auto* canceled = std::get_if<TurnCanceled>(&event->payload)) {
    end_.outcome = "canceled";
    end_.reason = canceled->reason;
  } else if (const auto* failed = std::get_if<TurnFailed>(&event->payload)) {
    end_.outcome = "failed";
    end_.reason = failed->code + (failed->message.empty() ? "" : ": " + failed->message);
  } else {
    return false;
  }
  end_.at = record.cursor();
  return true;
}

TurnEnd TurnEndMatcher::end() const {
  TurnEnd end = end_;
  if (turn_) end.turn = *turn_;
  return end;
}

Result<TurnEnd> WaitForTurn(Transport& http, const std::string& agent, const std::string& from,
                            const std::string& client_id, std::optional<std::string> turn,
                            const EventFollower::RetryCallback& on_retry,
                            const std::atomic<bool>* stop) {
  EventFollower follower(http, agent, EventFollowerOptions{.from = from, .stop = stop});
  TurnEndMatcher matcher(client_id, std::move(turn));
  AS_RETURN_IF_ERROR(follower.Run(
      [&matcher](const EventRecord& record) { return !matcher.Ended(record); }, on_retry));
  return matcher.end();
}

}  // namespace agentstream::client
