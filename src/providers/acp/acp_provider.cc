#include "providers/acp/acp_provider.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "providers/wire_fields.h"
#include "system/random_id.h"

namespace agentstream::providers::acp {

namespace json = boost::json;
using jsonrpc::ErrorLine;
using jsonrpc::kInternalError;
using jsonrpc::kInvalidParams;
using jsonrpc::kMethodNotFound;
using jsonrpc::kResourceNotFound;
using jsonrpc::NotificationLine;
using jsonrpc::ParseRpc;
using jsonrpc::RequestLine;
using jsonrpc::ResultLine;
using jsonrpc::RpcMessage;

namespace {

using wire::Int;
using wire::Str;

PermissionOptionKind KindOf(const std::string& kind) {
  if (kind == "allow_always") return PermissionOptionKind::kAllowAlways;
  if (kind == "reject_once") return PermissionOptionKind::kRejectOnce;
  if (kind == "reject_always") return PermissionOptionKind::kRejectAlways;
  return PermissionOptionKind::kAllowOnce;
}

int RpcCode(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kInvalidArgument:
      return kInvalidParams;
    case ErrorCode::kNotFound:
      return kResourceNotFound;
    default:
      return kInternalError;
  }
}

}  // namespace

AcpProvider::AcpProvider(process::EventLoop& loop, AcpOptions options)
    : ChildProcessProvider(
          loop, ChildLifecycle::Of(
                    options.command.name,
                    options.command.name + " did not finish the ACP handshake in time", options)),
      options_(std::move(options)),
      mapper_("acp" + system::RandomHex(8)) {
  session_id_ = options_.session_id;
}

AcpProvider::~AcpProvider() {
  Shutdown();
  terminals_.reset();  // before the agent: its terminals are its children's
}

void AcpProvider::Call(std::string_view method, json::value params, Reply reply) {
  auto fail = [this, &reply](std::string message) {
    Post([reply = std::move(reply), message = std::move(message)] {
      reply(Error(ErrorCode::kUnavailable, message));
    });
  };
  if (!child_ || exited_) return fail(name_ + " is not running");
  if (calls_.size() >= options_.max_pending_requests)
    return fail("too many requests in flight (" + std::to_string(calls_.size()) + ")");
  const std::int64_t id = calls_.TakeId();
  if (Status s = child_->WriteLine(RequestLine(id, method, std::move(params))); !s.ok())
    return fail(s.message());
  calls_.Add(id, std::move(reply));
}

void AcpProvider::Answer(const jsonrpc::RpcId& id, Result<json::value> result) {
  if (agent_requests_ > 0) --agent_requests_;
  if (!child_ || exited_) return;
  const std::string line = result.ok()
                               ? ResultLine(id, std::move(result).value())
                               : ErrorLine(id, RpcCode(result.status()), result.status().message());
  (void)child_->WriteLine(line);
}

Result<process::SpawnOptions> AcpProvider::Command() {
  if (options_.command.argv.empty()) return Error(ErrorCode::kInvalidArgument, "no agent command");
  process::SpawnOptions spawn;
  spawn.argv = options_.command.argv;
  spawn.env = EnvOrDaemons(options_.command.env);
  spawn.cwd = options_.cwd;
  spawn.max_line_bytes = options_.max_line_bytes;
  return spawn;
}

void AcpProvider::Handshake() {
  terminals_ = std::make_unique<AcpTerminals>(loop_, options_.cwd, options_.terminal_limits);
  json::object caps{{"fs", json::object{{"readTextFile", true}, {"writeTextFile", true}}},
                    {"terminal", options_.client_terminal}};
  json::object init{{"protocolVersion", 1},
                    {"clientCapabilities", std::move(caps)},
                    {"clientInfo", json::object{{"name", "agentstream"}, {"version", "1"}}}};
  Call("initialize", std::move(init),
       [this](Result<json::value> r) { OnInitialized(std::move(r)); });
}

