#include "acp_server/attached_session.h"

#include <fmt/core.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>
#include <chrono>

#include "acp_server/connection.h"
#include "api/api_json.h"
#include "client/daemon_api.h"
#include "client/endpoint.h"
#include "client/event_follower.h"
#include "core/event_codec.h"

namespace agentstream::acp_server {

namespace json = boost::json;
using client::DaemonApi;

AttachedSession::AttachedSession(Connection& connection, const api::AgentSnapshot& snapshot,
                                 SessionSettings settings, std::optional<jsonrpc::RpcId> load_id)
    : connection_(connection),
      id_(snapshot.id.str()),
      mapper_(snapshot.id.str(), std::move(settings)),
      load_id_(std::move(load_id)) {}

AttachedSession::~AttachedSession() {
  stop_ = true;
  if (!follower_.joinable()) return;
  // The follower's own reference may be the last one (the loop dropped the session first).
  if (follower_.get_id() == std::this_thread::get_id()) {
    follower_.detach();
  } else {
    follower_.join();
  }
}

void AttachedSession::Start(const std::string& from, const api::AgentSnapshot& snapshot) {
  for (const api::PendingPermissionInfo& p : snapshot.permissions) {
    PermissionRequested request;  // the snapshot names no title nor options: allow or deny
    request.request_id = p.request_id;
    request.call_id = p.call_id;
    request.title = p.tool_name.empty() ? std::string("Permission") : p.tool_name;
    request.tool_name = p.tool_name;
    PendingPermission& pending = permissions_[p.request_id.str()];
    pending.request = std::move(request);
    if (snapshot.active_turn) pending.turn = snapshot.active_turn->str();
  }
  follower_ = std::thread([this, from] { Follow(from); });
}

void AttachedSession::Follow(std::string from) {
  auto self = shared_from_this();
  auto post = [this, self](auto fn) { boost::asio::post(connection_.io(), std::move(fn)); };
  auto http = client::Transport::Create(connection_.options().http);
  if (!http.ok()) {
    post([self, s = http.status()] { self->OnFollowerEnded(s); });
    return;
  }
  const std::size_t high_water = connection_.options().limits.max_queue_bytes / 2;
  client::EventFollower follower(
      **http, id_, client::EventFollowerOptions{.from = std::move(from), .stop = &stop_});
  const Status ended = follower.Run(
      [&](const EventRecord& record) {
        Result<Event> event = DecodeRecord(record);
        if (!event.ok()) {  // a kind this build does not know: shown nowhere, as in `follow`
          fmt::print(stderr, "agentstream acp: {}: skipping event {}: {}\n", id_,
                     FormatCursor(record.cursor()), event.status().message());
          return true;
        }
        // Pause while the client has not taken what it was sent (a long replay to a slow editor).
        while (!stop_ && connection_.queued_bytes() + in_flight_.load() > high_water)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const std::size_t size = record.payload.size();
        in_flight_ += size;
        post([self, size, e = std::move(event).value()] {
          self->in_flight_ -= size;
          self->OnEvent(e);
        });
        return !stop_.load();
      },
      [this](const Status& why, std::chrono::milliseconds delay) {
        fmt::print(stderr, "agentstream acp: {}: {}; reconnecting in {} ms\n", id_, why.message(),
                   delay.count());
      },
      [post, self] { post([self] { self->OnCaughtUp(); }); });
  if (!stop_) post([self, ended] { self->OnFollowerEnded(ended); });
}

void AttachedSession::OnEvent(const Event& event) {
  if (stop_) return;
  if (const auto* started = std::get_if<TurnStarted>(&event.payload);
      started && started->client_message_id && event.turn) {
    if (PendingPrompt* p = FindPrompt(*started->client_message_id)) {
      p->turn = event.turn->str();
      if (p->cancel_requested) CancelPrompt(*p);
    }
  }
  const auto* user = std::get_if<UserMessage>(&event.payload);
  const bool own = user && own_prompts_.contains(user->client_message_id);
  if (!own) {
    for (json::object& params : mapper_.Map(event))
      connection_.Send(jsonrpc::NotificationLine("session/update", std::move(params)));
  }
  if (const auto* requested = std::get_if<PermissionRequested>(&event.payload)) {
    PendingPermission& p = permissions_[requested->request_id.str()];
    if (p.ask_id != 0) connection_.WithdrawAsk(p.ask_id);  // a snapshot's ask, now in full
    p = PendingPermission{*requested};
    if (event.turn) p.turn = event.turn->str();
    if (caught_up_) Ask(p);
  } else if (const auto* resolved = std::get_if<PermissionResolved>(&event.payload)) {
    auto it = permissions_.find(resolved->request_id.str());
    if (it != permissions_.end()) {
      if (it->second.ask_id != 0) connection_.WithdrawAsk(it->second.ask_id);
      permissions_.erase(it);
    }
  } else if (const auto* canceled = std::get_if<PromptCanceled>(&event.payload)) {
    Answer(canceled->client_message_id, "");  // its prompt never ran: cancelled
  }
  if (std::optional<TurnEnd> end = TurnEndOf(event.payload); end && event.turn) {
    // A permission of an ended turn can no longer be answered (a restart failed the turn).
    std::erase_if(permissions_, [&](auto& entry) {
      if (entry.second.turn != event.turn->str()) return false;
      if (entry.second.ask_id != 0) connection_.WithdrawAsk(entry.second.ask_id);
      return true;
    });
    for (std::size_t i = 0; i < prompts_.size();) {
      if (prompts_[i].turn == event.turn->str()) {
        connection_.Send(PromptAnswerLine(prompts_[i].rpc_id, *end));
        prompts_.erase(prompts_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }
}

void AttachedSession::OnCaughtUp() {
  if (stop_ || caught_up_) return;
  caught_up_ = true;
  if (load_id_) {
    connection_.Send(jsonrpc::ResultLine(
        *load_id_, json::object{{"modes", ModesJson(mapper_.settings())},
                                {"configOptions", ConfigOptionsJson(mapper_.settings())}}));
    load_id_.reset();
  }
  for (auto& [id, pending] : permissions_) Ask(pending);
}

void AttachedSession::OnFollowerEnded(const Status& why) {
  if (stop_) return;
  ended_ = true;
  ended_why_ = "the session's log cannot be read: " + why.ToString();
  fmt::print(stderr, "agentstream acp: {}: {}\n", id_, ended_why_);
  if (load_id_) {
    connection_.Send(jsonrpc::ErrorLine(*load_id_, RpcCodeFor(why), ended_why_));
    load_id_.reset();
  }
  for (PendingPrompt& p : prompts_)
    connection_.Send(jsonrpc::ErrorLine(p.rpc_id, jsonrpc::kInternalError, ended_why_));
  prompts_.clear();
}

void AttachedSession::Ask(PendingPermission& pending) {
  if (pending.ask_id != 0 || pending.answered) return;
  pending.ask_id = connection_.AskPermission(shared_from_this(), pending.request.request_id,
                                             mapper_.PermissionParams(pending.request));
}

void AttachedSession::OnPermissionAnswer(const RequestId& request,
                                         const jsonrpc::RpcMessage& answer) {
  auto it = permissions_.find(request.str());
  if (it == permissions_.end()) return;  // resolved meanwhile
  PendingPermission& pending = it->second;
  pending.ask_id = 0;
  if (answer.error) {  // the client could not answer: the request stays pending for others
    fmt::print(stderr, "agentstream acp: {}: permission {} not answered: {}\n", id_, request.str(),
               *answer.error);
    return;
  }
  Result<PermissionAnswer> decision = ReadPermissionAnswer(pending.request, answer.result);
  if (!decision.ok()) {
    fmt::print(stderr, "agentstream acp: {}: permission {}: {}\n", id_, request.str(),
               decision.status().message());
    return;
  }
  pending.answered = true;
  turn::ReplyPermission reply;
  reply.request_id = request;
  reply.decision = decision->allow ? PermissionDecision::kAllow : PermissionDecision::kDeny;
  reply.option_id = decision->option_id;
  if (!decision->message.empty()) reply.message = decision->message;
  const std::string target =
      DaemonApi::AgentPath(id_, "/permissions/" + client::PercentEncode(request.str()));
  const json::value body = api::PermissionReplyToJson(reply);
  connection_.CallDaemon([target, body](DaemonApi& api) { return api.Call("POST", target, &body); },
                         [id = id_, request = request.str()](const Result<json::value>& done) {
                           // Answered elsewhere first (not pending any more): the log shows the
                           // winner.
                           if (!done.ok() && done.status().code() != ErrorCode::kNotFound &&
                               done.status().code() != ErrorCode::kConflict)
                             fmt::print(stderr, "agentstream acp: {}: permission {}: {}\n", id,
                                        request, done.status().message());
                         },
                         true);
}

void AttachedSession::Prompt(const jsonrpc::RpcId& rpc_id, Submission submission) {
  if (ended_) {
    connection_.Send(jsonrpc::ErrorLine(rpc_id, jsonrpc::kInternalError, ended_why_));
    return;
  }
  api::SendRequest request;
  request.client_message_id = client::NewClientId("acp");
  request.text = std::move(submission.text);
  request.attachments = std::move(submission.attachments);
  request.while_running = turn::WhileRunning::kQueue;
  if (own_order_.size() >= kMaxOwnPrompts) {
    own_prompts_.erase(own_order_.front());
    own_order_.pop_front();
  }
  own_prompts_.insert(request.client_message_id);
  own_order_.push_back(request.client_message_id);
  prompts_.push_back(PendingPrompt{rpc_id, request.client_message_id});
  const std::string target = DaemonApi::AgentPath(id_, "/messages");
  const json::value body = api::SendRequestToJson(request);
  auto self = shared_from_this();
  connection_.CallDaemon([target, body](DaemonApi& api) { return api.Call("POST", target, &body); },
                         [self, cmid = request.client_message_id](Result<json::value> reply) {
                           self->OnSendReply(cmid, std::move(reply));
                         },
                         true);
}

void AttachedSession::OnSendReply(const std::string& cmid, Result<json::value> reply) {
  PendingPrompt* p = FindPrompt(cmid);
  if (p == nullptr || stop_) return;  // answered already (its turn ended first)
  if (!reply.ok()) {
    return Answer(
        cmid, jsonrpc::ErrorLine(p->rpc_id, RpcCodeFor(reply.status()), reply.status().message()));
  }
  Result<api::SendReply> sent = api::SendReplyFromJson(*reply);
  if (!sent.ok()) {
    return Answer(cmid, jsonrpc::ErrorLine(p->rpc_id, jsonrpc::kInternalError,
                                           "daemon: " + sent.status().message()));
  }
  switch (sent->outcome) {
    case turn::SubmissionOutcome::kRejected:
      return Answer(cmid, jsonrpc::ErrorLine(p->rpc_id, jsonrpc::kInternalError,
                                             "the agent rejected the prompt: " + sent->message));
    case turn::SubmissionOutcome::kCanceled:
      return Answer(cmid, "");
    case turn::SubmissionOutcome::kQueued:
      p->queued = true;
      break;
    case turn::SubmissionOutcome::kAccepted:
    case turn::SubmissionOutcome::kDuplicate:
      if (sent->turn && !p->turn) p->turn = sent->turn->str();
      break;
  }
  if (p->cancel_requested) CancelPrompt(*p);
}

void AttachedSession::Cancel() {
  for (PendingPrompt& p : prompts_) {
    p.cancel_requested = true;
    CancelPrompt(p);
  }
}

void AttachedSession::CancelPrompt(PendingPrompt& p) {
  // Only the client's own turn is interrupted: a prompt queued behind another client's turn is
  // taken out of the queue instead. A prompt still on its way is canceled when its reply comes.
  std::string method, target;
  if (p.turn) {
    method = "POST";
    target = DaemonApi::AgentPath(id_, "/interrupt");
  } else if (p.queued) {
    method = "DELETE";
    target = DaemonApi::AgentPath(id_, "/messages/" + client::PercentEncode(p.client_message_id));
  } else {
    return;
  }
  connection_.CallDaemon([method, target](DaemonApi& api) { return api.Call(method, target); },
                         [id = id_](const Result<json::value>& done) {
                           if (!done.ok() && done.status().code() != ErrorCode::kNotFound)
                             fmt::print(stderr, "agentstream acp: {}: cancel: {}\n", id,
                                        done.status().message());
                         },
                         false);
}

bool AttachedSession::HasPrompt(const jsonrpc::RpcId& rpc_id) const {
  return std::any_of(prompts_.begin(), prompts_.end(),
                     [&](const PendingPrompt& p) { return p.rpc_id == rpc_id; });
}

void AttachedSession::Answer(const std::string& cmid, std::string line) {
  for (auto it = prompts_.begin(); it != prompts_.end(); ++it) {
    if (it->client_message_id != cmid) continue;
    connection_.Send(line.empty() ? PromptAnswerLine(it->rpc_id, TurnEnd{TurnEnd::Kind::kCanceled})
                                  : std::move(line));
    prompts_.erase(it);
    return;
  }
}

AttachedSession::PendingPrompt* AttachedSession::FindPrompt(const std::string& cmid) {
  for (PendingPrompt& p : prompts_)
    if (p.client_message_id == cmid) return &p;
  return nullptr;
}

void AttachedSession::Detach(bool cancel_work) {
  if (cancel_work) {
    Cancel();
    for (PendingPrompt& p : prompts_)
      connection_.Send(PromptAnswerLine(p.rpc_id, TurnEnd{TurnEnd::Kind::kCanceled}));
    for (auto& [id, pending] : permissions_)
      if (pending.ask_id != 0) connection_.WithdrawAsk(pending.ask_id);
  }
  prompts_.clear();
  permissions_.clear();
  stop_ = true;
  if (follower_.joinable()) follower_.join();
}

}  // namespace agentstream::acp_server
