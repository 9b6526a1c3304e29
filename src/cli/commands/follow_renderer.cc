#include "cli/commands/follow_renderer.h"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <type_traits>
#include <variant>

#include "cli/commands/edit_diff.h"
#include "core/event_text.h"

namespace agentstream::cli {

namespace {

constexpr const char* kDim = "\033[2m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kGreen = "\033[32m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kCyan = "\033[36m";

// Cuts `text` to `max` bytes on a UTF-8 boundary, newlines made spaces, "..." when cut.
std::string OneLine(std::string text, std::size_t max) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  if (text.size() <= max) return text;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

// What a tool call is about: its title, else a "command" argument, else its input as JSON.
std::string Summary(const ToolCallStart& start) {
  if (start.title && !start.title->empty()) return *start.title;
  if (const auto* object = start.input.if_object()) {
    if (const auto* command = object->if_contains("command"); command && command->is_string())
      return std::string(command->get_string());
  }
  if (start.input.is_null()) return "";
  return boost::json::serialize(start.input);
}

std::string CursorText(const EventRecord& record) { return FormatCursor(record.cursor()); }

}  // namespace

std::string FollowRenderer::Style(const std::string& text, const char* style) const {
  if (!options_.tty || style == nullptr || text.empty()) return text;
  return std::string(style) + text + "\033[0m";
}

std::string FollowRenderer::Line(const std::string& text, const char* style) {
  return CloseLine() + Style(text, style) + "\n";
}

std::string FollowRenderer::CloseLine() {
  if (open_ == Open::kNone) return "";
  open_ = Open::kNone;
  open_id_.clear();
  return "\n";
}

std::string FollowRenderer::Render(const EventRecord& record) {
  std::string out;
  if (epoch_.value() != 0 && record.epoch != epoch_) {
    out = Line("-- history rewound: epoch " + std::to_string(record.epoch.value()) + " from seq " +
                   std::to_string(record.seq.value()),
               kDim);
  }
  epoch_ = record.epoch;
  return out + RenderRecord(record);
}

std::string FollowRenderer::RenderRecord(const EventRecord& record) {
  auto event = DecodeRecord(record);
  if (!event.ok()) {
    return Line("! " + CursorText(record) + " " +
                    std::string(EventKindName(static_cast<EventKind>(record.kind))) + ": " +
                    event.status().ToString(),
                kRed);
  }
  return RenderPayload(*event);
}

std::string FollowRenderer::Text(const MessageId& id, const std::string& text, Open kind) {
  const char* style = kind == Open::kReasoning ? kDim : nullptr;
  if (open_ == kind && open_id_ == id.str()) return Style(text, style);
  std::string out = CloseLine();
  if (kind == Open::kReasoning) out += Style("(thinking) ", kDim);
  out += Style(text, style);
  open_ = kind;
  open_id_ = id.str();
  return out;
}

std::string FollowRenderer::ToolStart(const ToolCallStart& start) {
  const std::string& id = start.call_id.str();
  if (!calls_.count(id)) {
    call_order_.push_back(id);
    if (call_order_.size() > kMaxOpenCalls) {
      calls_.erase(call_order_.front());
      call_order_.pop_front();
    }
  }
  Call call{start.name, OneLine(Summary(start), kMaxSummaryChars),
            EditDiffLines(start.name, start.input)};
  calls_[id] = call;
  if (!options_.tty) return "";
  std::string out = CloseLine();
  out += Style(
      "  tool " + call.name + (call.summary.empty() ? "" : " (" + call.summary + ")") + ": running",
      kDim);
  open_ = Open::kTool;
  open_id_ = id;
  return out;
}

std::string FollowRenderer::ToolEnd(const ToolCallEnd& end) {
  const std::string& id = end.call_id.str();
  Call call{"?", id};
  if (auto it = calls_.find(id); it != calls_.end()) {
    call = it->second;
    calls_.erase(it);
    call_order_.erase(std::find(call_order_.begin(), call_order_.end(), id));
  }
  std::string status;
  const char* style = kGreen;
  switch (end.status) {
    case ToolCallStatus::kCompleted:
      status = "completed";
      break;
    case ToolCallStatus::kFailed:
      status = "failed" + (end.error ? ": " + OneLine(*end.error, kMaxSummaryChars) : "");
      style = kRed;
      break;
    case ToolCallStatus::kCanceled:
      status = "canceled";
      style = kYellow;
      break;
  }
  const std::string text = "  tool " + call.name +
                           (call.summary.empty() ? "" : " (" + call.summary + ")") + ": " + status;
  std::string edit;
  if (end.status == ToolCallStatus::kCompleted) {
    for (const std::string& line : call.edit) {
      const char* line_style = line.starts_with("+ ")   ? kGreen
                               : line.starts_with("- ") ? kRed
                                                        : kDim;
      edit += Style("    " + line, line_style) + "\n";
    }
  }
  if (options_.tty && open_ == Open::kTool && open_id_ == id) {
    open_ = Open::kNone;
    open_id_.clear();
    return "\r\033[2K" + Style(text, style) + "\n" + edit;
  }
  return Line(text, style) + edit;
}

std::string FollowRenderer::Permission(const PermissionRequested& request) {
  const std::string& id = request.request_id.str();
  pending_.push_back({id, request.title});
  if (pending_.size() > kMaxPending) pending_.pop_front();
  std::string text = "permission " + id + ": " + OneLine(request.title, kMaxSummaryChars);
  if (request.tool_name && *request.tool_name != request.title)
    text += " [" + *request.tool_name + "]";
  std::string out = Line(text, kYellow);
  const std::string agent = options_.agent.empty() ? "AGENT" : options_.agent;
  out += Line("  answer: " + options_.program + " approve " + agent + " " + id + "   or   " +
                  options_.program + " deny " + agent + " " + id,
              kDim);
  if (options_.interactive) out += Line("  or type a (allow) or d (deny), then Enter", kDim);
  return out;
}

std::string FollowRenderer::Resolved(const PermissionResolved& resolved) {
  const std::string& id = resolved.request_id.str();
  std::erase_if(pending_, [&](const PendingRequest& p) { return p.request_id == id; });
  const bool allowed = resolved.decision == PermissionDecision::kAllow;
  std::string text = "permission " + id + ": " + (allowed ? "allowed" : "denied");
  if (resolved.option_id) text += " (" + *resolved.option_id + ")";
  if (resolved.message && !resolved.message->empty()) text += ": " + *resolved.message;
  return Line(text, allowed ? kGreen : kRed);
}

std::string FollowRenderer::TurnLine(const Event& event, const std::string& what) {
  const std::string turn = event.turn ? event.turn->str() : "?";
  const char* style = kCyan;
  if (what.starts_with("failed")) style = kRed;
  if (what.starts_with("canceled")) style = kYellow;
  return Line("-- turn " + turn + " " + what, style);
}

std::string FollowRenderer::RenderPayload(const Event& event) {
  return std::visit(
      [&](const auto& p) -> std::string {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, AssistantMessageDelta>) {
          return Text(p.message_id, p.text, Open::kAssistant);
        } else if constexpr (std::is_same_v<T, AssistantMessageEnd>) {
          if (open_ == Open::kAssistant && open_id_ == p.message_id.str()) return CloseLine();
          return "";
        } else if constexpr (std::is_same_v<T, Reasoning>) {
          return Text(p.message_id, p.text, Open::kReasoning);
        } else if constexpr (std::is_same_v<T, ToolCallStart>) {
          return ToolStart(p);
        } else if constexpr (std::is_same_v<T, ToolCallEnd>) {
          return ToolEnd(p);
        } else if constexpr (std::is_same_v<T, PermissionRequested>) {
          return Permission(p);
        } else if constexpr (std::is_same_v<T, PermissionResolved>) {
          return Resolved(p);
        } else if constexpr (std::is_same_v<T, TurnStarted>) {
          std::string origin = p.origin == TurnOrigin::kForeground ? "foreground" : "autonomous";
          if (p.task_id) origin += ", task " + *p.task_id;
          return TurnLine(event, "started (" + origin + ")");
        } else if constexpr (std::is_same_v<T, TurnCompleted>) {
          return TurnLine(event, "completed" + (p.stop_reason ? " (" + *p.stop_reason + ")" : ""));
        } else if constexpr (std::is_same_v<T, TurnCanceled>) {
          return TurnLine(event, "canceled" + (p.reason.empty() ? "" : ": " + p.reason));
        } else if constexpr (std::is_same_v<T, TurnFailed>) {
          return TurnLine(event, "failed: " + p.code + (p.message.empty() ? "" : ": " + p.message));
        } else {
          return RenderOther(event);
        }
      },
      event.payload);
}

std::string FollowRenderer::RenderOther(const Event& event) {
  return std::visit(
      [&](const auto& p) -> std::string {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, UserMessage>) {
          std::string text = "> " + p.text;
          for (std::size_t at = text.find('\n'); at != std::string::npos;
               at = text.find('\n', at + 1))
            text.insert(at + 1, "> ");
          if (!p.attachments.empty())
            text += " [+" + std::to_string(p.attachments.size()) + " attachments]";
          return Line(text, kBold);
        } else if constexpr (std::is_same_v<T, Plan>) {
          std::string out = Line("plan:");
          for (const auto& entry : p.entries) {
            const char* mark = entry.status == PlanEntryStatus::kCompleted    ? "[x] "
                               : entry.status == PlanEntryStatus::kInProgress ? "[>] "
                                                                              : "[ ] ";
            out += Line("  " + std::string(mark) + entry.content);
          }
          return out;
        } else if constexpr (std::is_same_v<T, ErrorEvent>) {
          return Line("error " + p.code + ": " + p.message + (p.fatal ? " (fatal)" : ""), kRed);
        } else if constexpr (std::is_same_v<T, Notice>) {
          return p.level == NoticeLevel::kWarning ? Line("warning: " + p.text, kYellow)
                                                  : Line("notice: " + p.text, kDim);
        } else if constexpr (std::is_same_v<T, ModeChanged>) {
          return Line("mode: " + p.mode, kDim);
        } else if constexpr (std::is_same_v<T, ModelChanged>) {
          return Line("model: " + p.model, kDim);
        } else if constexpr (std::is_same_v<T, ThinkingOptionChanged>) {
          return Line("thinking: " + p.option.value_or("default"), kDim);
        } else if constexpr (std::is_same_v<T, Usage>) {
          std::string text = "usage: " + std::to_string(p.input_tokens) + " in, " +
                             std::to_string(p.output_tokens) + " out tokens";
          if (p.cost_usd) text += ", $" + std::to_string(*p.cost_usd);
          return Line(text, kDim);
        } else {
          return RenderSession(event);
        }
      },
      event.payload);
}

