#include "providers/session_runner.h"

namespace agentstream::providers {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace): engine vocabulary

SessionRunner::SessionRunner(AgentProvider& provider, TurnState initial, TurnIdSource& ids,
                             AppendSink sink, EffectObserver observer)
    : provider_(provider),
      ids_(ids),
      sink_(std::move(sink)),
      observer_(std::move(observer)),
      state_(std::move(initial)) {
  subscription_ = provider_.Subscribe([this](const ProviderEvent& e) { (void)Feed(e, nullptr); });
}

Result<std::optional<ReplySubmission>> SessionRunner::Command(const turn::Command& command) {
  SenderAnswer answer;
  if (const auto* submit = std::get_if<SubmitPrompt>(&command))
    answer.client_message_id = &submit->client_message_id;
  AS_RETURN_IF_ERROR(Feed(command, &answer));
  return std::move(answer.reply);
}

Status SessionRunner::Feed(EngineInput input, SenderAnswer* answer) {
  if (stepping_) {
    pending_.push_back(std::move(input));
    return Status::Ok();
  }
  stepping_ = true;
  Status first;
  bool is_first = true;
  while (true) {
    Step step = Advance(std::move(state_), input, ids_);
    state_ = std::move(step.state);
    if (!step.events.empty()) sink_(step.events);
    for (const Effect& e : step.effects) Execute(e, answer);
    if (is_first) first = step.status, is_first = false;
    if (pending_.empty()) break;
    input = std::move(pending_.front());
    pending_.pop_front();
  }
  stepping_ = false;
  return first;
}

void SessionRunner::Execute(const Effect& effect, SenderAnswer* answer) {
  std::weak_ptr<bool> alive = alive_;
  if (const auto* start = std::get_if<StartProviderTurn>(&effect)) {
    const TurnId turn = start->turn;
    provider_.StartTurn(
        TurnRequest{turn, start->client_message_id, start->text},
        [this, alive, turn](const Status& s) {
          if (!alive.lock()) return;
          if (s.ok()) {
            (void)Feed(turn::Command(ProviderAcceptedTurn{turn}), nullptr);
          } else {
            (void)Feed(turn::Command(ProviderRejectedTurn{turn, s.message()}), nullptr);
          }
        });
  } else if (std::holds_alternative<InterruptProvider>(effect)) {
    provider_.Interrupt([this, alive](const Status&) {
      if (alive.lock()) (void)Feed(turn::Command(InterruptTeardownDone{}), nullptr);
    });
  } else if (const auto* reply = std::get_if<SendPermissionReply>(&effect)) {
    provider_.RespondToPermission(
        reply->request_id, PermissionReply{reply->decision, reply->message}, [](const Status&) {});
  } else if (const auto* sent = std::get_if<ReplySubmission>(&effect);
             sent && answer && answer->client_message_id && !answer->reply &&
             sent->client_message_id == *answer->client_message_id) {
    answer->reply = *sent;  // Command() returns it
  } else {
    observer_(effect);  // ReplySubmission or StatusChanged
  }
}

}  // namespace agentstream::providers
