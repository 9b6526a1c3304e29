#include "runtime/transcript_import.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/utf8.h"
#include "providers/claude/claude_protocol.h"
#include "providers/codex/codex_rollout.h"
#include "runtime/session_records.h"

namespace agentstream::runtime {

namespace fs = std::filesystem;

std::string_view ImportSourceName(ImportSource source) {
  return source == ImportSource::kClaude ? "claude" : "codex";
}

std::optional<ImportSource> ImportSourceNamed(std::string_view name) {
  if (name == "claude") return ImportSource::kClaude;
  if (name == "codex") return ImportSource::kCodex;
  return std::nullopt;
}

namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// 8-4-4-4-12 hex digits.
bool IsUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !IsHex(text[i])) return false;
  }
  return true;
}

bool EndsWith(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

std::optional<TranscriptFile> Describe(ImportSource source, const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  TranscriptFile file;
  file.path = path.string();
  file.session_id = TranscriptSessionId(source, file.path);
  if (file.session_id.empty()) return std::nullopt;
  file.bytes = static_cast<std::uint64_t>(st.st_size);
  file.modified_ms = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000 +
                     static_cast<std::int64_t>(st.st_mtim.tv_nsec / 1000000);
  return file;
}

// The cwd a rollout's first line (its session_meta) names; "" when it names none.
std::string RolloutCwd(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  line.resize(std::size_t{1} << 20);
  in.read(line.data(), static_cast<std::streamsize>(line.size()));
  line.resize(static_cast<std::size_t>(in.gcount()));
  return providers::codex::ParseRollout(line.substr(0, line.find('\n'))).cwd;
}

void AddBatch(TranscriptBatch& batch, std::string cwd, std::vector<turn::ProviderEvent> events,
              std::size_t lines, std::size_t malformed,
              const std::map<std::string, std::size_t>& skipped) {
  if (batch.cwd.empty()) batch.cwd = std::move(cwd);
  for (turn::ProviderEvent& e : events) batch.events.push_back(std::move(e));
  batch.lines += lines;
  batch.malformed += malformed;
  for (const auto& [type, count] : skipped) batch.skipped[type] += count;
}

// The text between <tag> and </tag> in `text`, trimmed; nullopt without the tag.
std::optional<std::string> Tagged(std::string_view text, std::string_view tag) {
  const std::string open = "<" + std::string(tag) + ">";
  const std::string close = "</" + std::string(tag) + ">";
  const std::size_t start = text.find(open);
  if (start == std::string_view::npos) return std::nullopt;
  const std::size_t from = start + open.size();
  const std::size_t end = text.find(close, from);
  std::string_view inner =
      text.substr(from, end == std::string_view::npos ? text.npos : end - from);
  while (!inner.empty() && std::isspace(static_cast<unsigned char>(inner.front())))
    inner.remove_prefix(1);
  while (!inner.empty() && std::isspace(static_cast<unsigned char>(inner.back())))
    inner.remove_suffix(1);
  return std::string(inner);
}

// What the claude CLI writes as a user record but the person did not prompt: a slash command it
// ran itself ("<command-name>/model</command-name>": the prompt "/model ARGS"), its output
// ("<local-command-stdout>": an assistant message of that turn), and the mark of an interrupt
// ("[Request interrupted by user]": the turn ends canceled).
std::vector<turn::ProviderEvent> ClaudeUserRecords(std::vector<turn::ProviderEvent> events) {
  std::vector<turn::ProviderEvent> out;
  for (turn::ProviderEvent& event : events) {
    auto* echo = std::get_if<turn::ProviderUserEcho>(&event);
    if (echo == nullptr) {
      out.push_back(std::move(event));
    } else if (std::optional<std::string> command = Tagged(echo->text, "command-name")) {
      const std::string args = Tagged(echo->text, "command-args").value_or("");
      echo->text = args.empty() ? *command : *command + " " + args;
      out.push_back(std::move(event));
    } else if (std::optional<std::string> text = Tagged(echo->text, "local-command-stdout")) {
      const MessageId id("local_" + (echo->message_id ? echo->message_id->str() : "output"));
      out.emplace_back(turn::ProviderMessageStart{id, std::nullopt, std::nullopt});
      out.emplace_back(turn::ProviderTextDelta{id, std::move(*text), std::nullopt, std::nullopt});
      out.emplace_back(turn::ProviderMessageStop{id, std::string("end_turn")});
    } else if (echo->text.rfind("[Request interrupted by user", 0) == 0) {
      turn::ProviderTurnResult canceled;
      canceled.outcome = turn::TurnOutcome::kCanceled;
      canceled.message = "interrupted by the user";
      out.emplace_back(std::move(canceled));
    } else {
      out.push_back(std::move(event));
    }
  }
  return out;
}

// Ids a record left empty (a message without its id, a tool call without one) are named by the
// record's offset in the file, the same on every read, and an empty parent id is dropped: the log
// refuses empty ids.
void FillEmptyIds(std::vector<turn::ProviderEvent>& events, std::uint64_t offset) {
  const MessageId message("claude_msg_" + std::to_string(offset));
  const ToolCallId call("claude_call_" + std::to_string(offset));
  for (turn::ProviderEvent& event : events) {
    std::visit(
        [&](auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (requires { e.message_id.str(); } &&
                        !std::is_same_v<T, turn::ProviderUserEcho>) {
            if (e.message_id.str().empty()) e.message_id = message;
          }
          if constexpr (requires { e.call_id.str(); }) {
            if (e.call_id.str().empty()) e.call_id = call;
          }
          if constexpr (requires { e.parent_message_id->str(); }) {
            if (e.parent_message_id && e.parent_message_id->str().empty())
              e.parent_message_id.reset();
          }
        },
        event);
  }
}

void ReadLine(ImportSource source, std::string_view line, std::uint64_t offset,
              TranscriptBatch& batch) {
  if (source == ImportSource::kClaude) {
    providers::claude::Transcript t = providers::claude::ReadTranscript(line);
    FillEmptyIds(t.events, offset);
    AddBatch(batch, std::move(t.cwd), ClaudeUserRecords(std::move(t.events)), t.lines, t.malformed,
             t.skipped);
  } else {
    providers::codex::Rollout r = providers::codex::ParseRollout(line, offset);
    AddBatch(batch, std::move(r.cwd), std::move(r.events), r.lines, r.malformed, r.skipped);
  }
}

// The offset after the '\n' that ends the line starting at `from`; nullopt when the file ends
// first.
std::optional<std::uint64_t> LineEnd(std::ifstream& in, std::uint64_t from) {
  std::string block(std::size_t{1} << 20, '\0');
  in.clear();
  in.seekg(static_cast<std::streamoff>(from));
  for (std::uint64_t at = from;;) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n == 0) return std::nullopt;
    const std::size_t nl = std::string_view(block.data(), n).find('\n');
    if (nl != std::string_view::npos) return at + nl + 1;
    at += n;
  }
}

}  // namespace

