// AgentManager: the daemon's agents. It owns every live agent session (a provider driven by a
// SessionRunner through the turn engine) and is the only writer of session logs while the daemon
// runs. Every provider event goes through the engine, is appended durably, and only then becomes
// visible: readers (the server's live streams, history pages, consumers) follow the log through
// EventLog::SubscribeCommits and never see an event the log has not acknowledged.
//
// Sessions are loaded lazily: start-up reads no history except for sessions whose stored status
// snapshot says a turn was open when the daemon stopped (restart recovery: those turns are closed
// with a failed terminal whose reason says the daemon restarted, and the status is recomputed
// from the log). A session's runtime is (re)started through its stored persistence handle when a
// prompt arrives.
//
// The values it takes and answers (AgentConfig, AgentSnapshot, SendRequest, SendReply) are the
// API's own (api/agent_types.h): the server encodes them as they are.
//
// Threading: every public method is thread-safe and returns at once; the work runs on the
// manager's own EventLoop thread (the one that runs every provider), and `done` callbacks and
// notice watchers run on that thread. They must not block; hand results to your own executor.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/agent_types.h"
#include "core/event.h"
#include "core/ids.h"
#include "core/status.h"
#include "core/turn/command.h"
#include "core/turn/effect.h"
#include "process/event_loop.h"
#include "providers/provider.h"
#include "runtime/lease_keeper.h"
#include "runtime/transcript_import.h"
#include "store/event_log.h"

namespace agentstream::runtime {

template <class T>
using Callback = std::function<void(Result<T>)>;
using StatusCallback = std::function<void(Status)>;

// The child of a fork, when the caller made it a worktree of its own (docs/workspaces.md).
struct ForkWorkspace {
  SessionId id;                // the child's id, the worktree's name
  WorkspaceCreated workspace;  // the child's cwd and its workspace.created event
};

// Live-only control notices (never stored): an agent was created, disposed (closed), changed
// status, failed outside a turn, or a prompt was queued or left the queue.
struct AgentNotice {
  enum class Kind { kCreated, kDisposed, kStatus, kError, kQueued };
  Kind kind = Kind::kStatus;
  api::AgentSnapshot agent;  // as of the notice
  std::string message;       // kError: what failed; kQueued: the client message id
};
using NoticeWatcher = std::function<void(const AgentNotice&)>;

// Makes provider instances. The composition root registers the providers this daemon offers.
class ProviderFactory {
 public:
  virtual ~ProviderFactory() = default;
  // A new, unstarted provider for `config` on `loop`; `resume` names the runtime session to
  // reopen (from a stored persistence handle). kInvalidArgument for an unknown provider name.
  virtual Result<std::unique_ptr<providers::AgentProvider>> Make(
      const api::AgentConfig& config, const std::optional<providers::PersistenceHandle>& resume,
      process::EventLoop& loop) = 0;
  virtual std::vector<std::string> Names() const = 0;
  // OK when an agent of `provider` can be created here; kInvalidArgument for a name not in
  // Names(). A factory may refuse a known name it cannot run (kInvalidArgument too, saying why).
  virtual Status CanRun(const std::string& provider) const;
};

struct AgentManagerOptions {
  // How long a started runtime may take to become ready before a send fails with kUnavailable.
  process::Millis start_timeout{60000};
  // Idle runtimes (no open turn, no client activity) are stopped after this long; the session
  // stays in the log and restarts on the next prompt. Zero: never.
  process::Millis idle_stop_after{0};
  // Attached runtimes. A further start stops the runtime idle the longest to make room (the
  // session stays in the log and reloads on its next prompt), or gets kUnavailable when none is.
  std::size_t max_live_agents = 256;
  // Sends of one session waiting for an answer (for the runtime to start, or for their turn to
  // start); a further send gets kUnavailable.
  std::size_t max_pending_sends = 64;
  // Prompts of one session queued behind its running turn; a further one gets kUnavailable.
  std::size_t max_queued_prompts = 64;
  // Foreign appends (AppendForeign) of one session waiting for the log; a further one gets
  // kUnavailable (the sender retries).
  std::size_t max_pending_foreign = 64;
  // How long stopping a runtime (Close, Rewind, Shutdown, a broken session) waits for its open
  // turns to end after the interrupt and for its appends in flight, before closing the provider
  // anyway (turns still open are then closed by restart recovery when the session next loads).
  process::Millis stop_timeout{10000};
  // This daemon's identity and its agents' ownership leases (lease_keeper.h).
  OwnershipOptions ownership;
  // The steady clock and timers of the manager, its runtimes and its lease keeper (start, idle
  // and stop timeouts, lease renewals and overdue checks); null: the loop's. Must outlive the
  // manager; its Now() is also read on the keeper's thread. The providers keep the loop's.
  process::Timers* timers = nullptr;
};

// What importing a CLI transcript did (AgentManager::Import, docs/import.md).
struct ImportReply {
  enum class Outcome {
    kCreated,    // a new agent
    kAppended,   // the transcript grew since its last import: the rest was imported
    kUnchanged,  // nothing new
    kContinued,  // the agent went on here since its import: the rest is not imported
  };
  api::AgentSnapshot agent;
  Outcome outcome = Outcome::kUnchanged;
  std::size_t events = 0;  // appended by this import
  std::size_t lines = 0;   // read by this import, of which
  std::size_t malformed = 0;
  std::map<std::string, std::size_t> skipped;  // records with no history, by type
  std::uint64_t imported_bytes = 0;            // of the file, imported so far
  std::uint64_t bytes = 0;                     // the file's size
};
std::string_view ImportOutcomeName(ImportReply::Outcome outcome);

// The agent a CLI's transcript is imported as: the same on every import, on every daemon.
SessionId ImportedSessionId(ImportSource source, const std::string& cli_session_id);

class Forwarder;  // forwarder.h

// Whether a command may be forwarded to the agent's owner. A daemon that receives a forwarded
// command answers it itself, or with kMisdirected when yet another daemon owns the agent: forwards
// never chain.
enum class Forwarding { kAllowed, kRefused };

// The longest title an agent may have, in bytes (create and rename).
inline constexpr std::size_t kMaxTitleBytes = 256;

// OK for a title an agent may have (see AgentManager::Rename), else kInvalidArgument saying why.
Status CheckTitle(std::string_view title);

// The session a create with client request id `key` makes: the same id for every retry, on every
// daemon, so the store's own uniqueness makes the create idempotent.
SessionId SessionIdForRequest(const std::string& key);

class AgentManager {
 public:
  // `log`, `factory`, `loop` and `forwarder` (which may be null: commands for an agent another
  // daemon owns then fail with kUnavailable) must outlive the manager; `loop` must be run by one
  // thread (the manager's thread) for as long as the manager exists. Destroy the manager on that
  // thread (or once the loop no longer runs), normally after Shutdown(): calls still queued are
  // dropped, sends and starts still waiting are answered kUnavailable, runtimes are destroyed
  // (their processes killed) and their open turns are closed by restart recovery later.
  AgentManager(EventLog& log, ProviderFactory& factory, process::EventLoop& loop,
               AgentManagerOptions options = {}, Forwarder* forwarder = nullptr);
  ~AgentManager();
  AgentManager(const AgentManager&) = delete;
  AgentManager& operator=(const AgentManager&) = delete;