std::string FollowRenderer::RenderSession(const Event& event) {
  return std::visit(
      [&](const auto& p) -> std::string {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, SessionCreated>) {
          return Line("session " + event.session.str() + ": " + p.provider + " in " + p.cwd, kDim);
        } else if constexpr (std::is_same_v<T, SessionForked>) {
          return Line("forked from " + p.parent.str() + " at " +
                          FormatCursor({p.parent_epoch, p.parent_seq}),
                      kDim);
        } else if constexpr (std::is_same_v<T, SessionRewound>) {
          return Line("rewound: epoch " + std::to_string(event.epoch.value()) + " continues " +
                          FormatCursor({p.to_epoch, p.to_seq}),
                      kDim);
        } else if constexpr (std::is_same_v<T, SessionTitled>) {
          return Line(p.title.empty() ? "title cleared" : "titled \"" + p.title + "\"", kDim);
        } else if constexpr (std::is_same_v<T, WorkspaceCreated>) {
          return Line("worktree " + p.path + " on branch " + p.branch + " from " + p.base + " (" +
                          p.base_commit.substr(0, 12) + ")",
                      kDim);
        } else if constexpr (std::is_same_v<T, WorkspaceRemoved>) {
          return Line("worktree " + p.path + " removed" + (p.forced ? " (changes discarded)" : ""),
                      kDim);
        } else if constexpr (std::is_same_v<T, WorkspaceAction>) {
          return Line(WorkspaceActionText(p), WorkspaceActionRefused(p) ? kRed : kDim);
        } else if constexpr (std::is_same_v<T, AutomationFired>) {
          return Line(AutomationFiredText(p), p.missing_fields.empty() ? kDim : kYellow);
        } else if constexpr (std::is_same_v<T, AuthorizationRequired>) {
          return Line("authorization " + p.request_id.str() + " required: " + p.message +
                          (p.url ? " " + *p.url : ""),
                      kYellow);
        } else if constexpr (std::is_same_v<T, AuthorizationCompleted>) {
          return Line(
              "authorization " + p.request_id.str() + ": " + (p.granted ? "granted" : "refused"),
              p.granted ? kGreen : kRed);
        } else if constexpr (std::is_same_v<T, SubagentEvent>) {
          if (p.child_kind.ends_with(".delta") || p.child_kind == "reasoning" ||
              p.child_kind == "tool_call.output")
            return "";
          return Line("[subagent " + p.child.str() + "] " + p.child_kind, kDim);
        } else {
          return "";  // provider metadata, message starts, tool output: not shown
        }
      },
      event.payload);
}

}  // namespace agentstream::cli
