// Importing the transcript files of the `claude` and `codex` CLIs (docs/import.md): where they
// are, how a file is read a batch of whole lines at a time, and how its records become a session
// log's events. The log's writer is AgentManager::Import; this is its pure part and its file
// reads.
//
// A transcript's records are read as provider events (claude::ReadTranscript,
// codex::ParseRollout) and run through the turn engine, as the live path runs a provider's
// events: each of the person's prompts starts a foreground turn (its user.message and
// turn.started), the records after it are that turn's content, and tool output is cut at the
// engine's bound. A claude transcript records no turn results: a turn ends completed at the next
// prompt. Every batch ends with every turn closed (a turn the file leaves open ends completed)
// and with its session.imported event, so a log always ends where an import stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_codec.h"
#include "core/status.h"
#include "core/turn/engine.h"
#include "store/event_log.h"

namespace agentstream::runtime {

enum class ImportSource { kClaude, kCodex };
std::string_view ImportSourceName(ImportSource source);
std::optional<ImportSource> ImportSourceNamed(std::string_view name);

// A file over this many bytes is refused (kTooLarge).
inline constexpr std::uint64_t kMaxTranscriptBytes = std::uint64_t{1} << 30;
// One batch holds the whole lines of at most this many bytes of the file; a longer line is
// skipped and counted as malformed.
inline constexpr std::size_t kImportBatchBytes = std::size_t{4} << 20;
// A batch ends before a line once it holds this many events (the log's bound is 4096 a batch).
inline constexpr std::size_t kImportBatchEvents = 3000;
// The most transcripts one list answers.
inline constexpr std::size_t kMaxListedTranscripts = 10000;

// Where `source` keeps its transcripts, from the daemon's environment: claude
// $CLAUDE_CONFIG_DIR/projects (else $HOME/.claude/projects), codex $CODEX_HOME/sessions (else
// $HOME/.codex/sessions). Empty when the environment names no home.
std::string TranscriptRoot(ImportSource source);

struct TranscriptFile {
  std::string path;        // absolute
  std::string session_id;  // the CLI's session id, from the file's name
  std::uint64_t bytes = 0;
  std::int64_t modified_ms = 0;
};

// The CLI session id a transcript file's name gives: claude's <uuid>.jsonl, codex's
// rollout-<time>-<uuid>.jsonl. Empty when the name is not one of those.
std::string TranscriptSessionId(ImportSource source, std::string_view path);

// The transcripts under `root`, oldest modified first: claude's projects/*/*.jsonl (one directory
// down), codex's rollout-*.jsonl up to 4 directories down (YYYY/MM/DD). `project` (when not empty)
// keeps claude's directory of that working directory, and codex rollouts whose session_meta names
// it as cwd; `since_ms` keeps files modified then or later. At most `limit` (and
// kMaxListedTranscripts); `truncated` says there were more.
std::vector<TranscriptFile> ListTranscripts(ImportSource source, const std::string& root,
                                            const std::string& project, std::int64_t since_ms,
                                            std::size_t limit, bool* truncated);

// `path` as a transcript file under `root` (both resolved, symbolic links followed): its
// canonical path. kInvalidArgument for a path outside the root or not a regular *.jsonl file,
// kNotFound for a missing file, kTooLarge over kMaxTranscriptBytes.
Result<TranscriptFile> CheckTranscriptPath(ImportSource source, const std::string& root,
                                           const std::string& path);

// What one batch of lines says.
struct TranscriptBatch {
  std::uint64_t end = 0;  // the offset after its last line
  std::string cwd;        // the first one a record named
  std::vector<turn::ProviderEvent> events;
  std::size_t lines = 0;
  std::size_t malformed = 0;
  std::map<std::string, std::size_t> skipped;
  bool at_end = false;  // no complete line follows (what follows, if anything, is being written)
};

// Reads the next batch of `path` from byte `offset`: whole lines up to kImportBatchBytes or until
// their events reach kImportBatchEvents (at least one line when one is complete). kIoError when
// the file cannot be read.
Result<TranscriptBatch> ReadTranscriptBatch(ImportSource source, const std::string& path,
                                            std::uint64_t offset);

// The events a batch's provider events make on a session whose engine state is `state` (updated),
// ending with every turn closed: the caller appends them, then its session.imported.
std::vector<NewEvent> ReplayTranscript(turn::TurnState& state,
                                       const std::vector<turn::ProviderEvent>& events,
                                       turn::TurnIdSource& ids);

// Where the last import of a session stopped. Reads back at most one page of its events.
struct LastImported {
  std::optional<SessionImported> marker;  // the newest session.imported in that page
  bool continued = false;  // anything but a title follows it (a prompt, say), or none was found
};
Result<LastImported> LastImport(EventLog& log, const SessionInfo& info);

// A session title from a prompt: its first line, cut to 80 bytes.
std::string TitleFromPrompt(std::string_view text);

}  // namespace agentstream::runtime
