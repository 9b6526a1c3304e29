#include "providers/claude/claude_protocol.h"

#include <unistd.h>

#include <boost/json.hpp>
#include <cctype>

#include "providers/claude/claude_parser.h"
#include "system/random_id.h"

namespace agentstream::providers::claude {

namespace json = boost::json;
using namespace agentstream::turn;  // NOLINT(google-build-using-namespace): the event vocabulary

std::vector<std::string> BuildArgv(const LaunchOptions& o) {
  std::vector<std::string> argv = {o.program,
                                   "--output-format",
                                   "stream-json",
                                   "--verbose",
                                   "--input-format",
                                   "stream-json",
                                   "--permission-prompt-tool",
                                   "stdio",
                                   "--include-partial-messages",
                                   "--replay-user-messages",
                                   o.resume ? "--resume" : "--session-id",
                                   o.session_id};
  if (o.model) argv.insert(argv.end(), {"--model", *o.model});
  if (o.permission_mode) argv.insert(argv.end(), {"--permission-mode", *o.permission_mode});
  argv.insert(argv.end(), o.extra_args.begin(), o.extra_args.end());
  return argv;
}

std::vector<std::string> BuildEnv(const LaunchOptions& o) {
  std::vector<std::string> env;
  if (o.env.empty()) {
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
  } else {
    env = o.env;
  }
  std::erase_if(env, [](const std::string& e) { return e.rfind("NODE_OPTIONS=", 0) == 0; });
  for (const char* key : {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY",
                          "DISABLE_ERROR_REPORTING", "DISABLE_AUTOUPDATER"}) {
    const std::string prefix = std::string(key) + "=";
    bool present = false;
    for (const std::string& e : env) present = present || e.rfind(prefix, 0) == 0;
    if (!present) env.push_back(prefix + "1");
  }
  return env;
}

namespace {
std::string Control(std::string_view id, json::object request) {
  return json::serialize(json::object{
      {"type", "control_request"}, {"request_id", id}, {"request", std::move(request)}});
}
std::string Response(std::string_view id, json::object response) {
  return json::serialize(json::object{
      {"type", "control_response"},
      {"response",
       json::object{
           {"subtype", "success"}, {"request_id", id}, {"response", std::move(response)}}}});
}
}  // namespace

std::string UserMessageLine(std::string_view text, std::string_view uuid) {
  json::object content{{"type", "text"}, {"text", text}};
  json::object line{{"type", "user"},
                    {"session_id", ""},
                    {"message", json::object{{"role", "user"}, {"content", json::array{content}}}},
                    {"parent_tool_use_id", nullptr}};
  if (!uuid.empty()) line["uuid"] = uuid;
  return json::serialize(line);
}

std::string InitializeLine(std::string_view id) {
  return Control(id, {{"subtype", "initialize"}, {"hooks", json::object{}}});
}
std::string InterruptLine(std::string_view id) { return Control(id, {{"subtype", "interrupt"}}); }
std::string SetPermissionModeLine(std::string_view id, std::string_view mode) {
  return Control(id, {{"subtype", "set_permission_mode"}, {"mode", mode}});
}
std::string SetModelLine(std::string_view id, std::string_view model) {
  return Control(id, {{"subtype", "set_model"}, {"model", model}});
}
std::string SetThinkingLine(std::string_view id, std::optional<int> max_tokens) {
  json::object r{{"subtype", "set_max_thinking_tokens"}};
  r["max_thinking_tokens"] = max_tokens ? json::value(*max_tokens) : json::value(nullptr);
  return Control(id, std::move(r));
}
std::string PermissionAllowLine(std::string_view id, const json::value& input,
                                std::string_view tool_use_id) {
  json::object r{{"behavior", "allow"}, {"updatedInput", input}};
  if (!tool_use_id.empty()) r["toolUseID"] = tool_use_id;
  return Response(id, std::move(r));
}
std::string PermissionDenyLine(std::string_view id, std::string_view message) {
  return Response(id, {{"behavior", "deny"}, {"message", message}, {"interrupt", false}});
}
std::string ControlErrorLine(std::string_view id, std::string_view error) {
  return json::serialize(json::object{
      {"type", "control_response"},
      {"response", json::object{{"subtype", "error"}, {"request_id", id}, {"error", error}}}});
}

std::string ProjectDirName(std::string_view cwd) {
  std::string slug(cwd);
  for (char& c : slug)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  return slug;
}

std::string TranscriptPath(std::string_view home, std::string_view cwd,
                           std::string_view session_id) {
  return std::string(home) + "/.claude/projects/" + ProjectDirName(cwd) + "/" +
         std::string(session_id) + ".jsonl";
}

namespace {

std::string_view StringMember(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->as_string()) : std::string_view();
}

bool Flag(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

// The history of one transcript record, when it carries any: not the CLI's own meta prompts, nor
// a sub-agent's records (older CLIs wrote its sidechain into the same file).
bool TranscriptLine(const json::object& o, std::vector<ProviderEvent>& out) {
  const std::string_view type = StringMember(o, "type");
  if (type != "user" && type != "assistant") return false;
  if (Flag(o, "isMeta") || Flag(o, "isSidechain")) return false;
  const json::value* mv = o.if_contains("message");
  if (!mv || !mv->is_object() || !mv->as_object().if_contains("content")) return false;
  ClaudeStreamParser parser;  // reuses the stdout mapping of one `user` / `assistant` line
  ParsedLine parsed = parser.Parse(json::serialize(o));
  for (ProviderEvent& e : parsed.events) {
    if (auto* echo = std::get_if<ProviderUserEcho>(&e)) {
      if (std::string_view uuid = StringMember(o, "uuid"); !uuid.empty())
        echo->message_id = MessageId(std::string(uuid));
    }
    out.push_back(std::move(e));
  }
  return true;
}

// The type a skipped record is counted under.
std::string SkippedType(const json::object& o) {
  const std::string_view type = StringMember(o, "type");
  if (type.empty()) return "(no type)";
  if (type == "user" || type == "assistant")
    return std::string(type) + (Flag(o, "isSidechain") ? ".sidechain" : ".meta");
  return std::string(type.substr(0, 64));
}

}  // namespace

Transcript ReadTranscript(std::string_view text) {
  Transcript out;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    ++out.lines;
    std::optional<json::value> v = ParseJsonRepaired(line);
    if (!v || !v->is_object()) {
      ++out.malformed;
      continue;
    }
    const json::object& o = v->as_object();
    if (out.session_id.empty()) out.session_id = std::string(StringMember(o, "sessionId"));
    if (out.cwd.empty()) out.cwd = std::string(StringMember(o, "cwd"));
    if (!TranscriptLine(o, out.events)) ++out.skipped[SkippedType(o)];
  }
  return out;
}

std::vector<ProviderEvent> ParseTranscript(std::string_view text) {
  return ReadTranscript(text).events;
}

std::string NewSessionUuid() { return system::RandomUuid(); }

}  // namespace agentstream::providers::claude
