#include "acp_server/connection.h"

#include <fmt/core.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <thread>

#include "acp_server/acp_shapes.h"
#include "acp_server/attached_session.h"
#include "api/api_json.h"
#include "process/child_process.h"

namespace agentstream::acp_server {

namespace asio = boost::asio;
namespace json = boost::json;
using client::DaemonApi;
using jsonrpc::RpcMessage;

namespace {

// What `session/new` knows of a session's settings before its log says more: the snapshot's
// values, else the command's defaults, which are offered too.
SessionSettings SettingsFor(const api::AgentSnapshot& snapshot, const AcpServerOptions& options) {
  SessionSettings s;
  if (options.model) s.SetModel(*options.model);
  if (options.mode) s.SetMode(*options.mode);
  if (!snapshot.model.empty()) s.SetModel(snapshot.model);
  if (!snapshot.mode.empty()) s.SetMode(snapshot.mode);
  s.thinking = snapshot.thinking;
  if (snapshot.capabilities) s.Offer(*snapshot.capabilities);
  return s;
}

json::object SessionResult(const SessionSettings& s) {
  return {{"modes", ModesJson(s)}, {"configOptions", ConfigOptionsJson(s)}};
}

}  // namespace

Connection::Connection(asio::io_context& io, const AcpServerOptions& options)
    : io_(io),
      options_(options),
      channel_(io, options.in_fd, options.out_fd, options.limits),
      drain_timer_(io),
      workers_(options.worker_threads) {}

Connection::~Connection() {
  *stopping_ = true;
  workers_.join();
}

int Connection::Run() {
  channel_.Start([this](const process::Frame& frame) { OnLine(frame); },
                 [this](const Status& why) { OnClosed(why); });
  io_.run();
  return exit_code_;
}

void Connection::Send(std::string line) { channel_.Write(std::move(line)); }

void Connection::CallDaemon(DaemonCall call, DaemonDone done, bool retry) {
  asio::post(workers_, [this, call = std::move(call), done = std::move(done), retry,
                        stopping = stopping_]() mutable {
    const auto deadline = std::chrono::steady_clock::now() + options_.retry_for;
    std::chrono::milliseconds backoff{200};
    Result<json::value> result = Error(ErrorCode::kInternal, "not called");
    for (;;) {
      auto http = client::Transport::Create(options_.http);
      if (!http.ok()) {
        result = http.status();
        break;
      }
      DaemonApi api(**http);
      result = call(api);
      if (result.ok() || result.status().code() != ErrorCode::kUnavailable || !retry || *stopping ||
          std::chrono::steady_clock::now() + backoff > deadline)
        break;
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    }
    if (*stopping) return;
    asio::post(io_, [done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  });
}

std::int64_t Connection::AskPermission(const std::shared_ptr<AttachedSession>& session,
                                       const RequestId& request, json::object params) {
  const std::int64_t id = next_ask_id_++;
  while (asks_.size() >= 4096) asks_.erase(asks_.begin());  // answers that never came
  asks_[id] = Ask{session, request};
  Send(jsonrpc::RequestLine(id, "session/request_permission", std::move(params)));
  return id;
}

void Connection::WithdrawAsk(std::int64_t id) {
  auto it = asks_.find(id);
  if (it == asks_.end() || it->second.withdrawn) return;
  it->second.withdrawn = true;
  Send(jsonrpc::NotificationLine("$/cancel_request", json::object{{"requestId", id}}));
}

void Connection::OnLine(const process::Frame& frame) {
  jsonrpc::Inbound in = jsonrpc::ReadLine(frame);
  if (!in.error_line.empty()) return Send(std::move(in.error_line));
  if (!in.message) return;
  switch (in.message->kind) {
    case RpcMessage::Kind::kRequest:
      return OnRequest(*in.message);
    case RpcMessage::Kind::kNotification:
      return OnNotification(*in.message);
    case RpcMessage::Kind::kResponse:
      return OnResponse(*in.message);
  }
}

void Connection::OnRequest(const RpcMessage& m) {
  const jsonrpc::RpcId& id = m.id;
  if (m.method == "initialize") {
    initialized_ = true;
    return Reply(id, InitializeResult(options_.version));
  }
  if (!initialized_) return ReplyError(id, jsonrpc::kInvalidRequest, "initialize first");
  if (m.method == "session/new") return NewSession(id, m.params);
  if (m.method == "session/load") return AttachSession(id, m.params, true);
  if (m.method == "session/resume") return AttachSession(id, m.params, false);
  if (m.method == "session/list") return ListSessions(id, m.params);
  if (m.method == "session/close") return CloseSession(id, m.params);
  if (m.method == "session/prompt") return Prompt(id, m.params);
  if (m.method == "session/set_mode") return SetValue(id, m.params, false);
  if (m.method == "session/set_config_option") return SetValue(id, m.params, true);
  ReplyError(id, jsonrpc::kMethodNotFound, "method not found: " + m.method);
}

void Connection::OnNotification(const RpcMessage& m) {
  const json::object* params = m.params.is_object() ? &m.params.as_object() : nullptr;
  if (m.method == "session/cancel" && params) {
    if (const json::value* sid = params->if_contains("sessionId"); sid && sid->is_string()) {
      auto it = sessions_.find(std::string(sid->as_string()));
      if (it != sessions_.end()) it->second->Cancel();
    }
  } else if (m.method == "$/cancel_request" && params) {  // the client gives up on a prompt
    const json::value* rid = params->if_contains("requestId");
    if (auto id = rid ? jsonrpc::RpcId::FromValue(*rid) : std::nullopt) {
      for (auto& [sid, session] : sessions_)
        if (session->HasPrompt(*id)) session->Cancel();
    }
  }
  // Any other notification is ignored, as JSON-RPC wants.
}

void Connection::OnResponse(const RpcMessage& m) {
  const std::optional<std::int64_t> ask_id = m.id.int64();
  if (!ask_id) return;
  auto it = asks_.find(*ask_id);
  if (it == asks_.end()) return;
  Ask ask = std::move(it->second);
  asks_.erase(it);
  if (ask.withdrawn) return;  // resolved elsewhere first: the late answer changes nothing
  if (auto session = ask.session.lock()) session->OnPermissionAnswer(ask.request, m);
}

void Connection::NewSession(const jsonrpc::RpcId& id, const json::value& params) {
  Result<std::string> cwd = StringParam(params, "cwd");
  if (!cwd.ok()) return ReplyStatus(id, cwd.status());
  if (!cwd->starts_with("/"))
    return ReplyError(id, jsonrpc::kInvalidParams, "cwd must be an absolute path");
  api::AgentConfig config;
  config.provider = options_.provider;
  config.cwd = *cwd;
  config.model = options_.model;
  config.mode = options_.mode;
  config.client_request_id = client::NewClientId("acp");  // a retried create makes one agent
  const json::value body = api::AgentConfigToJson(config);
  CallDaemon([body](DaemonApi& api) { return api.Call("POST", "/v1/agents", &body); },
             [this, id](Result<json::value> reply) {
               Result<api::AgentSnapshot> snapshot =
                   reply.ok() ? api::AgentSnapshotFromJson(*reply)
                              : Result<api::AgentSnapshot>(reply.status());
               if (!snapshot.ok()) return ReplyStatus(id, snapshot.status());
               auto session = std::make_shared<AttachedSession>(
                   *this, *snapshot, SettingsFor(*snapshot, options_), std::nullopt);
               sessions_[snapshot->id.str()] = session;
               const std::string from =
                   snapshot->cursor.seq.value() > 0 ? FormatCursor(snapshot->cursor) : "-1";
               session->Start(from, api::AgentSnapshot{});
               json::object result = SessionResult(session->settings());
               result["sessionId"] = snapshot->id.str();
               Reply(id, std::move(result));
             },
             true);
}

void Connection::AttachSession(const jsonrpc::RpcId& id, const json::value& params, bool replay) {
  Result<std::string> sid = StringParam(params, "sessionId");
  if (!sid.ok()) return ReplyStatus(id, sid.status());
  const std::string target = DaemonApi::AgentPath(*sid);
  CallDaemon([target](DaemonApi& api) { return api.Call("GET", target); },
             [this, id, replay, sid = *sid](Result<json::value> reply) {
               Result<api::AgentSnapshot> snapshot =
                   reply.ok() ? api::AgentSnapshotFromJson(*reply)
                              : Result<api::AgentSnapshot>(reply.status());
               if (!snapshot.ok()) return ReplyStatus(id, snapshot.status());
               if (auto old = sessions_.find(sid); old != sessions_.end()) {
                 old->second->Detach(false);  // attached again: the new attachment replaces it
                 sessions_.erase(old);
               }
               // A load replays the log and answers when the replay is done; a resume answers
               // now and follows on from the snapshot's cursor.
               auto session = std::make_shared<AttachedSession>(
                   *this, *snapshot, SettingsFor(*snapshot, options_),
                   replay ? std::optional<jsonrpc::RpcId>(id) : std::nullopt);
               sessions_[sid] = session;
               const bool from_start = replay || snapshot->cursor.seq.value() == 0;
               // A load learns the pending permissions from its replay.
               session->Start(from_start ? "-1" : FormatCursor(snapshot->cursor),
                              replay ? api::AgentSnapshot{} : *snapshot);
               if (!replay) Reply(id, SessionResult(session->settings()));
             },
             false);
}

void Connection::ListSessions(const jsonrpc::RpcId& id, const json::value& params) {
  std::string cwd, cursor;
  if (params.is_object()) {
    const json::object& p = params.as_object();
    if (const json::value* v = p.if_contains("cwd"); v && v->is_string()) cwd = v->as_string();
    if (const json::value* v = p.if_contains("cursor"); v && v->is_string())
      cursor = v->as_string();
  }
  CallDaemon([](DaemonApi& api) { return api.Call("GET", "/v1/agents"); },
             [this, id, cwd, cursor](Result<json::value> reply) {
               if (!reply.ok()) return ReplyStatus(id, reply.status());
               std::vector<api::AgentSnapshot> agents;
               const json::value* list =
                   reply->is_object() ? reply->as_object().if_contains("agents") : nullptr;
               if (list && list->is_array()) {
                 for (const json::value& a : list->as_array())
                   if (auto snapshot = api::AgentSnapshotFromJson(a); snapshot.ok())
                     agents.push_back(std::move(snapshot).value());
               }
               Result<json::object> page = ListPage(std::move(agents), cwd, cursor);
               if (!page.ok()) return ReplyStatus(id, page.status());
               Reply(id, std::move(page).value());
             },
             false);
}

std::shared_ptr<AttachedSession> Connection::Find(const jsonrpc::RpcId& id,
                                                  const json::value& params) {
  Result<std::string> sid = StringParam(params, "sessionId");
  if (!sid.ok()) {
    ReplyStatus(id, sid.status());
    return nullptr;
  }
  auto it = sessions_.find(*sid);
  if (it == sessions_.end()) {
    ReplyError(id, jsonrpc::kResourceNotFound,
               "session " + *sid + " is not open here: session/load or session/resume it first");
    return nullptr;
  }
  return it->second;
}

void Connection::CloseSession(const jsonrpc::RpcId& id, const json::value& params) {
  std::shared_ptr<AttachedSession> session = Find(id, params);
  if (!session) return;
  session->Detach(true);  // its agent stays on the daemon, with its log
  sessions_.erase(session->id());
  Reply(id, json::object{});
}

void Connection::Prompt(const jsonrpc::RpcId& id, const json::value& params) {
  std::shared_ptr<AttachedSession> session = Find(id, params);
  if (!session) return;
  const json::value* prompt = params.as_object().if_contains("prompt");
  Result<Submission> submission = ReadPrompt(prompt ? *prompt : json::value());
  if (!submission.ok()) return ReplyStatus(id, submission.status());
  session->Prompt(id, std::move(submission).value());
}

void Connection::SetValue(const jsonrpc::RpcId& id, const json::value& params, bool config) {
  std::shared_ptr<AttachedSession> session = Find(id, params);
  if (!session) return;
  std::string what = "mode";
  Result<std::string> value = StringParam(params, config ? "value" : "modeId");
  if (config) {
    Result<std::string> option = StringParam(params, "configId");
    if (!option.ok()) return ReplyStatus(id, option.status());
    if (*option != "mode" && *option != "model" && *option != "thinking")
      return ReplyError(id, jsonrpc::kInvalidParams, "no config option " + *option);
    what = *option;
  }
  if (!value.ok()) return ReplyStatus(id, value.status());
  const std::string target = DaemonApi::AgentPath(session->id(), "/" + what);
  const json::value body = json::object{{what, *value}};
  CallDaemon([target, body](DaemonApi& api) { return api.Call("POST", target, &body); },
             [this, id, session, what, config, value = *value](const Result<json::value>& reply) {
               if (!reply.ok()) return ReplyStatus(id, reply.status());
               SessionSettings& s = session->settings();
               if (what == "model") {
                 s.SetModel(value);
               } else if (what == "thinking") {
                 s.thinking = value;
               } else {
                 s.SetMode(value);
               }
               Reply(id, config ? json::value(json::object{{"configOptions", ConfigOptionsJson(s)}})
                                : json::value(json::object{}));
             },
             false);
}

void Connection::Reply(const jsonrpc::RpcId& id, const json::value& result) {
  Send(jsonrpc::ResultLine(id, result));
}

void Connection::ReplyError(const jsonrpc::RpcId& id, int code, const std::string& message) {
  Send(jsonrpc::ErrorLine(id, code, message));
}

void Connection::ReplyStatus(const jsonrpc::RpcId& id, const Status& status) {
  ReplyError(id, RpcCodeFor(status),
             status.message().empty() ? status.ToString() : status.message());
}

void Connection::OnClosed(const Status& why) {
  if (!why.ok()) fmt::print(stderr, "agentstream acp: disconnecting: {}\n", why.message());
  Shutdown(why.ok() ? 0 : 1);
}

void Connection::Shutdown(int code) {
  exit_code_ = code;
  *stopping_ = true;
  for (auto& [id, session] : sessions_) session->Detach(false);  // their turns run on
  sessions_.clear();
  DrainThenStop(std::chrono::steady_clock::now() + std::chrono::seconds(2));
}

void Connection::DrainThenStop(std::chrono::steady_clock::time_point deadline) {
  // What is queued still goes out, until the deadline; then the loop ends.
  if (channel_.drained() || std::chrono::steady_clock::now() >= deadline) return io_.stop();
  drain_timer_.expires_after(std::chrono::milliseconds(10));
  drain_timer_.async_wait(
      [this, deadline](const boost::system::error_code&) { DrainThenStop(deadline); });
}

int RunAcpServer(const AcpServerOptions& options) {
  process::IgnoreBrokenPipes();
  asio::io_context io;
  Connection connection(io, options);
  return connection.Run();
}

}  // namespace agentstream::acp_server
