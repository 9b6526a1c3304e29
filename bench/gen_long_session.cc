// gen_long_session: writes one idle agent session of exactly N events into an event log, straight
// through EventLog::Append (no agent runs), for the long-session benchmark (bench/long_session.sh,
// docs/benchmarks.md "Sessions of any length").
//
// The session looks like one the daemon created and ran:
//   - SessionMeta and the first event (session.created) as AgentManager::Create writes them, for
//     provider "scripted", with the status snapshot of an idle, open agent, so a daemon started on
//     the log neither recovers it at start nor treats it as anything but a normal idle agent;
//   - then closed foreground turns of the scripted provider's shape: turn.started (with the
//     prompt's client message id), user.message, assistant.message.start, 10 deltas,
//     assistant.message.end, tool_call.start, tool_call.output, tool_call.end, turn.completed
//     (18 events). The last turn takes the remainder as extra deltas, so the log holds exactly N
//     events and every turn is closed.
// Events go in batches of up to the log's LogLimits (events and bytes), one Append at a time, so
// they land in order. With --durability os (the default) the log does not fsync each commit.
//
//   gen_long_session --data DIR --events N [--store URL] [--durability os|fsync] [--batch N]
//
// Prints `session ID events N turns T seconds S` on success; exits 1 with the log's error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/event_codec.h"
#include "store/log_factory.h"

using namespace agentstream;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t kDeltasPerTurn = 10;
// turn.started, user.message, message start and end, the deltas, three tool-call events and
// turn.completed.
constexpr std::uint64_t kTurnEvents = 8 + kDeltasPerTurn;
constexpr std::uint64_t kMaxEvents = 100'000'000;  // a bound on --events (about 20 GB of log)

// The status snapshot AgentManager::Create stores: EncodeStatusRecord (src/runtime/
// session_records.h, private to the runtime) of an idle, open agent with no model or mode named.
constexpr const char* kIdleStatusSnapshot = R"({"status":"idle","closed":false})";

const char* const kPhrases[] = {
    "Let me look at the failing test first. ",
    "The fixture builds the log in memory, ",
    "so the restart path never reads the file. ",
    "I will change the helper to take a path ",
    "and keep the in-memory case for the unit tests. ",
    "Running the suite again to confirm: ",
    "two of the 48 cases still fail on the cursor, ",
    "because the page starts one seq too late. ",
    "Fixed the off-by-one in the pager's bound. ",
    "All tests pass now; here is the summary. ",
};
constexpr std::uint64_t kPhraseCount = sizeof kPhrases / sizeof kPhrases[0];

std::string Hex16(std::uint64_t v) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(v));
  return buffer;
}

// The events after session.created, one at a time: turn after turn, each closed. Not
// thread-safe. `total` must be 0 or at least kTurnEvents.
class TurnScript {
 public:
  TurnScript(std::uint64_t total, std::uint64_t seed) : remaining_(total), seed_(seed) {}

  bool done() const { return remaining_ == 0; }
  std::uint64_t turns() const { return turns_; }

  // The next event; only while !done().
  NewEvent Next() {
    if (position_ == 0) StartTurn();
    NewEvent event = EventAt(position_);
    --remaining_;
    if (++position_ == turn_events_) position_ = 0;
    return event;
  }

 private:
  void StartTurn() {
    ++turns_;
    const std::string hex = Hex16(seed_ + turns_);
    turn_ = TurnId("turn_" + hex);
    message_ = MessageId("msg_" + hex + "_1");
    call_ = ToolCallId("call_" + hex + "_2");
    client_message_id_ = "cli_" + hex;
    // The last turn absorbs what would not fill another one.
    turn_events_ = remaining_ < 2 * kTurnEvents ? remaining_ : kTurnEvents;
    deltas_ = turn_events_ - 8;
  }

  NewEvent EventAt(std::uint64_t p) const {
    const std::uint64_t n = turns_;
    const std::string file = "src/store/log_" + std::to_string(n % 97) + "_test.cc";
    if (p == 0)
      return MakeNewEvent(TurnStarted{TurnOrigin::kForeground, client_message_id_, {}}, turn_);
    if (p == 1) {
      return MakeNewEvent(
          UserMessage{MessageId("user_" + turn_.str()),
                      client_message_id_,
                      "Turn " + std::to_string(n) + ": the restart test in " + file +
                          " fails after a reopen; find out why and fix it, please.",
                      {}},
          turn_);
    }
    if (p == 2) return MakeNewEvent(AssistantMessageStart{message_, std::nullopt}, turn_);
    if (p < 3 + deltas_) {
      return MakeNewEvent(AssistantMessageDelta{message_, kPhrases[(n + p) % kPhraseCount]}, turn_);
    }
    const std::uint64_t q = p - 3 - deltas_;  // after the deltas
    switch (q) {
      case 0:
        return MakeNewEvent(AssistantMessageEnd{message_, std::string("tool_use")}, turn_);
      case 1:
        return MakeNewEvent(
            ToolCallStart{call_, "Bash", "Run the test",
                          boost::json::object{{"command", "ctest -R " + file}}, std::nullopt},
            turn_);
      case 2:
        return MakeNewEvent(
            ToolCallOutput{call_,
                           "Test project /w/build\n    Start 1: " + file +
                               "\n1/1 Test #1: " + file + " ....   Passed    0.42 sec\n",
                           false},
            turn_);
      case 3:
        return MakeNewEvent(ToolCallEnd{call_,
                                        ToolCallStatus::kCompleted,
                                        std::string("100% tests passed, 0 tests failed out of 1\n"),
                                        false,
                                        {}},
                            turn_);
      default:
        return MakeNewEvent(TurnCompleted{std::string("end_turn")}, turn_);
    }
  }