std::string TranscriptRoot(ImportSource source) {
  const std::string home = Env("HOME");
  if (source == ImportSource::kClaude) {
    const std::string config = Env("CLAUDE_CONFIG_DIR");
    if (!config.empty()) return config + "/projects";
    return home.empty() ? std::string() : home + "/.claude/projects";
  }
  const std::string codex = Env("CODEX_HOME");
  if (!codex.empty()) return codex + "/sessions";
  return home.empty() ? std::string() : home + "/.codex/sessions";
}

std::string TranscriptSessionId(ImportSource source, std::string_view path) {
  const std::size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (!EndsWith(name, ".jsonl")) return {};
  name.remove_suffix(6);
  if (source == ImportSource::kClaude) return IsUuid(name) ? std::string(name) : std::string();
  if (name.rfind("rollout-", 0) != 0 || name.size() < 36) return {};
  const std::string_view id = name.substr(name.size() - 36);
  return IsUuid(id) ? std::string(id) : std::string();
}

std::vector<TranscriptFile> ListTranscripts(ImportSource source, const std::string& root,
                                            const std::string& project, std::int64_t since_ms,
                                            std::size_t limit, bool* truncated) {
  std::vector<TranscriptFile> files;
  std::error_code ec;
  const auto keep = [&](const fs::path& path) {
    if (path.extension() != ".jsonl") return;
    std::optional<TranscriptFile> file = Describe(source, path);
    if (!file || file->modified_ms < since_ms) return;
    if (source == ImportSource::kCodex && !project.empty() && RolloutCwd(file->path) != project)
      return;
    files.push_back(std::move(*file));
  };
  // Walks are bounded too: a home with millions of entries answers with what the first
  // kMaxListedTranscripts * 4 entries hold.
  std::size_t visited = 0;
  const std::size_t max_visited = kMaxListedTranscripts * 4;
  if (source == ImportSource::kClaude) {
    const std::string only = project.empty() ? "" : providers::claude::ProjectDirName(project);
    for (fs::directory_iterator dir(root, ec), end; !ec && dir != end; dir.increment(ec)) {
      if (!dir->is_directory(ec)) continue;
      if (!only.empty() && dir->path().filename() != only) continue;
      std::error_code inner;
      for (fs::directory_iterator f(dir->path(), inner); !inner && f != end; f.increment(inner)) {
        if (++visited > max_visited) break;
        keep(f->path());
      }
    }
  } else {
    fs::recursive_directory_iterator it(root, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (++visited > max_visited) break;
      if (it.depth() > 3) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->path().filename().string().rfind("rollout-", 0) == 0) keep(it->path());
    }
  }
  std::sort(files.begin(), files.end(), [](const TranscriptFile& a, const TranscriptFile& b) {
    return std::tie(a.modified_ms, a.path) < std::tie(b.modified_ms, b.path);
  });
  limit = std::min(limit, kMaxListedTranscripts);
  *truncated = files.size() > limit;
  if (files.size() > limit) files.resize(limit);
  return files;
}

