#include "providers/testing/logged_runner.h"

#include <gtest/gtest.h>

#include <optional>
#include <utility>

#include "core/event_codec.h"

namespace agentstream::providers::testing {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)

void LoggedRunner::Open(AgentProvider& provider, std::string provider_name) {
  TurnState state;
  state.provider = std::move(provider_name);
  runner_ = std::make_unique<SessionRunner>(
      provider, std::move(state), ids_,
      [this](const std::vector<NewEvent>& batch) {
        for (const NewEvent& ne : batch) {
          Result<Event> e = ToEvent(ne, SessionId("s"), Cursor{Epoch(1), Seq(log_.size() + 1)});
          if (!e.ok()) {
            ADD_FAILURE() << "event does not decode: " << e.status().ToString();
            continue;
          }
          log_.push_back(std::move(e).value());
        }
      },
      [this](const Effect& effect) { Record(effect); });
}

Status LoggedRunner::Command(const turn::Command& command) {
  Result<std::optional<ReplySubmission>> answer = runner_->Command(command);
  if (!answer.ok()) return answer.status();
  if (*answer) replies_.push_back(**answer);
  return Status::Ok();
}

void LoggedRunner::Record(const Effect& effect) {
  if (const auto* r = std::get_if<ReplySubmission>(&effect)) {
    replies_.push_back(*r);
  } else if (const auto* c = std::get_if<StatusChanged>(&effect)) {
    status_changes_.push_back(c->status);
  }
}

std::size_t LoggedRunner::Terminals() const {
  return Of<TurnCompleted>().size() + Of<TurnCanceled>().size() + Of<TurnFailed>().size();
}

std::vector<TurnId> LoggedRunner::Turns() const {
  std::vector<TurnId> out;
  for (const Event* e : Of<TurnStarted>()) out.push_back(*e->turn);
  return out;
}

std::string LoggedRunner::TextOfTurn(const TurnId& turn) const {
  std::string text;
  for (const Event& e : log_)
    if (const auto* d = std::get_if<AssistantMessageDelta>(&e.payload); d && e.turn == turn)
      text += d->text;
  return text;
}

std::string LoggedRunner::DumpLog() const {
  std::string out;
  for (const Event& e : log_) {
    const std::string payload = EncodePayload(e.payload);
    out += std::to_string(e.seq.value()) + " " + std::string(EventKindName(e.kind())) + " " +
           (e.turn ? e.turn->str() : "-") + " " + payload.substr(0, 200) + "\n";
  }
  return out;
}

bool LoggedRunner::Settled() const {
  const SessionStatus st = runner_->status();
  return (st == SessionStatus::kIdle || st == SessionStatus::kError) &&
         runner_->state().queue.empty() && !runner_->state().pending_after_teardown;
}

void LoggedRunner::CheckInvariants(const timeline::CheckOptions& options) const {
  for (const auto& v : timeline::CheckInvariants(log_, options))
    ADD_FAILURE() << "invariant " << timeline::FormatViolation(v);
}

}  // namespace agentstream::providers::testing
