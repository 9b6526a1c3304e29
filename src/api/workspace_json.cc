#include "api/workspace_json.h"

#include "core/json_fields.h"
#include "core/utf8.h"
#include "workspace/unified_diff.h"

namespace agentstream::api {

namespace json = boost::json;

namespace {

json::object FileToJson(const workspace::FileDiff& file) {
  json::array hunks;
  for (const workspace::DiffHunk& hunk : file.hunks) {
    json::array lines;
    for (const std::string& line : hunk.lines) lines.emplace_back(SanitizeUtf8(line));
    hunks.push_back(json::object{{"header", SanitizeUtf8(hunk.header)},
                                 {"oldStart", hunk.old_start},
                                 {"oldLines", hunk.old_lines},
                                 {"newStart", hunk.new_start},
                                 {"newLines", hunk.new_lines},
                                 {"lines", std::move(lines)}});
  }
  json::object out{{"path", SanitizeUtf8(file.path)},
                   {"status", file.status},
                   {"binary", file.binary},
                   {"additions", file.additions},
                   {"deletions", file.deletions}};
  if (file.old_path != file.path) out["oldPath"] = SanitizeUtf8(file.old_path);
  if (!file.old_mode.empty()) out["oldMode"] = file.old_mode;
  if (!file.new_mode.empty()) out["newMode"] = file.new_mode;
  out["hunks"] = std::move(hunks);
  return out;
}

}  // namespace

json::object WorktreeToJson(const SessionId& agent, const workspace::Workspace& workspace,
                            workspace::WorktreeState state, bool closed) {
  json::object out{{"agent", agent.str()}};
  const json::value fields = json_fields::ToJson(workspace);
  for (const auto& [name, value] : fields.as_object()) out[name] = value;
  out["state"] = workspace::WorktreeStateName(state);
  out["closed"] = closed;
  return out;
}

Result<WorktreeEntry> WorktreeEntryFromJson(const json::value& value) {
  const json::object* obj = value.if_object();
  const json::value* agent = obj != nullptr ? obj->if_contains("agent") : nullptr;
  const json::value* state = obj != nullptr ? obj->if_contains("state") : nullptr;
  if (agent == nullptr || !agent->is_string() || state == nullptr || !state->is_string())
    return Error(ErrorCode::kInvalidArgument, "a worktree needs an agent and a state");
  WorktreeEntry entry;
  entry.agent = SessionId(std::string(agent->get_string()));
  entry.state = std::string(state->get_string());
  json_fields::DecodeError err;
  if (!json_fields::FromJson(value, entry.workspace, err))
    return Error(ErrorCode::kInvalidArgument, "worktree: " + err.path + " " + err.what);
  if (const json::value* closed = obj->if_contains("closed"); closed && closed->is_bool())
    entry.closed = closed->get_bool();
  return entry;
}

json::object DiffToJson(const SessionId& agent, const workspace::Workspace& workspace,
                        const workspace::WorktreeDiff& diff) {
  json::array files;
  int additions = 0, deletions = 0;
  for (const workspace::FileDiff& file : workspace::ParseUnifiedDiff(diff.text)) {
    additions += file.additions, deletions += file.deletions;
    files.push_back(FileToJson(file));
  }
  json::array skipped;
  for (const workspace::SkippedFile& file : diff.skipped)
    skipped.push_back(json::object{{"path", file.path}, {"reason", file.reason}});
  return json::object{{"agent", agent.str()},
                      {"path", workspace.path},
                      {"branch", workspace.branch},
                      {"base", workspace.base},
                      {"baseCommit", workspace.base_commit},
                      {"against", diff.against},
                      {"againstCommit", diff.against_commit},
                      {"truncated", diff.truncated},
                      {"additions", additions},
                      {"deletions", deletions},
                      {"files", std::move(files)},
                      {"skipped", std::move(skipped)}};
}

}  // namespace agentstream::api
