// The sinks against real peers: a webhook receiver process (signatures, failures, kill -9 of the
// delivering process), a command's stdin, a JSONL file.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "consumers/consumer_service.h"
#include "consumers/sinks.h"
#include "store/memory_log.h"
#include "store/sqlite/sqlite_log.h"
#include "store/testing/events.h"
#include "testing/eventually.h"
#include "testing/temp_dir.h"

namespace agentstream::consumers {
namespace {

using agentstream::testing::Note;
using test_support::Eventually;

namespace json = boost::json;
using namespace std::chrono_literals;

// A child process whose stdout we read line by line.
class Proc {
 public:
  explicit Proc(std::vector<std::string> argv) {
    int out[2];
    EXPECT_EQ(::pipe(out), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(out[1]);
    out_ = ::fdopen(out[0], "r");
  }
  ~Proc() {
    Kill(SIGKILL);
    if (out_ != nullptr) ::fclose(out_);
  }
  // The next stdout line, or "" at end of file.
  std::string Line() {
    char buf[4096];
    if (::fgets(buf, sizeof buf, out_) == nullptr) return "";
    std::string line(buf);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    return line;
  }
  void Kill(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
};

std::vector<std::vector<std::string>> ReadLines(const std::string& path) {
  std::vector<std::vector<std::string>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> row;
    std::string f;
    while (fields >> f) row.push_back(f);
    out.push_back(std::move(row));
  }
  return out;
}

// Effects per session: every seq in 1..n covered exactly once, in order.
void ExpectEachEventOnce(const std::vector<std::vector<std::string>>& effects,
                         const std::map<std::string, std::uint64_t>& tails) {
  std::map<std::string, std::uint64_t> through;
  std::set<std::string> keys;
  for (const auto& row : effects) {
    ASSERT_GE(row.size(), 5u);
    EXPECT_TRUE(keys.insert(row[0]).second) << "side effect twice for " << row[0];
    const std::uint64_t start = std::stoull(row[3]), end = std::stoull(row[4]);
    EXPECT_EQ(start, through[row[1]] + 1) << "gap or overlap in " << row[1];
    through[row[1]] = end;
  }
  for (const auto& [session, tail] : tails) EXPECT_EQ(through[session], tail) << session;
}

TEST(WebhookSink, SignsRetriesAndDeliversEverythingOnce) {
  const test_support::TempDir temp("webhook");
  const std::string& dir = temp.path();
  Proc receiver({WEBHOOK_RECEIVER, "--secret", "s3cret-key", "--effects", dir + "/effects",
                 "--requests", dir + "/requests", "--fail", "3"});
  const std::string port = receiver.Line().substr(5);
  ASSERT_FALSE(port.empty());
  MemoryEventLog log;
  std::map<std::string, std::uint64_t> tails;
  for (const char* id : {"a", "b"}) {
    ASSERT_TRUE(log.CreateSession(SessionId(id), {"p", "/", id}, {Note("0")}).ok());
    for (int i = 1; i <= 20; ++i) {
      AppendRequest r;
      r.session = SessionId(id);
      r.events = {Note(std::to_string(i))};
      ASSERT_TRUE(log.Append(std::move(r)).ok());
    }
    tails[id] = 21;
  }
  ConsumerServiceOptions options;
  options.owner = "t";
  options.idle_poll_ms = 50;
  options.rescan_ms = 200;
  ConsumerService service(log, options, nullptr);
  ASSERT_TRUE(service.Start().ok());
  ConsumerSpec spec;
  spec.id = ConsumerId("hook");
  spec.sink.url = "http://127.0.0.1:" + port + "/hook";
  spec.sink.secret = "s3cret-key";
  spec.sink.headers = {{"X-Team", "infra"}};
  spec.retry = RetryPolicy{10, 10, 50};
  spec.coalesce = false;
  ASSERT_TRUE(service.Create(spec).ok());
  ASSERT_TRUE(Eventually([&] {
    auto st = service.Get(spec.id);
    if (!st.ok() || st->sessions.size() != 2) return false;
    for (const auto& p : st->sessions)
      if (p.position.seq != Seq(21)) return false;
    return true;
  }));
  auto st = service.Get(spec.id);
  EXPECT_EQ(st->failures, 3u);
  service.Stop();
  ExpectEachEventOnce(ReadLines(dir + "/effects"), tails);
  for (const auto& row : ReadLines(dir + "/requests")) EXPECT_EQ(row.at(4), "1") << "bad signature";
  // A wrong secret is refused by the receiver (401), which the sink reports as a failure.
  auto sink = MakeWebhookSink(SinkSpec{SinkKind::kWebhook, spec.sink.url, "wrong", {}, 2000});
  Delivery d;
  d.consumer = ConsumerId("x");
  d.session = SessionId("a");
  d.epoch = Epoch(1);
  d.seq_start = d.seq_end = Seq(1);
  d.idempotency_key = IdempotencyKey(d.consumer, d.session, d.epoch, d.seq_end);
  auto refused = sink->Send(d, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("401"), std::string::npos);
}

// kill -9 of the delivering process, again and again, during delivery to a real receiver: every
// event arrives, and each idempotency key's side effect happens once.
TEST(WebhookSink, KillNineDuringDeliveryLosesNothingAndRepeatsNoEffect) {
  const test_support::TempDir temp("kill9");
  const std::string& dir = temp.path();
  const std::string db = dir + "/log.db";
  constexpr int kSessions = 3, kEvents = 400;
  std::map<std::string, std::uint64_t> tails;
  {
    SqliteLogOptions options;
    options.path = db;
    auto log = OpenSqliteEventLog(options);
    ASSERT_TRUE(log.ok());
    for (int s = 0; s < kSessions; ++s) {
      const std::string id = "s" + std::to_string(s);
      std::vector<NewEvent> initial;
      for (int i = 1; i <= kEvents; ++i) initial.push_back(Note(id + "#" + std::to_string(i)));
      ASSERT_TRUE((*log)->CreateSession(SessionId(id), {"p", "/", id}, std::move(initial)).ok());
      tails[id] = kEvents;
    }
  }
  Proc receiver({WEBHOOK_RECEIVER, "--secret", "k", "--effects", dir + "/effects", "--requests",
                 dir + "/requests", "--delay-ms", "3"});
  const std::string url = "http://127.0.0.1:" + receiver.Line().substr(5) + "/hook";
  auto effects_count = [&] { return ReadLines(dir + "/effects").size(); };
  auto covered = [&] {
    std::map<std::string, std::uint64_t> through;
    for (const auto& row : ReadLines(dir + "/effects"))
      through[row.at(1)] = std::max<std::uint64_t>(through[row.at(1)], std::stoull(row.at(4)));
    for (const auto& [s, tail] : tails)
      if (through[s] != tail) return false;
    return true;
  };
  std::mt19937 rng(12345);
  int kills = 0;
  for (int cycle = 0; cycle < 30 && !covered(); ++cycle) {
    Proc runner({CONSUMER_RUNNER, "--db", db, "--url", url, "--secret", "k", "--max-events", "4"});
    ASSERT_EQ(runner.Line(), "READY");
    // Kill only once it has made progress, so every cycle delivers something.
    const std::size_t before = effects_count();
    Eventually([&] { return effects_count() > before || covered(); }, 60s);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 100));
    runner.Kill(SIGKILL);
    ++kills;
  }
  if (!covered()) {
    Proc runner({CONSUMER_RUNNER, "--db", db, "--url", url, "--secret", "k"});
    ASSERT_EQ(runner.Line(), "READY");
    ASSERT_TRUE(Eventually(covered));
    runner.Kill(SIGKILL);
  }
  EXPECT_GE(kills, 5);
  ExpectEachEventOnce(ReadLines(dir + "/effects"), tails);
  // Every resend of a key carried exactly the same range and ordinal.
  std::map<std::string, std::string> plan_of;
  std::size_t resent = 0;
  for (const auto& row : ReadLines(dir + "/requests")) {
    ASSERT_EQ(row.size(), 5u);
    EXPECT_EQ(row[4], "1");
    const std::string plan = row[1] + "-" + row[2] + "-" + row[3];
    auto [it, fresh] = plan_of.emplace(row[0], plan);
    if (!fresh) {
      ++resent;
      EXPECT_EQ(it->second, plan) << row[0];
    }
  }
  std::cout << "kills: " << kills << ", redelivered requests: " << resent << "\n";
}

Delivery SampleDelivery(const std::string& key_end) {
  Delivery d;
  d.consumer = ConsumerId("c");
  d.session = SessionId("s");
  d.epoch = Epoch(1);
  d.seq_start = Seq(1);
  d.seq_end = Seq(std::stoull(key_end));
  d.idempotency_key = IdempotencyKey(d.consumer, d.session, d.epoch, d.seq_end);
  return d;
}

TEST(JsonlSink, ARedeliveryDoesNotWriteTwiceAndAPartialLineIsRepaired) {
  const test_support::TempDir temp("jsonl");
  const std::string& dir = temp.path();
  const std::string path = dir + "/out.jsonl";
  SinkSpec spec;
  spec.kind = SinkKind::kJsonl;
  spec.path = path;
  {
    auto sink = MakeJsonlSink(spec);
    Delivery first = SampleDelivery("1");
    auto prepared = sink->Prepare(first);
    ASSERT_TRUE(prepared.ok());
    ASSERT_TRUE(sink->Send(first, *prepared).ok());
    // Another session's line lands between; the redelivery still finds its own.
    Delivery other = SampleDelivery("7");
    other.session = SessionId("t");
    other.idempotency_key = "c/t/1/7";
    ASSERT_TRUE(sink->Send(other, *sink->Prepare(other)).ok());
    ASSERT_TRUE(sink->Send(first, *prepared).ok());
  }
  {
    std::ofstream(path, std::ios::app) << "{\"consumer\":\"c\",\"partial";  // a crash mid-write
  }
  {
    auto sink = MakeJsonlSink(spec);
    Delivery next = SampleDelivery("2");
    ASSERT_TRUE(sink->Send(next, *sink->Prepare(next)).ok());
  }
  std::ifstream in(path);
  std::vector<std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    auto d = DeliveryFromJson(line);
    ASSERT_TRUE(d.ok()) << line;
    keys.push_back(d->idempotency_key);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"c/s/1/1", "c/t/1/7", "c/s/1/2"}));
}

