// libFuzzer target: the messages a browser sends over the WebSocket app protocol
// (server/ws_app.h: WsApp::OnMessage; docs/protocol.md), against a real in-process daemon: a
// MemoryEventLog, an AgentManager with the daemon's provider factory (the `scripted` agent, its
// chunks 0 ms apart), the hub, the timeline service and the metrics, all driven by one EventLoop
// on the fuzzing thread (the app's strand, the hub's executor and the manager's thread at once).
//
// Input: byte 0 chooses a scenario (its value mod 4) played through OnMessage first: 0 nothing;
// 1 an agent is created with clientRequestId "fuzz", so its id is fixed
// (runtime::SessionIdForRequest("fuzz") = ses_c1b12493f1ffff62) and later messages can name it;
// 2 that agent also runs one turn to its end; 3 it is also subscribed from 1:0. The rest is split
// at '\n' into at most 32 messages of at most 4 KiB, each given to OnMessage; then the loop runs
// until every message with a non-empty string id has had its reply (10 s at most, else abort),
// and until nothing more happens (no new frame and no commit over two empty loop rounds, at most
// 200 rounds).
//
// Checked (std::abort on a violation):
// - every frame is a JSON object with a string "type"; an events frame's envelopes are the
//   frame's agent and epoch, with seqs running from its "from" to its "to";
// - a message that is not JSON, not an object, or of an unknown type is answered, at once, by
//   exactly one frame: an error carrying the message's id when it had a non-empty string id, no
//   id otherwise; so is a message that carries a body of the HTTP API (agents.create, send,
//   permission.reply, mode.set, model.set, agents.rename, fork, rewind) with a member that body
//   and the envelope ("type", "id", "agent") do not define, or a search or agents.list with a
//   member of the wrong type (RefusedMembers);
// - every non-empty string id gets exactly as many frames carrying it as messages had it;
// - after the manager shut down (which ends every open turn), every session's every epoch reads
//   back, each record decodes (DecodeRecord), seqs are dense from 1, and the turn invariants hold
//   (timeline/invariants.h; a replaced epoch may end inside a turn);
// - bounded: at most 8 frames per message other than events frames (a reply, and the agent
//   notices a command causes), and at most 2 x (subscribes + 1) x (events + epochs in the log)
//   events frames (a replay sends at least one event per frame, live delivery at most one frame
//   per commit).
//
// The whole stack is made anew for every input, which keeps inputs independent of each other (no
// agents, history or log growth left by earlier ones). It is cheap next to the messages' own
// work: under ASan an input of one hello takes about 5 ms with its stack, one that runs a turn
// 50 to 150 ms, so reusing the stack would not make the target notably faster.
#include <algorithm>
#include <boost/json/parse.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_codec.h"
#include "core/timeline/invariants.h"
#include "fuzz_check.h"
#include "process/event_loop.h"
#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "runtime/testing/loop_wait.h"
#include "server/hub.h"
#include "server/metrics.h"
#include "server/testing/recording_ws_output.h"
#include "server/ws_app.h"
#include "store/memory_log.h"
#include "timeline/timeline_service.h"

