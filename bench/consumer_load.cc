// consumer_load: durable-consumer delivery to a local webhook receiver (docs/benchmarks.md).
//
// 1. Throughput: S sessions with E events each on a SQLite log; a webhook consumer drains the
//    backlog; events/s from Create to every position at its tail.
// 2. Coalescing: one session 100,000 events behind, made of agent turns (message deltas, tool
//    output chunks); deliveries per log event with coalescing on and off.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "consumers/consumer_service.h"
#include "store/sqlite/sqlite_log.h"

using namespace agentstream;
using Clock = std::chrono::steady_clock;

namespace {

struct Receiver {
  pid_t pid = -1;
  std::string port;
};

Receiver StartReceiver(const std::string& path, const std::string& delay_ms) {
  int out[2];
  if (::pipe(out) != 0) std::abort();
  Receiver r;
  r.pid = ::fork();
  if (r.pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::close(out[1]);
    ::execl(path.c_str(), path.c_str(), "--secret", "bench", "--delay-ms", delay_ms.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  FILE* f = ::fdopen(out[0], "r");
  char buf[64] = {};
  if (::fgets(buf, sizeof buf, f) == nullptr) {
    std::cerr << "the receiver did not start\n";
    std::exit(1);
  }
  r.port = std::string(buf + 5);
  while (!r.port.empty() && r.port.back() == '\n') r.port.pop_back();
  return r;
}

struct Run {
  double seconds = 0;
  std::uint64_t deliveries = 0, events = 0;
};

Run Drain(EventLog& log, const std::string& url, const std::string& id, bool coalesce,
          std::size_t max_events, int workers) {
  consumers::ConsumerServiceOptions options;
  options.owner = "bench";
  options.workers = workers;
  options.idle_poll_ms = 100;
  options.max_delivery_events = max_events;
  consumers::ConsumerService service(log, options, nullptr);
  if (!service.Start().ok()) std::exit(1);
  consumers::ConsumerSpec spec;
  spec.id = ConsumerId(id);
  spec.sink.url = url;
  spec.sink.secret = "bench";
  spec.coalesce = coalesce;
  const auto start = Clock::now();
  if (!service.Create(spec).ok()) std::exit(1);
  while (true) {
    auto st = service.Get(spec.id);
    if (!st.ok()) std::exit(1);
    bool done = !st->sessions.empty();
    for (const auto& p : st->sessions)
      done = done && p.position == p.tail && p.tail.seq.value() > 0;
    if (done) {
      Run r;
      r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      r.deliveries = st->deliveries;
      r.events = st->events_delivered;
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

NewEvent Ev(const Payload& p) { return MakeNewEvent(p, TurnId("t")); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"durable consumer delivery benchmark"};
  std::string receiver_path = "build/release/src/consumers/webhook_receiver";
  std::string dir = "/tmp/agentstream-consumer-load";
  int sessions = 10, events = 10000, single_events = 200, workers = 4;
  std::size_t behind = 100000;
  app.add_option("--receiver", receiver_path, "webhook_receiver binary");
  app.add_option("--dir", dir, "scratch directory for the SQLite logs");
  app.add_option("--sessions", sessions);
  app.add_option("--events", events, "events per session, batched deliveries");
  app.add_option("--single-events", single_events, "events per session, one event per delivery");
  app.add_option("--workers", workers);
  app.add_option("--behind", behind, "events of the coalescing run");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Receiver receiver = StartReceiver(receiver_path, "0");
  const std::string url = "http://127.0.0.1:" + receiver.port + "/hook";

  // Deliveries of at most `per` events, over `sessions` sessions of `count` events each.
  auto throughput = [&](const std::string& name, int count, std::size_t per) {
    SqliteLogOptions options;
    options.path = dir + "/" + name + ".db";
    auto log = OpenSqliteEventLog(options);
    if (!log.ok()) std::exit(1);
    for (int s = 0; s < sessions; ++s) {
      const SessionId id("s" + std::to_string(s));
      if (!(*log)->CreateSession(id, {"bench", "/", id.str()}, {}).ok()) std::exit(1);
      for (int done = 0; done < count;) {
        AppendRequest r;
        r.session = id;
        for (int i = 0; i < 1000 && done < count; ++i, ++done)
          r.events.push_back(
              MakeNewEvent(Notice{NoticeLevel::kInfo, "event " + std::to_string(done)}));
        if (!(*log)->Append(std::move(r)).ok()) std::exit(1);
      }
    }
    Run r = Drain(**log, url, name, false, per, workers);
    std::printf(
        "throughput: %d sessions x %d events, at most %zu events/delivery, %d workers: %.0f "
        "events/s, %.0f deliveries/s (%llu deliveries, %.2f s)\n",
        sessions, count, per, workers, static_cast<double>(r.events) / r.seconds,
        static_cast<double>(r.deliveries) / r.seconds,
        static_cast<unsigned long long>(r.deliveries), r.seconds);
  };
  throughput("batched", events, 500);
  throughput("single", single_events, 1);
  {
    SqliteLogOptions options;
    options.path = dir + "/coalesce.db";
    auto log = OpenSqliteEventLog(options);
    if (!log.ok()) return 1;
    const SessionId id("behind");
    if (!(*log)->CreateSession(id, {"bench", "/", "behind"}, {}).ok()) return 1;
    // Turns of: start, 1 message of 200 deltas, 1 tool call with 50 output chunks, end.
    std::size_t written = 0;
    for (int turn = 0; written < behind; ++turn) {
      AppendRequest r;
      r.session = id;
      const MessageId m("m" + std::to_string(turn));
      const ToolCallId c("c" + std::to_string(turn));
      r.events.push_back(Ev(TurnStarted{}));
      r.events.push_back(Ev(AssistantMessageStart{m, std::nullopt}));
      for (int i = 0; i < 200; ++i) r.events.push_back(Ev(AssistantMessageDelta{m, "token "}));
      r.events.push_back(Ev(AssistantMessageEnd{m, std::nullopt}));
      r.events.push_back(Ev(ToolCallStart{c, "bash", std::nullopt, boost::json::object{}, m}));
      for (int i = 0; i < 50; ++i) r.events.push_back(Ev(ToolCallOutput{c, "line\n", false}));
      r.events.push_back(
          Ev(ToolCallEnd{c, ToolCallStatus::kCompleted, std::nullopt, false, std::nullopt}));
      r.events.push_back(Ev(TurnCompleted{}));
      if (written + r.events.size() > behind) r.events.resize(behind - written);
      written += r.events.size();
      if (!(*log)->Append(std::move(r)).ok()) return 1;
    }
    for (bool coalesce : {true, false}) {
      Run r = Drain(**log, url, coalesce ? "coalesced" : "plain", coalesce, 500, workers);
      std::printf(
          "coalescing %s: %zu events behind -> %llu deliveries, %.5f deliveries/event, "
          "%.2f s\n",
          coalesce ? "on " : "off", written, static_cast<unsigned long long>(r.deliveries),
          static_cast<double>(r.deliveries) / static_cast<double>(written), r.seconds);
    }
  }
  ::kill(receiver.pid, SIGKILL);
  ::waitpid(receiver.pid, nullptr, 0);
  std::filesystem::remove_all(dir);
  return 0;
}