Result<TranscriptFile> CheckTranscriptPath(ImportSource source, const std::string& root,
                                           const std::string& path) {
  if (root.empty()) {
    return Error(ErrorCode::kInvalidArgument, "the daemon's environment names no home for " +
                                                  std::string(ImportSourceName(source)) +
                                                  " transcripts");
  }
  if (path.empty() || path[0] != '/')
    return Error(ErrorCode::kInvalidArgument, "a transcript's path must be absolute: " + path);
  std::error_code ec;
  const fs::path real_root = fs::canonical(root, ec);
  if (ec) return Error(ErrorCode::kNotFound, "no transcript directory " + root);
  const fs::path real = fs::canonical(path, ec);
  if (ec) return Error(ErrorCode::kNotFound, "no transcript " + path);
  const std::string prefix = real_root.string() + "/";
  if (real.string().rfind(prefix, 0) != 0) {
    return Error(ErrorCode::kInvalidArgument,
                 path + " is not under " + root + ", where the daemon reads " +
                     std::string(ImportSourceName(source)) + " transcripts");
  }
  if (real.extension() != ".jsonl")
    return Error(ErrorCode::kInvalidArgument, path + " is not a .jsonl transcript");
  std::optional<TranscriptFile> file = Describe(source, real);
  if (!file) {
    return Error(ErrorCode::kInvalidArgument, path + " is not a regular file named as a " +
                                                  std::string(ImportSourceName(source)) +
                                                  " transcript");
  }
  if (file->bytes > kMaxTranscriptBytes) {
    return Error(ErrorCode::kTooLarge,
                 path + " is over " + std::to_string(kMaxTranscriptBytes >> 20) + " MiB");
  }
  return *file;
}

Result<TranscriptBatch> ReadTranscriptBatch(ImportSource source, const std::string& path,
                                            std::uint64_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::kIoError, "cannot open " + path);
  in.seekg(static_cast<std::streamoff>(offset));
  std::string buffer(kImportBatchBytes, '\0');
  in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  const auto n = static_cast<std::size_t>(in.gcount());
  if (in.bad()) return Error(ErrorCode::kIoError, "cannot read " + path);
  const std::string_view text(buffer.data(), n);
  TranscriptBatch batch;
  batch.end = offset;
  std::size_t pos = 0;
  while (batch.events.size() < kImportBatchEvents) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (pos == 0 && n == kImportBatchBytes) {
        // One line longer than a batch: skipped, counted as malformed.
        std::optional<std::uint64_t> end = LineEnd(in, offset + n);
        if (!end) {
          batch.at_end = true;
          return batch;
        }
        ++batch.lines;
        ++batch.malformed;
        batch.end = *end;
        return batch;
      }
      batch.at_end = n < kImportBatchBytes;
      return batch;
    }
    ReadLine(source, text.substr(pos, nl - pos), offset + pos, batch);
    pos = nl + 1;
    batch.end = offset + pos;
  }
  return batch;
}

