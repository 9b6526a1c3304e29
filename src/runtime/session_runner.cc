#include "runtime/session_runner.h"

namespace agentstream::runtime {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace): engine vocabulary

SessionRunner::SessionRunner(providers::AgentProvider& provider, TurnState initial,
                             TurnIdSource& ids, AppendSink sink, EffectObserver observer)
    : provider_(provider),
      ids_(ids),
      sink_(std::move(sink)),
      observer_(std::move(observer)),
      state_(std::move(initial)) {
  subscription_ = provider_.Subscribe([this](const ProviderEvent& e) { (void)Feed(e); });
}

Status SessionRunner::Command(const turn::Command& command) { return Feed(command); }

Status SessionRunner::Feed(EngineInput input) {
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
    for (const Effect& e : step.effects) Execute(e);
    if (is_first) first = step.status, is_first = false;
    if (pending_.empty()) break;
    input = std::move(pending_.front());
    pending_.pop_front();
  }
  stepping_ = false;
  return first;
}

void SessionRunner::Execute(const Effect& effect) {
  std::weak_ptr<bool> alive = alive_;
  if (const auto* start = std::get_if<StartProviderTurn>(&effect)) {
    const TurnId turn = start->turn;
    provider_.StartTurn(providers::TurnRequest{turn, start->client_message_id, start->text},
                        [this, alive, turn](const Status& s) {
                          if (!alive.lock()) return;
                          if (s.ok()) {
                            (void)Feed(turn::Command(ProviderAcceptedTurn{turn}));
                          } else {
                            (void)Feed(turn::Command(ProviderRejectedTurn{turn, s.message()}));
                          }
                        });
  } else if (std::holds_alternative<InterruptProvider>(effect)) {
    provider_.Interrupt([this, alive](const Status&) {
      if (alive.lock()) (void)Feed(turn::Command(InterruptTeardownDone{}));
    });
  } else if (const auto* reply = std::get_if<SendPermissionReply>(&effect)) {
    provider_.RespondToPermission(reply->request_id,
                                  providers::PermissionReply{reply->decision, reply->message},
                                  [](const Status&) {});
  } else {
    observer_(effect);  // ReplySubmission or StatusChanged
  }
}

}  // namespace agentstream::runtime