void AcpProvider::OnInitialized(Result<json::value> r) {
  if (!r.ok())
    return FinishHandshake(
        Error(ErrorCode::kUnavailable, "initialize failed: " + r.status().message()));
  init_result_ = *r;
  if (init_result_.is_object())
    if (const json::value* info = init_result_.as_object().if_contains("agentInfo");
        info && info->is_object()) {
      version_ = Str(info->as_object(), "version");
      agent_name_ = Str(info->as_object(), "name");
    }
  json::object params{{"cwd", options_.cwd}, {"mcpServers", json::array{}}};
  const bool load = !options_.session_id.empty();
  if (load) params["sessionId"] = options_.session_id;
  loading_ = load;
  Call(load ? "session/load" : "session/new", std::move(params),
       [this, load](Result<json::value> s) { OnSession(load, std::move(s)); });
}

void AcpProvider::OnSession(bool load, Result<json::value> s) {
  loading_ = false;
  if (load) {
    for (turn::ProviderEvent& e : mapper_.CloseMessage(std::nullopt))
      history_.push_back(std::move(e));
    for (turn::ProviderEvent& e : mapper_.CloseTools(ToolCallStatus::kCompleted))
      history_.push_back(std::move(e));
  }
  if (!s.ok())
    return FinishHandshake(Error(
        ErrorCode::kUnavailable,
        std::string(load ? "session/load" : "session/new") + " failed: " + s.status().message()));
  OnSessionReady(*s);
  if (session_id_.empty())
    return FinishHandshake(Error(ErrorCode::kUnavailable, "session/new returned no sessionId"));
  connected_ = true;
  if (options_.mode && *options_.mode != mapper_.mode()) SetMode(*options_.mode, nullptr);
  FinishHandshake(Status::Ok());
}

void AcpProvider::OnSessionReady(const json::value& result) {
  if (!result.is_object()) return;
  const json::object& o = result.as_object();
  if (std::string id = Str(o, "sessionId"); !id.empty()) session_id_ = id;
  if (const json::value* modes = o.if_contains("modes"); modes && modes->is_object()) {
    mapper_.set_mode(Str(modes->as_object(), "currentModeId"));
    if (const json::value* list = modes->as_object().if_contains("availableModes");
        list && list->is_array())
      for (const json::value& m : list->as_array())
        if (m.is_object()) modes_.push_back({Str(m.as_object(), "id"), Str(m.as_object(), "name")});
  }
  if (const json::value* models = o.if_contains("models"); models && models->is_object()) {
    model_ = Str(models->as_object(), "currentModelId");
    if (const json::value* list = models->as_object().if_contains("availableModels");
        list && list->is_array())
      for (const json::value& m : list->as_array())
        if (m.is_object())
          models_.push_back({Str(m.as_object(), "modelId"), Str(m.as_object(), "name")});
  }
}

void AcpProvider::StartTurn(const TurnRequest& request, Done done) {
  if (Status ready = ReadyForTurn(turn_running_); !ready.ok())
    return Later(std::move(done), std::move(ready));
  if (calls_.size() >= options_.max_pending_requests)
    return Later(std::move(done), Error(ErrorCode::kResourceExhausted, "too many requests"));
  json::array prompt{json::object{{"type", "text"}, {"text", request.text}}};
  turn_running_ = true;
  process::Millis hold{0};
  if (last_failed_prompt_) {
    hold = options_.command.settle_after_failed_turn -
           std::chrono::duration_cast<process::Millis>(loop_.timers().Now() - *last_failed_prompt_);
  }
  if (hold.count() > 0) {
    held_prompt_ = loop_.timers().After(hold, [this, prompt = std::move(prompt)]() mutable {
      held_prompt_.reset();
      SendPrompt(std::move(prompt));
    });
  } else {
    SendPrompt(std::move(prompt));
  }
  Publish(turn::ProviderTurnBegan{});
  ArmWatchdog();
  Later(std::move(done), Status::Ok());
}

void AcpProvider::SendPrompt(json::array prompt) {
  Call("session/prompt", json::object{{"sessionId", session_id_}, {"prompt", std::move(prompt)}},
       [this](Result<json::value> r) { OnPromptDone(std::move(r)); });
}