namespace agentstream::server {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using fuzzing::Check;

constexpr std::size_t kMaxMessages = 32;
constexpr std::size_t kMaxMessageBytes = 4096;
constexpr std::size_t kFramesPerMessage = 8;
constexpr int kMaxSettleRounds = 200;
constexpr char kSeedRequest[] = "fuzz";

const std::vector<std::string_view>& KnownTypes() {
  static const std::vector<std::string_view> kTypes = {
      "hello",     "agents.list",      "agents.create", "agents.close", "agents.rename",  "send",
      "interrupt", "permission.reply", "mode.set",      "model.set",    "timeline.fetch", "search",
      "subscribe", "unsubscribe",      "heartbeat",     "fork",         "rewind"};
  return kTypes;
}

runtime::ProviderFactoryOptions FactoryOptions() {
  runtime::ProviderFactoryOptions options;
  options.scripted_chunk_gap = 0ms;
  return options;
}

runtime::AgentManagerOptions ManagerOptions() {
  runtime::AgentManagerOptions options;
  options.stop_timeout = 1000ms;
  return options;
}

// The daemon's side of one connection, single-threaded on `loop`.
struct Stack {
  MemoryEventLog log;
  process::EventLoop loop;
  runtime::DefaultProviderFactory factory{FactoryOptions()};
  runtime::AgentManager manager{log, factory, loop, ManagerOptions()};
  TimelineService timeline{log};
  Hub hub{log, [this](std::function<void()> fn) { loop.Post(std::move(fn)); }};
  Metrics metrics;
};

// What a message is, as the harness reads it.
struct Expectation {
  bool refused = false;  // not JSON, not an object, of an unknown type, or RefusedMembers
  std::string id;        // its string id ("" when none)
  std::string type;      // its string type ("" when none)
};

// The members of the messages that carry a body of the HTTP API, beside "type", "id" and
// "agent" (docs/protocol.md): any other member is refused at once.
using Members = std::vector<std::string_view>;
const std::map<std::string_view, Members>& StrictMembers() {
  static const std::map<std::string_view, Members> kMembers = {
      {"send", {"text", "clientMessageId", "attachments", "whileRunning"}},
      {"permission.reply", {"requestId", "decision", "optionId", "message"}},
      {"mode.set", {"mode"}},
      {"model.set", {"model"}},
      {"agents.rename", {"title"}},
      {"fork", {"cursor"}},
      {"rewind", {"cursor"}}};
  return kMembers;
}
const Members kEnvelope = {"type", "id", "agent"};
const Members kConfigMembers = {"provider",        "cwd",     "model", "mode", "title",
                                "clientRequestId", "worktree"};

// Whether `value`, when an object, has a member outside `a` and `b`.
bool HasUnknown(const json::value* value, const Members& a, const Members& b = {}) {
  if (value == nullptr || !value->is_object()) return false;
  for (const auto& member : value->get_object()) {
    const std::string_view key = member.key();
    if (std::find(a.begin(), a.end(), key) == a.end() &&
        std::find(b.begin(), b.end(), key) == b.end())
      return true;
  }
  return false;
}

// Whether the app must refuse `msg` (of a known type) at once for a member it does not define or
// of the wrong type (docs/protocol.md, "WebSocket app protocol").
bool RefusedMembers(const json::object& msg, const std::string& type) {
  const json::value whole(msg);
  if (auto it = StrictMembers().find(type); it != StrictMembers().end()) {
    if (HasUnknown(&whole, it->second, kEnvelope)) return true;
    if (const json::value* a = msg.if_contains("attachments"); a != nullptr && a->is_array()) {
      for (const json::value& item : a->get_array())
        if (HasUnknown(&item, {"kind", "mimeType", "name", "uri", "data"})) return true;
    }
    return false;
  }
  if (type == "agents.create") {
    const json::value* config = msg.if_contains("agent");
    if (config != nullptr && HasUnknown(&whole, kEnvelope)) return true;
    if (config == nullptr) config = &whole;
    if (HasUnknown(config, kConfigMembers, config == &whole ? Members{"type", "id"} : Members{}))
      return true;
    const json::value* tree =
        config->is_object() ? config->get_object().if_contains("worktree") : nullptr;
    return HasUnknown(tree, {"branch", "base"});
  }
  const auto wrong = [&msg](std::string_view name, bool (json::value::*is)() const noexcept) {
    const json::value* v = msg.if_contains(name);
    return v != nullptr && !v->is_null() && !(v->*is)();
  };
  const auto not_integer = [&msg](std::string_view name) {
    const json::value* v = msg.if_contains(name);
    return v != nullptr && !v->is_null() && !v->is_int64() && !v->is_uint64();
  };
  if (type == "search")
    return wrong("agent", &json::value::is_string) || wrong("q", &json::value::is_string) ||
           not_integer("limit");
  if (type == "timeline.fetch")
    return wrong("direction", &json::value::is_string) ||
           wrong("cursor", &json::value::is_string) || not_integer("limit") ||
           not_integer("maxBytes");
  if (type == "agents.list") return wrong("includeClosed", &json::value::is_bool);
  return false;
}

Expectation Classify(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return {true, "", ""};
  const json::object& msg = v.get_object();
  Expectation e;
  if (const json::value* id = msg.if_contains("id"); id != nullptr && id->is_string())
    e.id = std::string(id->get_string());
  const json::value* type = msg.if_contains("type");
  if (type != nullptr && type->is_string()) e.type = std::string(type->get_string());
  e.refused = true;
  for (std::string_view known : KnownTypes()) e.refused &= e.type != known;
  e.refused = e.refused || RefusedMembers(msg, e.type);
  return e;
}

std::string IdOf(const json::object& frame) {
  const json::value* id = frame.if_contains("id");
  return id != nullptr && id->is_string() ? std::string(id->get_string()) : "";
}

json::object ParseFrame(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  Check(!ec && v.is_object());
  Check(v.get_object().if_contains("type") != nullptr && v.at("type").is_string());
  return std::move(v.get_object());
}

void CheckEventsFrame(const json::object& frame) {
  const json::value* agent = frame.if_contains("agent");
  const json::value* events = frame.if_contains("events");
  Check(agent != nullptr && agent->is_string() && events != nullptr && events->is_array());
  Cursor from, to;
  Check(ParseCursor(std::string(frame.at("from").as_string()), &from));
  Check(ParseCursor(std::string(frame.at("to").as_string()), &to));
  std::uint64_t seq = from.seq.value();
  for (const json::value& e : events->get_array()) {
    Check(e.is_object() && e.at("session") == *agent);
    Check(e.at("epoch").to_number<std::uint64_t>() == from.epoch.value());
    Check(e.at("seq").to_number<std::uint64_t>() == seq++);
  }
  if (!events->get_array().empty()) Check(seq == to.seq.value() + 1);
}

// Every session's every epoch decodes, is dense from 1 and keeps the turn invariants.
// Returns the events and epochs in the log.
std::size_t CheckLog(EventLog& log) {
  auto sessions = log.ListSessions("", 1 << 20);
  Check(sessions.ok());
  std::size_t total = 0;
  for (const SessionInfo& info : *sessions) {
    for (std::uint64_t epoch = 1; epoch <= info.epoch.value(); ++epoch) {
      std::vector<Event> events;
      ReadRequest request{info.id, Epoch(epoch), ReadDirection::kForward, Seq(1), 1000};
      for (bool more = true; more;) {
        auto read = log.Read(request);
        Check(read.ok());
        for (const EventRecord& record : read->events) {
          auto event = DecodeRecord(record);
          Check(event.ok());
          Check(event->seq.value() == events.size() + 1);
          events.push_back(std::move(*event));
        }
        more = read->has_newer && !read->events.empty();
        request.from = Seq(events.size() + 1);
      }
      timeline::CheckOptions options;
      options.allow_open_turns_at_tail = epoch != info.epoch.value();
      std::vector<timeline::Violation> violations;
      for (timeline::Violation& v : timeline::CheckInvariants(events, options))
        violations.push_back(std::move(v));
      for (const auto& v : violations)
        std::fprintf(stderr, "%s epoch %llu: %s\n", info.id.str().c_str(),
                     static_cast<unsigned long long>(epoch), timeline::FormatViolation(v).c_str());
      Check(violations.empty());
      total += events.size() + 1;
    }
  }
  return total;
}

class Connection {
 public:
  explicit Connection(Stack& stack) : stack_(stack) {
    WsLimits limits;
    limits.unsubscribe_grace = 1ms;  // lets grace periods end within a run
    Poster post = [loop = &stack.loop, alive = alive_](std::function<void()> fn) {
      if (!*alive) return;
      loop->Post([alive, fn = std::move(fn)] {
        if (*alive) fn();
      });
    };
    app_ = std::make_shared<WsApp>(stack.manager, stack.log, stack.timeline, stack.hub,
                                   stack.metrics, out_, std::move(post), limits);
    app_->Start();
  }
  ~Connection() {
    app_->Shutdown();
    *alive_ = false;
  }