  // Restart recovery (see the class comment). Call once, before serving; `done` when finished.
  // Touches only sessions whose lease this daemon can take (none another live daemon holds).
  void Recover(StatusCallback done);

  // Creates a session (SessionCreated first), takes its lease and starts its runtime.
  // kInvalidArgument for an unknown provider or a bad config (a cwd that is not an existing
  // directory); kUnavailable when the runtime cannot start (the session then exists, with an Error
  // event saying why). With a client request id, a retry answers the same agent (on any daemon:
  // the id names the session).
  void Create(api::AgentConfig config, Callback<api::AgentSnapshot> done);
  // Sessions ordered by id; closed ones only when `include_closed`.
  void List(bool include_closed, Callback<std::vector<api::AgentSnapshot>> done);
  void Get(const SessionId& id, Callback<api::AgentSnapshot> done);  // kNotFound

  // The commands below run where the agent's runtime runs (docs/architecture.md, "Agent
  // ownership"): here when this daemon holds the agent's lease or can take it (a command that
  // needs the runtime then starts it), else on the owner, through the Forwarder (`forwarding`
  // kRefused: answer kMisdirected instead). An owner that does not answer is waited for until its
  // lease expires (at most the lease's ttl), and the command then runs here.

  // Stops the runtime (open turns are interrupted and end canceled, queued prompts are canceled)
  // and marks the session closed. Its log stays readable; a later send reopens it.
  void Close(const SessionId& id, StatusCallback done,
             Forwarding forwarding = Forwarding::kAllowed);