namespace {

// Feeds the engine as the live path does, accepting every turn it starts.
class Replay {
 public:
  Replay(turn::TurnState& state, turn::TurnIdSource& ids) : state_(state), ids_(ids) {}

  void Feed(const turn::EngineInput& input) {
    turn::Step step = turn::Advance(std::move(state_), input, ids_);
    state_ = std::move(step.state);
    for (NewEvent& e : step.events) out_.push_back(std::move(e));
    for (const turn::Effect& effect : step.effects)
      if (const auto* start = std::get_if<turn::StartProviderTurn>(&effect))
        Feed(turn::Command(turn::ProviderAcceptedTurn{start->turn}));
  }

  // Ends every open turn: completed (the transcript says no more of it).
  void CloseAll() {
    for (int guard = 0; guard < 64 && !state_.open.empty(); ++guard) {
      const std::size_t before = state_.open.size();
      turn::ProviderTurnResult result;
      if (!state_.foreground) result.task_id = state_.open.begin()->second.task_id;
      Feed(turn::ProviderEvent(result));
      if (state_.open.size() == before) break;
    }
    if (!state_.open.empty()) {
      Feed(turn::Command(turn::RequestInterrupt{}));
      Feed(turn::Command(turn::InterruptTeardownDone{}));
    }
  }

  std::vector<NewEvent> Take() { return std::move(out_); }

 private:
  turn::TurnState& state_;
  turn::TurnIdSource& ids_;
  std::vector<NewEvent> out_;
};

}  // namespace

std::vector<NewEvent> ReplayTranscript(turn::TurnState& state,
                                       const std::vector<turn::ProviderEvent>& events,
                                       turn::TurnIdSource& ids) {
  Replay replay(state, ids);
  for (const turn::ProviderEvent& event : events) {
    const auto* echo = std::get_if<turn::ProviderUserEcho>(&event);
    if (echo == nullptr) {
      replay.Feed(event);
      continue;
    }
    if (echo->text.empty()) continue;
    replay.CloseAll();
    turn::SubmitPrompt prompt;
    prompt.client_message_id =
        "import:" +
        (echo->message_id ? echo->message_id->str() : "turn-" + std::to_string(state.next_order));
    prompt.text = echo->text;
    replay.Feed(turn::Command(std::move(prompt)));
  }
  replay.CloseAll();
  return replay.Take();
}

// The newest session.imported event of the current epoch of `info`, when nothing but a title
// follows it (a prompt, a fork point's cancels, anything else the session did here after its
// import: nullopt). Reads back at most kReadPage events.
Result<LastImported> LastImport(EventLog& log, const SessionInfo& info) {
  ReadRequest request{info.id, info.epoch, ReadDirection::kBackward, Seq(0), kReadPage};
  AS_ASSIGN_OR_RETURN(ReadResult page, log.Read(request));
  LastImported last;
  for (auto it = page.events.rbegin(); it != page.events.rend(); ++it) {
    AS_ASSIGN_OR_RETURN(Event event, DecodeRecord(*it));
    if (auto* marker = std::get_if<SessionImported>(&event.payload)) {
      last.marker = std::move(*marker);
      return last;
    }
    if (event.kind() != EventKind::kSessionTitled) last.continued = true;
  }
  last.continued = true;  // no import in its newest page: it went on here long since
  return last;
}

std::string TitleFromPrompt(std::string_view text) {
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return {};
  text.remove_prefix(start);
  std::string title = BoundUtf8(text.substr(0, text.find('\n')), 80).text;
  for (char& c : title)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return title;
}

}  // namespace agentstream::runtime