  // Gives `text` to the app and checks what it answers at once.
  void Send(std::string_view text) {
    const Expectation e = Classify(text);
    if (!e.id.empty()) ++expected_[e.id];
    subscribes_ += e.type == "subscribe";
    ++messages_;
    const std::size_t before = out_.frames.size();
    app_->OnMessage(text);
    if (!e.refused) return;
    Check(out_.frames.size() == before + 1);
    const json::object frame = ParseFrame(out_.frames.back());
    Check(frame.at("type") == "error" && IdOf(frame) == e.id);
    Check(!e.id.empty() || !frame.contains("id"));
  }

  // Runs the loop until every id has its reply, then until nothing more happens.
  void Settle() {
    Check(stack_.loop.RunUntil([this] { return Answered(); }, 10s));
    int quiet = 0;
    for (int round = 0; round < kMaxSettleRounds && quiet < 2; ++round) {
      const std::size_t frames = out_.frames.size();
      const std::uint64_t commits = stack_.log.Stats().commits;
      bool ran = false;
      stack_.loop.Post([&ran] { ran = true; });
      Check(stack_.loop.RunUntil([&ran] { return ran; }, 10s));
      quiet = frames == out_.frames.size() && commits == stack_.log.Stats().commits ? quiet + 1 : 0;
    }
  }

