#include "providers/codex/codex_provider.h"

#include <boost/json.hpp>

#include "providers/codex/codex_history.h"
#include "providers/wire_fields.h"
#include "system/random_id.h"

namespace agentstream::providers::codex {

namespace json = boost::json;
using jsonrpc::RpcMessage;

namespace {

using wire::Obj;
using wire::Str;

std::string Line(const json::object& message) { return json::serialize(message); }

// The text of a request id in a permission's id: a string id's value, else its JSON text.
std::string IdText(const jsonrpc::RpcId& id) { return id.string().value_or(id.json()); }

}  // namespace

CodexProvider::CodexProvider(process::EventLoop& loop, CodexOptions options)
    : ChildProcessProvider(
          loop,
          ChildLifecycle::Of("codex", "codex app-server did not start a thread in time", options)),
      options_(std::move(options)),
      thread_id_(options_.thread_id) {
  nonce_ = system::RandomHex(8);
}

std::int64_t CodexProvider::Call(std::string_view method, json::value params, Reply reply) {
  auto fail = [this, &reply](std::string message) {
    Post([reply = std::move(reply), message = std::move(message)] {
      reply(Error(ErrorCode::kUnavailable, message));
    });
  };
  if (!child_ || exited_) {
    fail("codex is not running");
    return 0;
  }
  if (calls_.size() >= options_.max_pending_requests) {
    fail("too many requests in flight");
    return 0;
  }
  const std::int64_t id = calls_.TakeId();
  if (Status s =
          child_->WriteLine(Line({{"id", id}, {"method", method}, {"params", std::move(params)}}));
      !s.ok()) {
    fail(s.message());
    return 0;
  }
  calls_.Add(id, std::move(reply));
  return id;
}

Result<process::SpawnOptions> CodexProvider::Command() {
  process::SpawnOptions spawn;
  spawn.argv = {options_.program};
  spawn.argv.insert(spawn.argv.end(), options_.global_args.begin(), options_.global_args.end());
  spawn.argv.emplace_back("app-server");
  spawn.env = EnvOrDaemons(options_.env);
  spawn.cwd = options_.cwd;
  spawn.max_line_bytes = options_.max_line_bytes;
  return spawn;
}

void CodexProvider::Handshake() {
  json::object init{
      {"clientInfo",
       json::object{{"name", "agentstream"}, {"title", "agentstream"}, {"version", "1"}}},
      {"capabilities", nullptr}};
  Call("initialize", std::move(init),
       [this](Result<json::value> r) { OnInitialized(std::move(r)); });
}

void CodexProvider::OnInitialized(Result<json::value> r) {
  if (!r.ok())
    return FinishHandshake(
        Error(ErrorCode::kUnavailable, "initialize failed: " + r.status().message()));
  if (r->is_object()) {
    const std::string agent = Str(r->as_object(), "userAgent");  // "name/0.171.0 (...)"
    const auto slash = agent.find('/'), space = agent.find(' ');
    if (slash != std::string::npos) version_ = agent.substr(slash + 1, space - slash - 1);
  }
  (void)child_->WriteLine(Line({{"method", "initialized"}}));
  const bool resume = !options_.thread_id.empty();
  json::object params{{"cwd", options_.cwd},
                      {"approvalPolicy", options_.approval_policy},
                      {"sandbox", options_.sandbox}};
  if (options_.model) params["model"] = *options_.model;
  if (resume) {
    params["threadId"] = options_.thread_id;
    params["excludeTurns"] = true;  // read in pages below: one reply could outgrow a line
  }
  Call(resume ? "thread/resume" : "thread/start", std::move(params),
       [this, resume](Result<json::value> t) { OnThread(resume, std::move(t)); });
}

void CodexProvider::OnThread(bool resume, Result<json::value> t) {
  if (!t.ok()) return FinishHandshake(Error(ErrorCode::kUnavailable, t.status().message()));
  if (t->is_object()) {
    if (const json::object* thread = Obj(t->as_object(), "thread")) thread_id_ = Str(*thread, "id");
    model_ = Str(t->as_object(), "model");
  }
  auto ready = [this](const Status&) {
    if (exited_) return FinishHandshake(Error(ErrorCode::kUnavailable, "codex exited"));
    if (thread_id_.empty())
      return FinishHandshake(Error(ErrorCode::kUnavailable, "codex returned no thread id"));
    connected_ = true;
    FinishHandshake(Status::Ok());
  };
  if (!resume || thread_id_.empty()) return ready(Status::Ok());
  LoadHistory("", ready);
}

void CodexProvider::LoadHistory(const std::string& cursor, const Done& finish) {
  json::object params{{"threadId", thread_id_},
                      {"sortDirection", "desc"},
                      {"itemsView", "full"},
                      {"limit", options_.history_page_turns}};
  if (!cursor.empty()) params["cursor"] = cursor;
  history_call_ =
      Call("thread/turns/list", std::move(params), [this, finish](Result<json::value> r) {
        history_call_ = 0;
        if (!r.ok()) {
          FinishHistory(Error(ErrorCode::kUnavailable,
                              "cannot read the codex thread's history: " + r.status().message()));
          return finish(history_status_);
        }
        std::string next;
        bool empty = true;  // an empty page ends the paging whatever its cursor says
        if (r->is_object()) {
          const json::object& page = r->as_object();
          if (const json::value* data = page.if_contains("data"); data && data->is_array())
            for (const json::value& t : data->as_array()) {
              empty = false;
              if (t.is_object() && history_turns_.size() < options_.max_history_turns)
                history_turns_.push_back(t.as_object());
            }
          next = Str(page, "nextCursor");
        }
        if (empty || next.empty() || history_turns_.size() >= options_.max_history_turns) {
          FinishHistory(Status::Ok());
          return finish(history_status_);
        }
        LoadHistory(next, finish);
      });
}

void CodexProvider::FinishHistory(Status status) {
  history_status_ = std::move(status);
  if (history_status_.ok())  // the pages came newest first
    for (auto it = history_turns_.rbegin(); it != history_turns_.rend(); ++it)
      AppendTurnHistory(*it, history_);
  history_turns_.clear();
  history_turns_.shrink_to_fit();
}

void CodexProvider::StartTurn(const TurnRequest& request, Done done) {
  if (Status ready = ReadyForTurn(turn_running_); !ready.ok())
    return Later(std::move(done), std::move(ready));
  turn_running_ = true;
  interrupt_sent_ = false;
  turn_id_.clear();
  json::array input{
      json::object{{"type", "text"}, {"text", request.text}, {"text_elements", json::array{}}}};
  Call("turn/start", json::object{{"threadId", thread_id_}, {"input", std::move(input)}},
       [this, done = std::move(done)](Result<json::value> r) {
         if (!r.ok()) {
           turn_running_ = false;
           StopWatchdog();
           return done(Error(ErrorCode::kInvalidArgument, r.status().message()));
         }
         if (r->is_object())
           if (const json::object* t = Obj(r->as_object(), "turn"))
             if (turn_id_.empty()) turn_id_ = Str(*t, "id");
         if (interrupting()) SendInterrupt();
         done(Status::Ok());
       });
  ArmWatchdog();
}

void CodexProvider::SendInterrupt() {
  if (interrupt_sent_ || turn_id_.empty()) return;
  interrupt_sent_ = true;
  Call("turn/interrupt", json::object{{"threadId", thread_id_}, {"turnId", turn_id_}},
       [](const Result<json::value>&) {});
  // Open approvals die with the turn.
  for (auto& [id, p] : permissions_.TakeAll()) {
    (void)child_->WriteLine(jsonrpc::LineWithId(
        p.wire.rpc_id,
        {{"result", json::object{{"decision", p.wire.legacy ? "abort" : "cancel"}}}}));
    Publish(turn::ProviderPermissionResolved{id, PermissionDecision::kDeny, std::nullopt,
                                             "cancelled with the turn"});
  }
}

void CodexProvider::EndTurn(turn::ProviderTurnResult result) {
  for (const std::string& id : open_tools_)
    Publish(turn::ProviderToolEnd{ToolCallId(id), ToolCallStatus::kCanceled, std::nullopt,
                                  std::nullopt});
  open_tools_.clear();
  streamed_.clear();
  turn_running_ = false;
  permissions_.Clear();
  StopWatchdog();
  Publish(std::move(result));
  ResolveInterruptWaiters();
}

void CodexProvider::OnFrame(const process::Frame& frame) {
  if (frame.kind == process::Frame::Kind::kOversize && history_call_ != 0) {
    // While the history loads nothing else of size is outstanding: the page was dropped, the
    // resume goes on without a history.
    calls_.Fail(history_call_, Error(ErrorCode::kResourceExhausted,
                                     "a history page of " + std::to_string(frame.dropped) +
                                         " bytes is longer than max_line_bytes"));
  } else if (frame.kind == process::Frame::Kind::kOversize) {
    Publish(turn::ProviderError{
        "protocol_oversize", "dropped a " + std::to_string(frame.dropped) + "-byte line", false});
  } else if (Result<RpcMessage> m = jsonrpc::ParseRpc(frame.text); m.ok()) {
    OnMessage(std::move(m).value());
  } else if (!frame.text.empty()) {
    Publish(ProtocolGarbage(m.status(), frame.text));
  }
  ArmWatchdog();
}

void CodexProvider::OnMessage(RpcMessage m) {
  if (m.kind == RpcMessage::Kind::kResponse) return calls_.Resolve(std::move(m));
  if (m.kind == RpcMessage::Kind::kRequest) return OnServerRequest(m);
  static const json::object kEmpty;
  OnNotification(m.method, m.params.is_object() ? m.params.as_object() : kEmpty);
}

void CodexProvider::OnNotification(const std::string& method, const json::object& p) {
  const std::string thread = Str(p, "threadId");
  if (!thread.empty() && thread != thread_id_) return;  // another thread of this server
  if (method == "turn/started") {
    if (const json::object* t = Obj(p, "turn"); t && turn_id_.empty()) turn_id_ = Str(*t, "id");
    if (interrupting()) SendInterrupt();
    return Publish(turn::ProviderTurnBegan{});
  }
  if (method == "item/started" || method == "item/completed") {
    if (const json::object* item = Obj(p, "item")) OnItem(method == "item/completed", *item);
    return;
  }
  if (method == "item/agentMessage/delta") {
    const std::string id = Str(p, "itemId");
    streamed_.insert(id);
    return Publish(
        turn::ProviderTextDelta{MessageId(id), Str(p, "delta"), std::nullopt, std::nullopt});
  }
  if (method == "item/reasoning/textDelta" || method == "item/reasoning/summaryTextDelta")
    return Publish(
        turn::ProviderReasoningDelta{MessageId(Str(p, "itemId")), Str(p, "delta"), std::nullopt});
  if (method == "item/commandExecution/outputDelta")
    return Publish(turn::ProviderToolOutput{ToolCallId(Str(p, "itemId")), Str(p, "delta")});
  if (method == "serverRequest/resolved") {
    const json::value* rid = p.if_contains("requestId");
    const std::optional<jsonrpc::RpcId> rpc_id =
        rid ? jsonrpc::RpcId::FromValue(*rid) : std::nullopt;
    if (!rpc_id) return;
    const RequestId id("codex_" + nonce_ + "_" + IdText(*rpc_id));
    if (permissions_.Erase(id))
      Publish(turn::ProviderPermissionResolved{id, PermissionDecision::kDeny, std::nullopt,
                                               "resolved by codex"});
    return ArmWatchdog();
  }
  if (method == "turn/completed") {
    if (!turn_running_) return;
    const json::object* t = Obj(p, "turn");
    const std::string status = t ? Str(*t, "status") : std::string();
    turn::ProviderTurnResult result;
    result.stop_reason = status;
    if (status == "interrupted") {
      result.outcome = turn::TurnOutcome::kCanceled;
      result.message = "interrupted";
    } else if (status == "failed") {
      result.outcome = turn::TurnOutcome::kFailed;
      result.error_code = "codex_turn_failed";
      const json::object* err = t ? Obj(*t, "error") : nullptr;
      result.message = err ? Str(*err, "message") : "the turn failed";
    }
    return EndTurn(std::move(result));
  }
  Publish(turn::ProviderUnknown{"codex." + method, p});
}

void CodexProvider::OnItem(bool completed, const json::object& item) {
  const std::string type = Str(item, "type");
  const std::string id = Str(item, "id");
  if (id.empty()) return;
  if (type == "agentMessage") {
    if (!completed)
      return Publish(turn::ProviderMessageStart{MessageId(id), std::nullopt, std::nullopt});
    if (!streamed_.count(id))  // no deltas came: the whole text at once
      Publish(
          turn::ProviderTextDelta{MessageId(id), Str(item, "text"), std::nullopt, std::nullopt});
    return Publish(turn::ProviderMessageStop{MessageId(id), std::string("end_turn")});
  }
  if (type == "userMessage") {
    if (!completed) return;
    std::string text;
    if (const json::value* c = item.if_contains("content"); c && c->is_array())
      for (const json::value& b : c->as_array())
        if (b.is_object()) text += Str(b.as_object(), "text");
    return Publish(turn::ProviderUserEcho{MessageId(id), std::nullopt, text});
  }
  if (type == "reasoning") return;  // its deltas carry the text
  // Tool-like items: commandExecution, fileChange, mcpToolCall, webSearch, ...
  if (!completed) {
    if (!open_tools_.insert(id).second) return;
    std::optional<std::string> title;
    if (std::string command = Str(item, "command"); !command.empty()) title = command;
    return Publish(
        turn::ProviderToolStart{ToolCallId(id), type, title, item, std::nullopt, std::nullopt});
  }
  if (!open_tools_.erase(id)) return;
  Publish(ToolEndOf(item));
}

void CodexProvider::OnServerRequest(const RpcMessage& m) {
  const bool legacy = m.method == "execCommandApproval" || m.method == "applyPatchApproval";
  const bool approval = legacy || m.method == "item/commandExecution/requestApproval" ||
                        m.method == "item/fileChange/requestApproval";
  if (!approval) {
    if (child_)
      (void)child_->WriteLine(jsonrpc::LineWithId(
          m.id, {{"error", json::object{{"code", jsonrpc::kMethodNotFound},
                                        {"message", "agentstream does not handle " + m.method}}}}));
    return;
  }
  static const json::object kEmpty;
  const json::object& p = m.params.is_object() ? m.params.as_object() : kEmpty;
  PendingPermission info;
  info.request_id = RequestId("codex_" + nonce_ + "_" + IdText(m.id));
  const bool command = m.method.find("ommand") != std::string::npos;
  info.tool_name = command ? "commandExecution" : "fileChange";
  info.input = m.params;
  std::string item = Str(p, "itemId");
  if (item.empty()) item = Str(p, "callId");
  if (!item.empty()) info.call_id = ToolCallId(item);
  turn::ProviderPermissionRequest req;
  req.request_id = info.request_id;
  req.call_id = info.call_id;
  req.tool_name = info.tool_name;
  req.input = m.params;
  req.title = command ? Str(p, "command") : "Apply file changes";
  if (req.title.empty()) req.title = m.method;
  req.options = {{"accept", PermissionOptionKind::kAllowOnce, "Accept"},
                 {"acceptForSession", PermissionOptionKind::kAllowAlways, "Accept for session"},
                 {"decline", PermissionOptionKind::kRejectOnce, "Decline"}};
  permissions_.Add(std::move(info), PermissionWire{m.id, legacy});
  Publish(std::move(req));
  StopWatchdog();
}

void CodexProvider::DropTurn() {
  open_tools_.clear();
  permissions_.Clear();
}

void CodexProvider::FailRequests(const process::ExitInfo&) {
  calls_.FailAll(Error(ErrorCode::kUnavailable, "codex exited"));
}

Result<std::vector<turn::ProviderEvent>> CodexProvider::StreamHistory() {
  if (!history_status_.ok()) return history_status_;
  return history_;
}

RuntimeInfo CodexProvider::GetRuntimeInfo() const {
  return RuntimeInfo{"codex",  thread_id_, model_,    options_.approval_policy,
                     version_, pid(),      connected_};
}

std::vector<ModeInfo> CodexProvider::AvailableModes() const {
  return {{"untrusted", "Ask before untrusted commands"},
          {"on-request", "The model asks when it needs to"},
          {"never", "Never ask"}};
}

void CodexProvider::SetMode(const std::string& mode, Done done) {
  // The approval policy applies from the next thread/resume or turn; kept for the next start.
  if (mode != "untrusted" && mode != "on-request" && mode != "never")
    return Later(std::move(done), Error(ErrorCode::kInvalidArgument, "unknown mode " + mode));
  if (mode != options_.approval_policy) Publish(turn::ProviderModeChanged{mode});
  options_.approval_policy = mode;
  Later(std::move(done), Status::Ok());
}

void CodexProvider::SetModel(const std::string& model, Done done) {
  options_.model = model;
  model_ = model;
  Publish(turn::ProviderModelChanged{model});
  Later(std::move(done), Status::Ok());
}

void CodexProvider::RespondToPermission(const RequestId& request, const PermissionReply& reply,
                                        Done done) {
  const std::optional<PermissionTable<PermissionWire>::Entry> p = permissions_.Take(request);
  if (!p) return Later(std::move(done), NotPending(request));
  const bool allow = reply.decision == PermissionDecision::kAllow;
  const char* decision =
      p->wire.legacy ? (allow ? "approved" : "denied") : (allow ? "accept" : "decline");
  const jsonrpc::RpcId& id = p->wire.rpc_id;
  Status s = child_ && !exited_ ? child_->WriteLine(jsonrpc::LineWithId(
                                      id, {{"result", json::object{{"decision", decision}}}}))
                                : Error(ErrorCode::kUnavailable, "not running");
  ArmWatchdog();
  Later(std::move(done), std::move(s));
}

std::optional<PersistenceHandle> CodexProvider::DescribePersistence() const {
  if (thread_id_.empty()) return std::nullopt;
  return PersistenceHandle{"codex", thread_id_, options_.cwd};
}

}  // namespace agentstream::providers::codex