void AcpProvider::OnPromptDone(Result<json::value> result) {
  if (!turn_running_) return;  // the turn already ended (the agent exited)
  const bool interrupted = interrupting();
  turn::ProviderTurnResult end;
  if (!result.ok()) {
    if (!interrupted) last_failed_prompt_ = loop_.timers().Now();
    end.outcome = interrupted ? turn::TurnOutcome::kCanceled : turn::TurnOutcome::kFailed;
    end.error_code = "acp_prompt_failed";
    end.message = result.status().message();
    return EndTurn(std::move(end));
  }
  const json::object* o = result->is_object() ? &result->as_object() : nullptr;
  const std::string stop = o ? Str(*o, "stopReason") : std::string();
  if (!stop.empty()) end.stop_reason = stop;
  end.outcome = stop == "cancelled" ? turn::TurnOutcome::kCanceled : turn::TurnOutcome::kCompleted;
  if (stop == "cancelled") end.message = "cancelled";
  if (o)
    if (const json::value* u = o->if_contains("usage"); u && u->is_object()) {
      Usage usage;
      usage.input_tokens = Int(u->as_object(), "inputTokens");
      usage.output_tokens = Int(u->as_object(), "outputTokens");
      usage.cache_read_tokens = Int(u->as_object(), "cachedReadTokens");
      usage.cache_write_tokens = Int(u->as_object(), "cachedWriteTokens");
      Publish(turn::ProviderUsage{usage});
    }
  EndTurn(std::move(end));
}

void AcpProvider::EndTurn(turn::ProviderTurnResult result) {
  const bool ok = result.outcome == turn::TurnOutcome::kCompleted;
  PublishAll(mapper_.CloseMessage(result.stop_reason));
  PublishAll(mapper_.CloseTools(ok ? ToolCallStatus::kCompleted : ToolCallStatus::kCanceled));
  // Before publishing: a subscriber may start the next turn from inside the result's delivery.
  turn_running_ = false;
  last_turn_end_ = loop_.timers().Now();
  permissions_.Clear();
  StopWatchdog();
  Publish(std::move(result));
  ResolveInterruptWaiters();
}

process::Millis AcpProvider::CloseDelay() const {
  if (!last_turn_end_) return process::Millis{0};
  const auto since =
      std::chrono::duration_cast<process::Millis>(loop_.timers().Now() - *last_turn_end_);
  return std::max(process::Millis{0}, options_.command.settle_after_turn - since);
}

void AcpProvider::SendCancel() {
  if (held_prompt_) {
    // The agent never had the prompt: the turn ends canceled here (not from inside Interrupt).
    held_prompt_ = loop_.timers().After(process::Millis{0}, [this] {
      held_prompt_.reset();
      turn::ProviderTurnResult end;
      end.outcome = turn::TurnOutcome::kCanceled;
      end.message = "cancelled";
      EndTurn(std::move(end));
    });
    return;
  }
  (void)child_->WriteLine(
      NotificationLine("session/cancel", json::object{{"sessionId", session_id_}}));
  CancelPermissions();
}

void AcpProvider::CancelPermissions() {
  for (auto& [id, p] : permissions_.TakeAll()) {
    Answer(p.wire.rpc_id,
           json::value(json::object{{"outcome", json::object{{"outcome", "cancelled"}}}}));
    Publish(turn::ProviderPermissionResolved{id, PermissionDecision::kDeny, std::nullopt,
                                             "cancelled with the turn"});
  }
}

void AcpProvider::OnFrame(const process::Frame& frame) {
  if (frame.kind == process::Frame::Kind::kOversize) {
    Publish(turn::ProviderError{"protocol_oversize",
                                "dropped a " + std::to_string(frame.dropped) + "-byte line from " +
                                    name_ + " (limit " + std::to_string(options_.max_line_bytes) +
                                    ")",
                                false});
  } else {
    Result<RpcMessage> m = ParseRpc(frame.text);
    if (m.ok()) {
      OnMessage(std::move(m).value());
    } else if (!frame.text.empty()) {
      Publish(ProtocolGarbage(m.status(), frame.text));
    }
  }
  ArmWatchdog();
}

void AcpProvider::OnMessage(RpcMessage m) {
  switch (m.kind) {
    case RpcMessage::Kind::kResponse:
      return calls_.Resolve(std::move(m));
    case RpcMessage::Kind::kNotification:
      if (m.method == "session/update") {
        if (loading_) {
          for (turn::ProviderEvent& e : mapper_.Map(m.params)) history_.push_back(std::move(e));
          return;
        }
        return PublishAll(mapper_.Map(m.params));
      }
      return Publish(turn::ProviderUnknown{"acp." + m.method, m.params});
    case RpcMessage::Kind::kRequest:
      return OnAgentRequest(m);
  }
}