TEST(JsonlSink, AConsumerExportsEverySessionToOneFile) {
  const test_support::TempDir temp("jsonl-export");
  const std::string& dir = temp.path();
  MemoryEventLog log;
  for (const char* id : {"a", "b", "c"}) {
    std::vector<NewEvent> initial;
    for (int i = 1; i <= 30; ++i) initial.push_back(Note(std::to_string(i)));
    ASSERT_TRUE(log.CreateSession(SessionId(id), {"p", "/", id}, std::move(initial)).ok());
  }
  ConsumerServiceOptions options;
  options.owner = "t";
  options.idle_poll_ms = 50;
  options.max_delivery_events = 7;
  ConsumerService service(log, options, nullptr);
  ASSERT_TRUE(service.Start().ok());
  ConsumerSpec spec;
  spec.id = ConsumerId("export");
  spec.sink.kind = SinkKind::kJsonl;
  spec.sink.path = dir + "/export.jsonl";
  ASSERT_TRUE(service.Create(spec).ok());
  ASSERT_TRUE(Eventually([&] {
    auto st = service.Get(spec.id);
    if (!st.ok() || st->sessions.size() != 3) return false;
    for (const auto& p : st->sessions)
      if (p.position.seq != Seq(30)) return false;
    return true;
  }));
  service.Stop();
  std::map<std::string, std::uint64_t> next;
  std::ifstream in(dir + "/export.jsonl");
  std::string line;
  std::size_t lines = 0;
  while (std::getline(in, line)) {
    auto d = DeliveryFromJson(line);
    ASSERT_TRUE(d.ok()) << line;
    ++lines;
    for (const auto& e : d->events) EXPECT_EQ(e.seq.value(), ++next[d->session.str()]);
  }
  EXPECT_EQ(lines, 15u);  // 30 events in deliveries of at most 7, per session
  for (const char* id : {"a", "b", "c"}) EXPECT_EQ(next[id], 30u);
}