  // Submits a prompt, once per client message id, (re)starting the runtime when none is attached.
  // kInvalidArgument without a client message id; kNotFound; kUnavailable when the runtime cannot
  // start, or max_pending_sends / max_queued_prompts / max_live_agents would be exceeded. The
  // reply is made once the events of its step are durable (its cursor includes them); a queued
  // prompt is durable (prompt.queued) before it is answered kQueued.
  void Send(const SessionId& id, api::SendRequest request, Callback<api::SendReply> done,
            Forwarding forwarding = Forwarding::kAllowed);
  void CancelQueued(const SessionId& id, std::string client_message_id, StatusCallback done,
                    Forwarding forwarding = Forwarding::kAllowed);
  // Interrupts the foreground turn, else the autonomous ones. OK when nothing runs.
  void Interrupt(const SessionId& id, StatusCallback done,
                 Forwarding forwarding = Forwarding::kAllowed);
  // kNotFound when the request is not pending.
  void ReplyPermission(const SessionId& id, turn::ReplyPermission reply, StatusCallback done,
                       Forwarding forwarding = Forwarding::kAllowed);
  void SetMode(const SessionId& id, std::string mode, StatusCallback done,
               Forwarding forwarding = Forwarding::kAllowed);
  void SetModel(const SessionId& id, std::string model, StatusCallback done,
                Forwarding forwarding = Forwarding::kAllowed);
  // One of the thinking options the agent's capabilities list; recorded as
  // thinking_option.changed.
  void SetThinking(const SessionId& id, std::string option, StatusCallback done,
                   Forwarding forwarding = Forwarding::kAllowed);

  // Records `title` as the agent's title (session.titled, then the stored snapshot), on the
  // runtime when one runs, else under the agent's lease; `done` with the renamed agent, which
  // every watcher is told of (kStatus). An empty title clears it. kInvalidArgument for a title
  // that is not UTF-8 text of at most kMaxTitleBytes bytes without control characters.
  void Rename(const SessionId& id, std::string title, Callback<api::AgentSnapshot> done,
              Forwarding forwarding = Forwarding::kAllowed);

  // Appends events that come from outside the session's runtime (the inbox: a sub-agent's events
  // wrapped as SubagentEvent), on any daemon, whoever runs the session, without starting its
  // runtime. `stamp` makes a redelivery idempotent: a duplicate answers OK with `duplicate` set
  // and appends nothing (EventLog's ProducerStamp rules). kNotFound; kUnavailable when
  // max_pending_foreign appends of the session are in flight or the daemon is stopping; the
  // log's producer errors.
  void AppendForeign(const SessionId& id, std::vector<NewEvent> events, ProducerStamp stamp,
                     Callback<AppendResult> done);

  // A new session whose history is `id`'s prefix through `at` (the epoch must be the
  // current one and the seq must exist). Its runtime starts on the first prompt. Runs on any
  // daemon: it writes only the new session.
  // With `workspace`, the child is that session id, runs in that worktree, and its history
  // records it (workspace.created after session.forked).
  void Fork(const SessionId& id, Cursor at, Callback<api::AgentSnapshot> done,
            std::optional<ForkWorkspace> workspace = std::nullopt);
  // A new epoch of `id` whose history is the prefix through `to`; the runtime restarts.
  void Rewind(const SessionId& id, Cursor to, Callback<api::AgentSnapshot> done,
              Forwarding forwarding = Forwarding::kAllowed);

  // Imports the CLI transcript `file` (CheckTranscriptPath's) of `source` as the agent
  // ImportedSessionId names (transcript_import.h, docs/import.md): a batch of whole lines at a
  // time, each appended atomically with its session.imported event, from where the last import
  // stopped. An agent whose log goes on past its last import is left as it is (kContinued).
  // kConflict when another daemon runs the agent; errors of reading the file and of the log.
  void Import(ImportSource source, TranscriptFile file, Callback<ImportReply> done);

  // The base URL other daemons forward commands to ("http://host:port"), registered with this
  // daemon's id once the server listens.
  void SetAdvertisedUrl(std::string url);

  // Every notice of every agent, until the returned subscription is dropped.
  [[nodiscard]] ListenerRegistration WatchNotices(NoticeWatcher watcher);

  // Stops every runtime (queued prompts stay queued in the log and run when the session next
  // loads; open turns are interrupted and end canceled, "interrupted"), waits for their processes
  // to exit and releases their leases; `done` then. Later calls fail with kUnavailable.
  void Shutdown(std::function<void()> done);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentstream::runtime