  // Every frame is well-formed and within the bound; every id was answered exactly once per use.
  void CheckFrames(std::size_t log_events) {
    std::map<std::string, std::size_t> replies;
    std::size_t events_frames = 0;
    for (const std::string& text : out_.frames) {
      const json::object frame = ParseFrame(text);
      if (frame.at("type") == "events") {
        ++events_frames;
        CheckEventsFrame(frame);
      }
      if (const std::string id = IdOf(frame); !id.empty()) ++replies[id];
    }
    Check(replies == expected_);
    Check(out_.frames.size() - events_frames <= kFramesPerMessage * messages_);
    Check(events_frames <= 2 * (subscribes_ + 1) * log_events);
  }

 private:
  bool Answered() const {
    std::map<std::string, std::size_t> replies;
    for (const std::string& text : out_.frames) {
      boost::system::error_code ec;
      json::value v = json::parse(text, ec);
      if (!ec && v.is_object())
        if (const std::string id = IdOf(v.get_object()); !id.empty()) ++replies[id];
    }
    for (const auto& [id, n] : expected_)
      if (replies[id] < n) return false;
    return true;
  }

  Stack& stack_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  testing::RecordingWsOutput out_{
      /*written=*/true, [this](std::chrono::milliseconds delay, std::function<void()> fn) {
        timers_.push_back(stack_.loop.timers().After(delay, std::move(fn)));
      }};
  std::vector<std::unique_ptr<process::TimerHandle>> timers_;
  std::shared_ptr<WsApp> app_;
  std::map<std::string, std::size_t> expected_;
  std::size_t messages_ = 0;
  std::size_t subscribes_ = 0;
};

// The scenario's messages (see the file comment).
std::vector<std::string> Scenario(std::uint8_t choice) {
  const std::string agent = runtime::SessionIdForRequest(kSeedRequest).str();
  std::vector<std::string> out;
  if (choice >= 1)
    out.push_back(R"({"type":"agents.create","id":"seed.create","agent":{"provider":"scripted",)"
                  R"("cwd":"/tmp","clientRequestId":")" +
                  std::string(kSeedRequest) + R"("}})");
  if (choice >= 2)
    out.push_back(R"({"type":"send","id":"seed.send","agent":")" + agent +
                  R"(","text":"hello","clientMessageId":"seed"})");
  if (choice >= 3)
    out.push_back(R"({"type":"subscribe","id":"seed.subscribe","agent":")" + agent +
                  R"(","cursor":"1:0"})");
  return out;
}

void ShutDown(Stack& stack) {
  bool done = false;
  stack.manager.Shutdown([&done] { done = true; });
  Check(stack.loop.RunUntil([&done] { return done; }, 20s));
  stack.hub.Stop();
}

void RunOne(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  std::vector<std::string_view> messages;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  while (!rest.empty() && messages.size() < kMaxMessages) {
    const std::size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    messages.push_back(line.substr(0, kMaxMessageBytes));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }

  auto stack = std::make_unique<Stack>();
  {
    Connection connection(*stack);
    for (const std::string& seed : Scenario(data[0] % 4)) {
      connection.Send(seed);
      connection.Settle();
    }
    for (std::string_view message : messages) connection.Send(message);
    connection.Settle();
    ShutDown(*stack);
    connection.CheckFrames(CheckLog(stack->log));
  }
}

}  // namespace
}  // namespace agentstream::server

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  agentstream::server::RunOne(data, size);
  return 0;
}
