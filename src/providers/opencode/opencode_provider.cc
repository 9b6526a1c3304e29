#include "providers/opencode/opencode_provider.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "net/http_url.h"
#include "providers/wire_fields.h"

namespace agentstream::providers::opencode {

namespace json = boost::json;
using wire::Obj;
using wire::Str;

namespace {

std::int64_t Tokens(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (v->is_double()) return static_cast<std::int64_t>(v->as_double());
  return wire::Int(o, key);
}

// The text of an opencode error object {name, data:{message}}.
std::string ErrorText(const json::object& error) {
  const json::object* data = Obj(error, "data");
  std::string message = data ? Str(*data, "message") : std::string();
  return message.empty() ? Str(error, "name") : message;
}

bool Ok(const Result<net::HttpReply>& r) { return r.ok() && r->status / 100 == 2; }

std::string Why(const Result<net::HttpReply>& r) {
  if (!r.ok()) return r.status().message();
  return "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 300);
}

}  // namespace

OpencodeProvider::OpencodeProvider(process::EventLoop& loop, OpencodeOptions options)
    : ProviderBase(loop, "opencode", options.stall_timeout, options.interrupt_timeout),
      options_(std::move(options)),
      session_id_(options_.session_id) {}

OpencodeProvider::~OpencodeProvider() {
  Shutdown();
  if (server_ && !released_) {
    if (!session_id_.empty()) server_->Unwatch(session_id_);
    server_->Release(nullptr);
  }
}

std::string OpencodeProvider::Target(const std::string& path) const {
  return options_.cwd.empty() ? path : path + "?directory=" + net::PercentEncode(options_.cwd);
}

void OpencodeProvider::Start(Done done) {
  if (server_ || closing_) return Later(std::move(done), Error(ErrorCode::kConflict, "started"));
  server_ = OpencodeServer::Acquire(loop_, options_.server);
  start_done_ = std::move(done);
  auto finish = [this](Status s) {
    if (start_done_) std::exchange(start_done_, nullptr)(std::move(s));
  };
  server_->WhenReady(WhileAlive([this, finish](const Status& ready) {
    if (!start_done_) return;
    if (!ready.ok()) return finish(ready);
    auto on_session = WhileAlive([this, finish](const Result<net::HttpReply>& r) {
      if (!start_done_) return;
      if (!Ok(r)) return finish(Error(ErrorCode::kUnavailable, "opencode session: " + Why(r)));
      std::error_code ec;
      json::value v = json::parse(r->body, ec);
      wire::NullNonFinite(v);
      if (ec || !v.is_object() || Str(v.as_object(), "id").empty())
        return finish(Error(ErrorCode::kUnavailable, "opencode returned no session"));
      session_id_ = Str(v.as_object(), "id");
      version_ = Str(v.as_object(), "version");
      server_->Watch(session_id_,
                     {[this](const std::string& type, const json::object& p) { OnEvent(type, p); },
                      [this](const std::string& message) { OnServerExit(message); }});
      connected_ = true;
      finish(Status::Ok());
    });
    if (session_id_.empty()) {
      server_->Request("POST", Target("/session"), "{}", std::move(on_session));
    } else {
      server_->Request("GET", Target("/session/" + session_id_), "", std::move(on_session));
    }
  }));
}

void OpencodeProvider::StartTurn(const TurnRequest& request, Done done) {
  if (Status ready = ReadyForTurn(turn_running_); !ready.ok())
    return Later(std::move(done), std::move(ready));
  turn_running_ = true;
  prompt_seen_ = abort_sent_ = aborted_ = false;
  prompt_message_id_.clear();
  error_.reset();
  json::object body{{"parts", json::array{json::object{{"type", "text"}, {"text", request.text}}}},
                    {"agent", options_.mode}};
  if (options_.model) {
    const std::size_t slash = options_.model->find('/');
    if (slash != std::string::npos)
      body["model"] = json::object{{"providerID", options_.model->substr(0, slash)},
                                   {"modelID", options_.model->substr(slash + 1)}};
  }
  server_->Request(
      "POST", Target("/session/" + session_id_ + "/prompt_async"), json::serialize(body),
      WhileAlive([this, done = std::move(done)](const Result<net::HttpReply>& r) {
        if (!Ok(r)) {
          if (turn_running_ && !prompt_seen_) {
            turn_running_ = false;
            StopWatchdog();
          }
          return done(Error(r.ok() ? ErrorCode::kInvalidArgument : ErrorCode::kUnavailable,
                            "opencode refused the prompt: " + Why(r)));
        }
        done(Status::Ok());
      }));
  ArmWatchdog();
}

void OpencodeProvider::OnInterruptTimeout() {
  if (!turn_running_) return;
  turn::ProviderTurnResult result;
  result.outcome = turn::TurnOutcome::kCanceled;
  result.message = "opencode did not stop the turn within " +
                   std::to_string(interrupt_timeout_.count()) + " ms; ended it";
  EndTurn(std::move(result));
}

void OpencodeProvider::SendAbort() {
  abort_sent_ = true;
  server_->Request("POST", Target("/session/" + session_id_ + "/abort"), "",
                   [](const Result<net::HttpReply>&) {});
  for (auto& [id, p] : permissions_.TakeAll())  // opencode rejects them with the turn
    Publish(turn::ProviderPermissionResolved{id, PermissionDecision::kDeny, std::nullopt,
                                             "cancelled with the turn"});
}

void OpencodeProvider::EndTurn(turn::ProviderTurnResult result) {
  for (auto& [id, part] : parts_) {
    if (!part.started || part.ended) continue;
    if (part.kind == "text") Publish(turn::ProviderMessageStop{MessageId(id), std::nullopt});
    if (part.kind == "tool")
      Publish(turn::ProviderToolEnd{ToolCallId(id), ToolCallStatus::kCanceled, std::nullopt,
                                    std::nullopt});
  }
  parts_.clear();
  permissions_.Clear();
  turn_running_ = prompt_seen_ = false;
  StopWatchdog();
  Publish(std::move(result));
  ResolveInterruptWaiters();
}

void OpencodeProvider::OnStalled() {
  SendAbort();
  turn::ProviderTurnResult result;
  result.outcome = turn::TurnOutcome::kFailed;
  result.error_code = "provider_stalled";
  result.message =
      "opencode sent no event for " + std::to_string(stall_timeout_.count()) + " ms during a turn";
  EndTurn(std::move(result));
}

void OpencodeProvider::OnEvent(const std::string& type, const json::object& p) {
  if (closing_) return;
  if (type == "message.updated") {
    const json::object* info = Obj(p, "info");
    if (info == nullptr) return;
    const std::string id = Str(*info, "id");
    if (Str(*info, "role") == "user") {
      if (id <= last_user_message_) return;
      last_user_message_ = id;
      if (turn_running_ && !prompt_seen_) {
        prompt_seen_ = true;
        prompt_message_id_ = id;
        Publish(turn::ProviderTurnBegan{});
      }
    } else if (const json::object* error = Obj(*info, "error");
               error && turn_running_ && prompt_seen_ && id > prompt_message_id_) {
      if (Str(*error, "name") == "MessageAbortedError") {
        aborted_ = true;
      } else if (!error_) {
        error_ = ErrorText(*error);
      }
    }
  } else if (type == "message.part.updated") {
    if (const json::object* part = Obj(p, "part")) OnPart(*part);
  } else if (type == "message.part.delta") {
    OnDelta(p);
  } else if (type == "permission.asked") {
    OnPermission(p);
  } else if (type == "permission.replied") {
    const RequestId id(Str(p, "requestID"));
    if (permissions_.Erase(id))
      Publish(turn::ProviderPermissionResolved{
          id, Str(p, "reply") == "reject" ? PermissionDecision::kDeny : PermissionDecision::kAllow,
          std::nullopt, "answered in opencode"});
  } else if (type == "session.error") {
    const json::object* error = Obj(p, "error");
    const std::string message = error ? ErrorText(*error) : "unknown error";
    if (error && Str(*error, "name") == "MessageAbortedError") {
      aborted_ = true;
    } else if (turn_running_) {
      if (!error_) error_ = message;
    } else {
      Publish(turn::ProviderError{"opencode_session_error", message, false});
    }
  } else if (type == "session.idle" || type == "session.status") {
    const json::object* status = Obj(p, "status");
    const std::string state = type == "session.idle" ? "idle" : status ? Str(*status, "type") : "";
    if (state == "retry") Publish(turn::ProviderUnknown{"opencode.session.status", p});
    if (state != "idle" || !turn_running_ || !(prompt_seen_ || abort_sent_)) return ArmWatchdog();
    turn::ProviderTurnResult result;
    if (aborted_ || abort_sent_) {
      result.outcome = turn::TurnOutcome::kCanceled;
      result.message = "interrupted";
    } else if (error_) {
      result.outcome = turn::TurnOutcome::kFailed;
      result.error_code = "opencode_turn_failed";
      result.message = *error_;
    }
    return EndTurn(std::move(result));
  }
  ArmWatchdog();
}

void OpencodeProvider::OnPart(const json::object& part) {
  if (!turn_running_ || !prompt_seen_) return;  // repeats of finished turns
  const std::string message = Str(part, "messageID");
  const std::string type = Str(part, "type");
  const std::string id = Str(part, "id");
  if (message < prompt_message_id_ || id.empty()) return;
  if (message == prompt_message_id_) {
    if (type == "text" && !wire::Bool(part, "synthetic") && !parts_.count(id)) {
      parts_[id].kind = "echo";
      Publish(turn::ProviderUserEcho{MessageId(message), std::nullopt, Str(part, "text")});
    }
    return;
  }
  if (type == "text" || type == "reasoning") return OnTextPart(part, parts_[id]);
  if (type == "tool") return OnToolPart(part, parts_[Str(part, "callID")]);
  if (type == "step-finish") {
    const json::object* tokens = Obj(part, "tokens");
    if (tokens == nullptr) return;
    Usage usage;
    usage.input_tokens = Tokens(*tokens, "input");
    usage.output_tokens = Tokens(*tokens, "output");
    if (const json::object* cache = Obj(*tokens, "cache")) {
      usage.cache_read_tokens = Tokens(*cache, "read");
      usage.cache_write_tokens = Tokens(*cache, "write");
    }
    if (const json::value* cost = part.if_contains("cost"); cost && cost->is_number())
      usage.cost_usd = cost->to_number<double>();
    Publish(turn::ProviderUsage{usage});
  }
}

void OpencodeProvider::OnTextPart(const json::object& part, PartState& state) {
  const std::string id = Str(part, "id");
  const std::string text = Str(part, "text");
  if (!state.started) {
    state.started = true;
    state.kind = Str(part, "type");
    if (state.kind == "text")
      Publish(turn::ProviderMessageStart{MessageId(id), std::nullopt, std::nullopt});
  }
  const json::object* time = Obj(part, "time");
  if (state.ended || time == nullptr || !time->contains("end")) return;
  state.ended = true;
  // The final text: what the deltas did not carry.
  if (text.size() > state.streamed) {
    std::string rest = text.substr(state.streamed);
    if (state.kind == "text")
      Publish(turn::ProviderTextDelta{MessageId(id), std::move(rest), std::nullopt, std::nullopt});
    else
      Publish(turn::ProviderReasoningDelta{MessageId(id), std::move(rest), std::nullopt});
  }
  state.streamed = text.size();
  if (state.kind == "text")
    Publish(turn::ProviderMessageStop{MessageId(id), std::string("end_turn")});
}

void OpencodeProvider::OnDelta(const json::object& p) {
  if (!turn_running_ || !prompt_seen_ || Str(p, "field") != "text") return;
  if (Str(p, "messageID") <= prompt_message_id_) return;
  const std::string id = Str(p, "partID");
  auto it = parts_.find(id);
  if (it == parts_.end() || it->second.ended || it->second.kind == "tool") return;
  std::string delta = Str(p, "delta");
  it->second.streamed += delta.size();
  if (it->second.kind == "text")
    Publish(turn::ProviderTextDelta{MessageId(id), std::move(delta), std::nullopt, std::nullopt});
  else if (it->second.kind == "reasoning")
    Publish(turn::ProviderReasoningDelta{MessageId(id), std::move(delta), std::nullopt});
}

void OpencodeProvider::OnToolPart(const json::object& part, PartState& state) {
  const std::string call = Str(part, "callID");
  const json::object* st = Obj(part, "state");
  if (call.empty() || st == nullptr || state.ended) return;
  const std::string status = Str(*st, "status");
  if (status == "pending") return;  // its input is still streaming
  if (!state.started) {
    state.started = true;
    state.kind = "tool";
    const json::value* input = st->if_contains("input");
    std::optional<std::string> title;
    if (std::string t = Str(*st, "title"); !t.empty()) title = t;
    if (const json::object* in = Obj(*st, "input"); in && !title) {
      if (std::string command = Str(*in, "command"); !command.empty()) title = command;
    }
    Publish(turn::ProviderToolStart{ToolCallId(call), Str(part, "tool"), title,
                                    input ? *input : json::value(json::object{}), std::nullopt,
                                    std::nullopt});
  }
  if (status == "running") {
    const json::object* meta = Obj(*st, "metadata");
    const std::string output = meta ? Str(*meta, "output") : std::string();
    if (output.size() > state.streamed) {
      Publish(turn::ProviderToolOutput{ToolCallId(call), output.substr(state.streamed)});
      state.streamed = output.size();
    }
    return;
  }
  if (status != "completed" && status != "error") return;
  state.ended = true;
  if (status == "completed")
    return Publish(turn::ProviderToolEnd{ToolCallId(call), ToolCallStatus::kCompleted,
                                         Str(*st, "output"), std::nullopt});
  Publish(turn::ProviderToolEnd{ToolCallId(call), ToolCallStatus::kFailed, std::nullopt,
                                Str(*st, "error")});
}

void OpencodeProvider::OnPermission(const json::object& p) {
  if (!turn_running_) return;
  PendingPermission info;
  info.request_id = RequestId(Str(p, "id"));
  if (const json::object* tool = Obj(p, "tool"))
    if (std::string call = Str(*tool, "callID"); !call.empty()) info.call_id = ToolCallId(call);
  info.tool_name = Str(p, "permission");
  const json::object* meta = Obj(p, "metadata");
  info.input = meta ? json::value(*meta) : json::value(p);
  turn::ProviderPermissionRequest req;
  req.request_id = info.request_id;
  req.call_id = info.call_id;
  req.tool_name = info.tool_name;
  req.input = info.input;
  req.title = meta ? Str(*meta, "command") : std::string();
  if (req.title.empty()) {
    req.title = info.tool_name;
    if (const json::value* patterns = p.if_contains("patterns"); patterns && patterns->is_array())
      for (const json::value& pattern : patterns->as_array())
        if (pattern.is_string()) req.title += " " + std::string(pattern.as_string());
  }
  req.options = {{"once", PermissionOptionKind::kAllowOnce, "Allow once"},
                 {"always", PermissionOptionKind::kAllowAlways, "Always allow"},
                 {"reject", PermissionOptionKind::kRejectOnce, "Reject"}};
  permissions_.Add(std::move(info));
  Publish(std::move(req));
  StopWatchdog();
}

void OpencodeProvider::OnServerExit(const std::string& message) {
  exited_ = true;
  connected_ = false;
  StopWatchdog();
  turn_running_ = prompt_seen_ = false;
  parts_.clear();
  permissions_.Clear();
  if (!closing_) Publish(turn::ProviderExited{message});
  ResolveInterruptWaiters();
}

Result<std::vector<turn::ProviderEvent>> OpencodeProvider::StreamHistory() {
  return Error(ErrorCode::kNotFound, "opencode history is not read yet");
}

RuntimeInfo OpencodeProvider::GetRuntimeInfo() const {
  return RuntimeInfo{"opencode",
                     session_id_,
                     options_.model.value_or(""),
                     options_.mode,
                     version_,
                     server_ && !exited_ ? server_->pid() : 0,
                     connected_ && !exited_};
}

std::vector<ModeInfo> OpencodeProvider::AvailableModes() const {
  return {{"build", "Build: edits and commands, as configured"},
          {"plan", "Plan: read-only analysis"}};
}

void OpencodeProvider::SetMode(const std::string& mode, Done done) {
  if (mode != "build" && mode != "plan")
    return Later(std::move(done), Error(ErrorCode::kInvalidArgument, "unknown mode " + mode));
  if (mode != options_.mode) Publish(turn::ProviderModeChanged{mode});
  options_.mode = mode;  // sent with the next prompt
  Later(std::move(done), Status::Ok());
}

void OpencodeProvider::SetModel(const std::string& model, Done done) {
  if (model.find('/') == std::string::npos)
    return Later(std::move(done), Error(ErrorCode::kInvalidArgument,
                                        "an opencode model is providerID/modelID, not " + model));
  options_.model = model;  // sent with the next prompt
  Publish(turn::ProviderModelChanged{model});
  Later(std::move(done), Status::Ok());
}

void OpencodeProvider::RespondToPermission(const RequestId& request, const PermissionReply& reply,
                                           Done done) {
  if (!permissions_.Erase(request)) return Later(std::move(done), NotPending(request));
  json::object body{{"reply", reply.decision == PermissionDecision::kAllow ? "once" : "reject"}};
  if (reply.message) body["message"] = *reply.message;
  server_->Request(
      "POST", Target("/permission/" + request.str() + "/reply"), json::serialize(body),
      WhileAlive([done = std::move(done)](const Result<net::HttpReply>& r) {
        done(Ok(r) ? Status::Ok() : Error(ErrorCode::kUnavailable, "permission reply: " + Why(r)));
      }));
  ArmWatchdog();
}

std::optional<PersistenceHandle> OpencodeProvider::DescribePersistence() const {
  if (session_id_.empty()) return std::nullopt;
  return PersistenceHandle{"opencode", session_id_, options_.cwd};
}

void OpencodeProvider::Close(Done done) {
  CloseSubscribers();
  const bool first = !closing_;
  closing_ = true;
  connected_ = false;
  if (!server_ || released_ || !first) return Later(std::move(done), Status::Ok());
  if (turn_running_ && !exited_) SendAbort();  // the shared server goes on without this session
  if (!session_id_.empty()) server_->Unwatch(session_id_);
  released_ = true;
  server_->Release(WhileAlive(
      [this, done = std::move(done)]() mutable { Later(std::move(done), Status::Ok()); }));
}

std::string OpencodeProvider::StderrTail() const { return server_ ? server_->StderrTail() : ""; }

}  // namespace agentstream::providers::opencode