void AcpProvider::OnAgentRequest(const RpcMessage& m) {
  if (agent_requests_ >= options_.max_agent_requests) {
    if (child_) (void)child_->WriteLine(ErrorLine(m.id, kInternalError, "too many requests"));
    return;
  }
  ++agent_requests_;
  if (m.method == "session/request_permission") return OnPermissionRequest(m);
  if (m.method == "fs/read_text_file" || m.method == "fs/write_text_file") return OnFsRequest(m);
  if (m.method.rfind("terminal/", 0) == 0 && options_.client_terminal && terminals_) {
    terminals_->Handle(m.method, m.params, WhileAlive([this, id = m.id](Result<json::value> r) {
                         Answer(id, std::move(r));
                       }));
    return;
  }
  --agent_requests_;
  if (child_) (void)child_->WriteLine(ErrorLine(m.id, kMethodNotFound, "unsupported: " + m.method));
}

void AcpProvider::OnPermissionRequest(const RpcMessage& m) {
  const json::object empty;
  const json::object& p = m.params.is_object() ? m.params.as_object() : empty;
  PendingPermission info;
  PermissionWire wire{m.id, {}};
  const std::string rid =
      "acp_perm_" + std::to_string(next_permission_++) + "_" + system::RandomHex(6);
  info.request_id = RequestId(rid);
  turn::ProviderPermissionRequest req;
  req.request_id = info.request_id;
  req.title = "Permission requested";
  if (const json::value* tc = p.if_contains("toolCall"); tc && tc->is_object()) {
    const json::object& call = tc->as_object();
    PublishAll(mapper_.AnnounceToolCall(call));
    if (std::string id = Str(call, "toolCallId"); !id.empty()) {
      info.call_id = ToolCallId(id);
      req.call_id = info.call_id;
    }
    if (std::string title = Str(call, "title"); !title.empty()) req.title = title;
    info.tool_name = Str(call, "kind");
    if (info.tool_name.empty()) info.tool_name = mapper_.KindOf(Str(call, "toolCallId"));
    if (info.tool_name.empty()) info.tool_name = "other";
    req.tool_name = info.tool_name;
    if (const json::value* raw = call.if_contains("rawInput")) info.input = *raw;
    req.input = info.input;
  }
  if (const json::value* opts = p.if_contains("options"); opts && opts->is_array())
    for (const json::value& o : opts->as_array()) {
      if (!o.is_object()) continue;
      AcpOption opt{Str(o.as_object(), "optionId"), Str(o.as_object(), "kind"),
                    Str(o.as_object(), "name")};
      req.options.push_back(PermissionOption{opt.id, KindOf(opt.kind), opt.name});
      wire.options.push_back(std::move(opt));
    }
  if (interrupting() || !turn_running_) {
    // A request racing a cancel (or outside any turn) is answered "cancelled", as ACP requires.
    Answer(m.id, json::value(json::object{{"outcome", json::object{{"outcome", "cancelled"}}}}));
    return;
  }
  permissions_.Add(std::move(info), std::move(wire));
  Publish(std::move(req));
  StopWatchdog();
}