TEST(CommandSink, AcksByLineNacksAndRestartsASilentCommand) {
  const test_support::TempDir temp("command");
  const std::string& dir = temp.path();
  // Acknowledges every line by its idempotency key, and counts its starts.
  const std::string script =
      "echo start >> " + dir +
      "/starts; "
      "while IFS= read -r l; do "
      "k=$(printf '%s' \"$l\" | sed -n 's/.*\"idempotencyKey\":\"\\([^\"]*\\)\".*/\\1/p'); "
      "case \"$l\" in *'\"seqEnd\":3'*) sleep 5;; esac; "
      "case \"$l\" in *'\"seqEnd\":4'*) printf '{\"nack\":\"%s\",\"error\":\"busy\"}\\n' \"$k\"; "
      "continue;; esac; "
      "printf '{\"ack\":\"%s\",\"state\":{\"last\":\"%s\"}}\\n' \"$k\" \"$k\"; done";
  SinkSpec spec;
  spec.kind = SinkKind::kCommand;
  spec.argv = {"/bin/sh", "-c", script};
  spec.timeout_ms = 1000;
  auto sink = MakeCommandSink(spec);
  auto ok = sink->Send(SampleDelivery("1"), nullptr);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_TRUE(ok->state.has_value());
  EXPECT_EQ(json::serialize(*ok->state), "{\"last\":\"c/s/1/1\"}");
  EXPECT_TRUE(sink->Send(SampleDelivery("2"), nullptr).ok());
  auto silent = sink->Send(SampleDelivery("3"), nullptr);
  ASSERT_FALSE(silent.ok());
  EXPECT_NE(silent.status().message().find("did not acknowledge"), std::string::npos);
  auto nack = sink->Send(SampleDelivery("4"), nullptr);
  ASSERT_FALSE(nack.ok());
  EXPECT_NE(nack.status().message().find("busy"), std::string::npos);
  EXPECT_TRUE(sink->Send(SampleDelivery("5"), nullptr).ok());
  EXPECT_EQ(ReadLines(dir + "/starts").size(), 2u);  // restarted once, after the silence
}

}  // namespace
}  // namespace agentstream::consumers