  std::uint64_t remaining_;
  std::uint64_t seed_;
  std::uint64_t turns_ = 0;
  std::uint64_t position_ = 0;  // within the current turn
  std::uint64_t turn_events_ = 0;
  std::uint64_t deltas_ = 0;
  TurnId turn_;
  MessageId message_;
  ToolCallId call_;
  std::string client_message_id_;
};

// Appends every event of `script` to `session`, batch after batch within `limits`.
// Appends the script in batches of at most `batch` events (and the log's limits).
Status AppendAll(EventLog& log, const SessionId& session, const LogLimits& limits,
                 std::size_t batch, TurnScript& script) {
  const std::size_t max_events = std::min(batch, limits.max_batch_events);
  while (!script.done()) {
    AppendRequest request;
    request.session = session;
    std::size_t bytes = 0;
    while (!script.done() && request.events.size() < max_events) {
      NewEvent event = script.Next();
      bytes += event.payload.size();
      request.events.push_back(std::move(event));
      // Every event here is far below a batch's byte limit: stop one event short of it.
      if (bytes + limits.max_payload_bytes > limits.max_batch_bytes) break;
    }
    Result<AppendResult> appended = log.Append(std::move(request));
    if (!appended.ok()) return appended.status();
  }
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gen_long_session: one idle agent session of N events, for bench/long_session.sh"};
  std::string data_dir;
  std::string store;
  std::uint64_t events = 1000;
  std::string durability = "os";
  std::string cwd = "/w";
  std::size_t batch = LogLimits{}.max_batch_events;
  app.add_option("--data", data_dir,
                 "the daemon's data directory: the log is DIR/agentstream.db, as `agentstream "
                 "--data DIR serve` opens it")
      ->required();
  app.add_option("--store", store, "a store URL (postgresql://...) instead of SQLite in --data");
  app.add_option("--events", events, "events in the session, session.created included")
      ->check(CLI::Range(1 + kTurnEvents, kMaxEvents));
  app.add_option("--durability", durability, "os (no fsync per commit) or fsync")
      ->check(CLI::IsMember({"fsync", "os"}));
  app.add_option("--cwd", cwd, "the agent's working directory");
  app.add_option("--batch", batch,
                 "events per append, so per stored batch (a daemon's commits hold a few)")
      ->check(CLI::Range(std::size_t{1}, LogLimits{}.max_batch_events))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::filesystem::create_directories(data_dir);
  StoreConfig config;
  config.url = store.empty() ? "sqlite:" + data_dir + "/agentstream.db" : store;
  config.durability = durability == "os" ? Durability::kOs : Durability::kFsync;
  const auto start = Clock::now();
  Result<std::unique_ptr<EventLog>> opened = OpenEventLog(config);
  if (!opened.ok()) {
    std::fprintf(stderr, "gen_long_session: open: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  EventLog& log = **opened;

  std::random_device random;
  const std::uint64_t seed = (std::uint64_t{random()} << 32) ^ random();
  const SessionId session("ses_" + Hex16(seed));
  SessionMeta meta{"scripted", cwd, "", 0, "", kIdleStatusSnapshot};
  Result<AppendResult> created = log.CreateSession(
      session, std::move(meta),
      {MakeNewEvent(SessionCreated{"scripted", cwd, std::nullopt, std::nullopt, std::nullopt})});
  if (!created.ok()) {
    std::fprintf(stderr, "gen_long_session: create: %s\n", created.status().ToString().c_str());
    return 1;
  }
  TurnScript script(events - 1, seed);
  if (Status s = AppendAll(log, session, config.limits, batch, script); !s.ok()) {
    std::fprintf(stderr, "gen_long_session: append: %s\n", s.ToString().c_str());
    return 1;
  }
  Result<Cursor> tail = log.Tail(session);
  if (!tail.ok() || tail->seq.value() != events) {
    std::fprintf(stderr, "gen_long_session: the log's tail is not seq %llu\n",
                 static_cast<unsigned long long>(events));
    return 1;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("session %s events %llu turns %llu seconds %.2f\n", session.str().c_str(),
              static_cast<unsigned long long>(events),
              static_cast<unsigned long long>(script.turns()), seconds);
  return 0;
}