void AcpProvider::OnFsRequest(const RpcMessage& m) {
  const json::object empty;
  const json::object& p = m.params.is_object() ? m.params.as_object() : empty;
  Result<std::string> path = ConfinePath(options_.cwd, Str(p, "path"));
  if (!path.ok()) return Answer(m.id, path.status());
  if (m.method == "fs/write_text_file") {
    const json::value* content = p.if_contains("content");
    if (!content || !content->is_string())
      return Answer(m.id, Error(ErrorCode::kInvalidArgument, "content must be a string"));
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(*path).parent_path(), ec);
    std::ofstream out(*path, std::ios::binary | std::ios::trunc);
    out << std::string_view(content->as_string());
    out.close();
    if (!out) return Answer(m.id, Error(ErrorCode::kInternal, "cannot write " + *path));
    return Answer(m.id, json::value(nullptr));
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(*path, ec);
  if (ec) return Answer(m.id, Error(ErrorCode::kNotFound, "cannot read " + *path));
  if (size > options_.max_file_bytes)
    return Answer(m.id, Error(ErrorCode::kInvalidArgument,
                              *path + " is larger than " + std::to_string(options_.max_file_bytes) +
                                  " bytes"));
  std::ifstream in(*path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  const std::int64_t line = Int(p, "line"), limit = Int(p, "limit");
  if (line > 1 || limit > 0) {
    std::istringstream lines(text);
    std::string out, l;
    std::int64_t n = 0, kept = 0;
    while (std::getline(lines, l)) {
      if (++n < line) continue;
      if (limit > 0 && kept >= limit) break;
      out += l + "\n";
      ++kept;
    }
    text = std::move(out);
  }
  Answer(m.id, json::value(json::object{{"content", text}}));
}

void AcpProvider::DropTurn() {
  held_prompt_.reset();
  if (turn_running_) PublishAll(mapper_.CloseMessage(std::nullopt));
  permissions_.Clear();
}

void AcpProvider::FailRequests(const process::ExitInfo& exit) {
  calls_.FailAll(Error(ErrorCode::kUnavailable, name_ + " exited: " + exit.Describe()));
}

Result<std::vector<turn::ProviderEvent>> AcpProvider::StreamHistory() { return history_; }

RuntimeInfo AcpProvider::GetRuntimeInfo() const {
  return RuntimeInfo{name_, session_id_, model_, mapper_.mode(), version_, pid(), connected_};
}

void AcpProvider::SetMode(const std::string& mode, Done done) {
  if (!connected_) return Later(std::move(done), Error(ErrorCode::kUnavailable, "not connected"));
  Call("session/set_mode", json::object{{"sessionId", session_id_}, {"modeId", mode}},
       [this, mode, done = std::move(done)](const Result<json::value>& r) {
         if (r.ok() && mapper_.mode() != mode) {
           mapper_.set_mode(mode);
           Publish(turn::ProviderModeChanged{mode});
         }
         if (done)
           done(r.ok() ? Status::Ok() : Error(ErrorCode::kInvalidArgument, r.status().message()));
       });
}

void AcpProvider::SetModel(const std::string& model, Done done) {
  if (!connected_) return Later(std::move(done), Error(ErrorCode::kUnavailable, "not connected"));
  // session/set_model is an unstable ACP method: agents without it answer -32601.
  Call("session/set_model", json::object{{"sessionId", session_id_}, {"modelId", model}},
       [this, model, done = std::move(done)](const Result<json::value>& r) {
         if (r.ok()) {
           model_ = model;
           Publish(turn::ProviderModelChanged{model});
         }
         if (done)
           done(r.ok() ? Status::Ok() : Error(ErrorCode::kInvalidArgument, r.status().message()));
       });
}

std::vector<SlashCommand> AcpProvider::ListCommands() const {
  std::vector<SlashCommand> out;
  for (const auto& c : mapper_.commands()) out.push_back({c.name, c.description});
  return out;
}

void AcpProvider::RespondToPermission(const RequestId& request, const PermissionReply& reply,
                                      Done done) {
  const std::optional<PermissionTable<PermissionWire>::Entry> p = permissions_.Take(request);
  if (!p) return Later(std::move(done), NotPending(request));
  const std::optional<std::string> option =
      ChooseOption(p->wire.options, reply.decision == PermissionDecision::kAllow);
  json::object outcome = option ? json::object{{"outcome", "selected"}, {"optionId", *option}}
                                : json::object{{"outcome", "cancelled"}};
  const jsonrpc::RpcId& id = p->wire.rpc_id;
  const std::optional<ToolCallId>& call = p->info.call_id;
  if (reply.decision != PermissionDecision::kAllow && call)
    PublishAll(mapper_.EndTool(call->str(), ToolCallStatus::kFailed,
                               reply.message.value_or("denied by the user")));
  const bool running = child_ && !exited_;
  Answer(id, json::value(json::object{{"outcome", std::move(outcome)}}));
  ArmWatchdog();
  Later(std::move(done), running ? Status::Ok() : Error(ErrorCode::kUnavailable, "not running"));
}

std::optional<PersistenceHandle> AcpProvider::DescribePersistence() const {
  if (session_id_.empty()) return std::nullopt;
  return PersistenceHandle{name_, session_id_, options_.cwd};
}

}  // namespace agentstream::providers::acp
