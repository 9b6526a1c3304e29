#include "cli/demo.h"

#include <fmt/core.h>
#include <boost/json/serialize.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/event_codec.h"
#include "store/log_factory.h"
#include "system/random_id.h"

namespace agentstream::cli {

namespace {

std::string RandomId(const char* prefix) { return system::RandomId(prefix, 12); }

// Prints one committed event as a line a person can read.
void PrintEvent(const EventRecord& record, bool json) {
  if (json) {
    fmt::print("{}\n", EncodeEnvelope(record));
    return;
  }
  auto event = DecodeRecord(record);
  if (!event.ok()) {
    fmt::print("{:>5}  ! {}\n", record.seq.value(), event.status().ToString());
    return;
  }
  std::string detail;
  std::visit(
      [&](const auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, UserMessage>)
          detail = "user: " + p.text;
        else if constexpr (std::is_same_v<T, AssistantMessageDelta>)
          detail = "\"" + p.text + "\"";
        else if constexpr (std::is_same_v<T, ToolCallStart>)
          detail = p.name + " " + boost::json::serialize(p.input);
        else if constexpr (std::is_same_v<T, ToolCallOutput>)
          detail = p.text;
        else if constexpr (std::is_same_v<T, TurnStarted>)
          detail = p.origin == TurnOrigin::kForeground ? "foreground" : "autonomous";
        else if constexpr (std::is_same_v<T, SessionCreated>)
          detail = p.provider + " in " + p.cwd;
      },
      event->payload);
  fmt::print("{:>5}  {:<24} {:<10} {}\n", record.seq.value(), EventKindName(event->kind()),
             record.turn ? record.turn->str().substr(0, 10) : "", detail);
  std::fflush(stdout);
}

// Plays a few scripted turns into `session`, each event appended durably.
Status PlayScript(EventLog& log, const SessionId& session, const DemoOptions& options) {
  auto append = [&](const Payload& payload, const std::optional<TurnId>& turn) -> Status {
    AppendRequest request{
        session, std::nullopt, std::nullopt, std::nullopt, {MakeNewEvent(payload, turn)}};
    return log.Append(std::move(request)).status();
  };
  const char* prompts[] = {"List the files in this directory", "Summarize the README",
                           "Write a haiku about logs"};
  for (int t = 0; t < options.turns; ++t) {
    const TurnId turn(RandomId("turn"));
    const std::string client_id = RandomId("cm");
    const char* prompt = prompts[t % 3];
    AS_RETURN_IF_ERROR(append(TurnStarted{TurnOrigin::kForeground, client_id, std::nullopt}, turn));
    AS_RETURN_IF_ERROR(
        append(UserMessage{MessageId(RandomId("msg")), client_id, prompt, {}}, turn));
    const ToolCallId call(RandomId("call"));
    AS_RETURN_IF_ERROR(append(
        ToolCallStart{call, "shell", "ls", boost::json::object{{"command", "ls"}}, std::nullopt},
        turn));
    AS_RETURN_IF_ERROR(append(ToolCallOutput{call, "README.md\nsrc\ntests\n", false}, turn));
    AS_RETURN_IF_ERROR(append(
        ToolCallEnd{call, ToolCallStatus::kCompleted, std::nullopt, false, std::nullopt}, turn));
    const MessageId reply(RandomId("msg"));
    AS_RETURN_IF_ERROR(append(AssistantMessageStart{reply, std::nullopt}, turn));
    for (const char* word :
         {"Here ", "is ", "what ", "I ", "found: ", "a ", "small ", "project."}) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options.delay_ms));
      AS_RETURN_IF_ERROR(append(AssistantMessageDelta{reply, word}, turn));
    }
    AS_RETURN_IF_ERROR(append(AssistantMessageEnd{reply, "end_turn"}, turn));
    if (options.stop_mid_turn && t + 1 == options.turns) break;
    AS_RETURN_IF_ERROR(append(Usage{1200, 85, 0, 0, std::nullopt}, turn));
    AS_RETURN_IF_ERROR(append(TurnCompleted{"end_turn"}, turn));
  }
  return Status::Ok();
}

}  // namespace

int RunDemo(const DemoOptions& options) {
  auto opened = OpenEventLog(StoreConfig{options.store_url});
  if (!opened.ok()) {
    fmt::print(stderr, "agentstream: cannot open the store: {}\n", opened.status().ToString());
    return 1;
  }
  EventLog& log = **opened;
  const SessionId session(RandomId("ses"));
  fmt::print("store: {}\nsession: {}\n\n", options.store_url, session.str());

  // The follower: wakes on every commit and prints what it has not printed yet.
  std::mutex mu;
  std::condition_variable cv;
  bool dirty = false;
  std::atomic<bool> done{false};
  ListenerRegistration sub = log.SubscribeCommits([&](const CommitNotice& notice) {
    if (notice.session != session) return;
    std::lock_guard lock(mu);
    dirty = true;
    cv.notify_one();
  });
  std::thread follower([&] {
    Seq next(1);
    while (true) {
      {
        std::unique_lock lock(mu);
        cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return dirty || done.load(); });
        dirty = false;
      }
      while (true) {
        auto page = log.Read(
            ReadRequest{session, std::nullopt, ReadDirection::kForward, next, 100, 1 << 20});
        if (!page.ok() || page->events.empty()) break;
        for (const auto& record : page->events) PrintEvent(record, options.json);
        next = page->events.back().seq.next();
      }
      if (done.load()) {
        auto tail = log.Tail(session);
        if (!tail.ok() || next > tail->seq) break;
      }
    }
  });

  Status played =
      log.CreateSession(session, SessionMeta{"scripted", "/demo", "demo session"},
                        {MakeNewEvent(SessionCreated{"scripted", "/demo", "demo session",
                                                     std::nullopt, std::nullopt})})
          .status();
  if (played.ok()) played = PlayScript(log, session, options);
  done = true;
  cv.notify_one();
  follower.join();
  sub.Reset();
  if (!played.ok()) {
    fmt::print(stderr, "agentstream: demo failed: {}\n", played.ToString());
    return 1;
  }
  auto tail = log.Tail(session);
  fmt::print("\n{} events committed to session {} (cursor {})\n", tail.ok() ? tail->seq.value() : 0,
             session.str(), tail.ok() ? FormatCursor(*tail) : "?");
  return 0;
}

}  // namespace agentstream::cli
