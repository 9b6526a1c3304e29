// `send` (with --wait) and `history`.
#include <fmt/core.h>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "api/api_json.h"
#include "cli/commands/command_util.h"
#include "cli/commands/commands.h"
#include "client/daemon_api.h"
#include "client/endpoint.h"
#include "client/event_follower.h"
#include "client/turn_wait.h"

namespace agentstream::cli {

namespace json = boost::json;

namespace {

bool ParseWhileRunning(const std::string& text, turn::WhileRunning* out) {
  for (auto mode :
       {turn::WhileRunning::kQueue, turn::WhileRunning::kInterrupt, turn::WhileRunning::kSteer}) {
    if (api::WhileRunningName(mode) == text) {
      *out = mode;
      return true;
    }
  }
  return false;
}

void PrintReply(const api::SendReply& reply, const std::string& client_id) {
  const std::string turn = reply.turn ? reply.turn->str() : "";
  switch (reply.outcome) {
    case turn::SubmissionOutcome::kAccepted:
      fmt::print("accepted: turn {} (cursor {})\n", turn, FormatCursor(reply.cursor));
      break;
    case turn::SubmissionOutcome::kQueued:
      fmt::print("queued: {}\n", client_id);
      break;
    case turn::SubmissionOutcome::kDuplicate:
      fmt::print("duplicate: {} already started turn {}\n", client_id, turn);
      break;
    case turn::SubmissionOutcome::kRejected:
    case turn::SubmissionOutcome::kCanceled:
      fmt::print("{}: {}\n", api::OutcomeName(reply.outcome), reply.message);
      break;
  }
}

}  // namespace

int Send(const ClientContext& context, const SendOptions& options) {
  api::SendRequest request;
  if (!ParseWhileRunning(options.while_running, &request.while_running)) {
    fmt::print(stderr, "agentstream: --while-running takes queue, interrupt or steer\n");
    return kExitUsage;
  }
  request.client_message_id = options.client_id.empty() ? NewClientMessageId() : options.client_id;
  request.text = options.text;
  const json::value body = api::SendRequestToJson(request);
  bool turn_ok = true;
  const int code = RunCall(context, [&](client::DaemonApi& api) -> Status {
    std::string from = "-1";
    if (options.wait) {  // read from the tail before the prompt, so no event of its turn is missed
      AS_ASSIGN_OR_RETURN(json::value agent,
                          api.Call("GET", client::DaemonApi::AgentPath(options.agent)));
      AS_ASSIGN_OR_RETURN(api::AgentSnapshot snapshot, api::AgentSnapshotFromJson(agent));
      if (snapshot.cursor.seq.value() > 0) from = FormatCursor(snapshot.cursor);
    }
    AS_ASSIGN_OR_RETURN(
        json::value reply_json,
        api.Call("POST", client::DaemonApi::AgentPath(options.agent, "/messages"), &body));
    AS_ASSIGN_OR_RETURN(api::SendReply reply, api::SendReplyFromJson(reply_json));
    const bool refused = reply.outcome == turn::SubmissionOutcome::kRejected ||
                         reply.outcome == turn::SubmissionOutcome::kCanceled;
    turn_ok = !refused;
    if (!options.wait || refused) {
      if (context.json) {
        PrintJson(reply_json);
      } else {
        PrintReply(reply, request.client_message_id);
      }
      return Status::Ok();
    }
    if (reply.outcome == turn::SubmissionOutcome::kDuplicate) from = "-1";  // it may be long done
    std::optional<std::string> turn;
    if (reply.turn) turn = reply.turn->str();
    auto on_retry = [](const Status& why, std::chrono::milliseconds delay) {
      fmt::print(stderr, "agentstream: {}; retrying in {} ms\n", why.message(), delay.count());
    };
    AS_ASSIGN_OR_RETURN(client::TurnEnd end,
                        client::WaitForTurn(api.http(), options.agent, from,
                                            request.client_message_id, turn, on_retry));
    turn_ok = end.outcome == "completed";
    if (context.json) {
      json::object out = reply_json.is_object() ? reply_json.get_object() : json::object();
      out["turnId"] = end.turn;
      out["turnOutcome"] = end.outcome;
      out["turnReason"] = end.reason;
      out["endCursor"] = FormatCursor(end.at);
      PrintJson(out);
    } else {
      PrintReply(reply, request.client_message_id);
      fmt::print("turn {} {}{}\n", end.turn, end.outcome,
                 end.reason.empty() ? "" : ": " + end.reason);
    }
    return Status::Ok();
  });
  return code == kExitOk && !turn_ok ? kExitError : code;
}

namespace {

std::string Str(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value && value->is_string() ? std::string(value->get_string()) : std::string();
}

// One history item as text (docs/timeline.md lists the item kinds and fields).
std::string ItemText(const json::object& item) {
  std::string kind = Str(item, "kind");
  if (kind == "user_message") return "> " + Str(item, "text");
  if (kind == "assistant_message") return Str(item, "text");
  if (kind == "reasoning") return "(thinking) " + Str(item, "text");
  if (kind == "tool_call") {
    std::string summary = Str(item, "title");
    if (const json::value* input = item.if_contains("input"); summary.empty() && input) {
      summary = input->is_object() && input->get_object().contains("command") &&
                        input->get_object().at("command").is_string()
                    ? std::string(input->get_object().at("command").get_string())
                    : json::serialize(*input);
    }
    std::string line = "tool " + Str(item, "name") + " (" + summary + "): " + Str(item, "state");
    if (!Str(item, "error").empty()) line += ": " + Str(item, "error");
    return line;
  }
  if (kind == "permission") {
    const std::string decision = Str(item, "decision");
    return "permission " + Str(item, "requestId") + ": " + Str(item, "title") + " [" +
           (decision.empty() ? "pending" : decision) + "]";
  }
  if (kind == "error") return "error " + Str(item, "code") + ": " + Str(item, "message");
  if (kind == "notice") return "notice: " + Str(item, "text");
  if (kind == "authorization")
    return "authorization " + Str(item, "requestId") + ": " + Str(item, "message");
  if (kind == "subagent") return "subagent " + Str(item, "child") + ": " + Str(item, "lastKind");
  if (kind == "usage") {
    auto number = [&](std::string_view key) {
      const json::value* v = item.if_contains(key);
      return v && v->is_number() ? v->to_number<double>() : 0.0;
    };
    std::string text =
        fmt::format("usage: {} in, {} out", number("inputTokens"), number("outputTokens"));
    if (number("cacheReadTokens") > 0)
      text += fmt::format(", {} cached", number("cacheReadTokens"));
    if (const json::value* cost = item.if_contains("costUsd"); cost && cost->is_number())
      text += fmt::format(", ${:.4f}", cost->to_number<double>());
    return text;
  }
  if (kind == "plan") {
    std::string text = "plan:";
    if (const json::value* entries = item.if_contains("entries"); entries && entries->is_array()) {
      for (const json::value& entry : entries->get_array()) {
        if (entry.is_object())
          text += "\n    - " + Str(entry.get_object(), "content") + " (" +
                  Str(entry.get_object(), "status") + ")";
      }
    }
    return text;
  }
  return kind;
}

void PrintPage(const json::object& page, const std::string& agent) {
  const json::value* epoch = page.if_contains("epoch");
  const std::string e = epoch ? json::serialize(*epoch) : "?";
  if (const json::value* reset = page.if_contains("reset");
      reset && reset->is_bool() && reset->get_bool()) {
    fmt::print("(the cursor's epoch is gone; this is the tail of epoch {})\n", e);
  }
  if (const json::value* has = page.if_contains("hasOlder");
      has && has->is_bool() && has->get_bool())
    fmt::print("(older: agentstream history {} --before {})\n", agent, Str(page, "startCursor"));
  if (const json::value* items = page.if_contains("items"); items && items->is_array()) {
    for (const json::value& item : items->get_array()) {
      if (!item.is_object()) continue;
      const json::value* end = item.get_object().if_contains("seqEnd");
      fmt::print("{}:{:<6} {}\n", e, end ? json::serialize(*end) : "?",
                 ItemText(item.get_object()));
    }
  }
  if (const json::value* has = page.if_contains("hasNewer");
      has && has->is_bool() && has->get_bool())
    fmt::print("(newer: agentstream history {} --after {})\n", agent, Str(page, "endCursor"));
}

}  // namespace

int History(const ClientContext& context, const HistoryOptions& options) {
  if (!options.before.empty() && !options.after.empty()) {
    fmt::print(stderr, "agentstream: give --before or --after, not both\n");
    return kExitUsage;
  }
  std::string query = "/timeline?direction=tail";
  if (!options.before.empty()) {
    if (!ValidCursor(options.before, "--before")) return kExitUsage;
    query = "/timeline?direction=before&cursor=" + client::PercentEncode(options.before);
  } else if (!options.after.empty()) {
    if (!ValidCursor(options.after, "--after")) return kExitUsage;
    query = "/timeline?direction=after&cursor=" + client::PercentEncode(options.after);
  }
  query += "&limit=" + std::to_string(options.limit);
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value page,
                        api.Call("GET", client::DaemonApi::AgentPath(options.agent, query)));
    if (context.json) {
      PrintJson(page);
    } else if (page.is_object()) {
      PrintPage(page.get_object(), options.agent);
    } else {
      return Error(ErrorCode::kInvalidArgument, "daemon: a timeline page is not a JSON object");
    }
    return Status::Ok();
  });
}

}  // namespace agentstream::cli
