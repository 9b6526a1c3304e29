// Crash test: an acknowledged append survives kill -9 at any instant (docs/architecture.md,
// "Durability"). A child appends in a loop and reports each acknowledged seq; the parent kills it
// with SIGKILL at random moments. After every kill, the reopened log must hold every acknowledged
// event, with no seq missing or doubled and every event at the seq it was sent for.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "core/event_codec.h"
#include "store/sqlite/sqlite_log.h"
#include "testing/temp_dir.h"

namespace agentstream {
namespace {

constexpr int kSessions = 4;

int Cycles() {
  const char* env = std::getenv("AGENTSTREAM_CRASH_CYCLES");
  return env ? std::max(1, std::atoi(env)) : 50;
}

// The crash child writing into `db`, its stdout on `out`. Killed (SIGKILL) and reaped when the
// object goes away unless Reap() reaped it first, so a failed ASSERT leaves no process behind.
class Child {
 public:
  explicit Child(const std::string& db) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      execl(CRASH_CHILD_PATH, CRASH_CHILD_PATH, db.c_str(), std::to_string(kSessions).c_str(),
            nullptr);
      _exit(127);
    }
    close(fds[1]);
    out_ = fds[0];
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  int out() const { return out_; }
  // Waits for the child to end; its status, or -1 when waitpid fails.
  int Reap() {
    int status = 0;
    const pid_t reaped = waitpid(pid_, &status, 0);
    pid_ = -1;
    return reaped < 0 ? -1 : status;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

// Reads what the child reported until `deadline`, folding complete lines into `acked`.
void Collect(int fd, std::string& buffer, std::map<std::string, std::uint64_t>& acked, bool& ready,
             std::chrono::steady_clock::time_point deadline) {
  char chunk[65536];
  while (std::chrono::steady_clock::now() < deadline) {
    fd_set set;
    FD_ZERO(&set);
    FD_SET(fd, &set);
    timeval tv{0, 2000};
    if (select(fd + 1, &set, nullptr, nullptr, &tv) <= 0) continue;
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n <= 0) return;
    buffer.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0, end;
    while ((end = buffer.find('\n', start)) != std::string::npos) {
      std::istringstream line(buffer.substr(start, end - start));
      std::string session;
      std::uint64_t seq = 0;
      line >> session;
      if (session == "ready")
        ready = true;
      else if (line >> seq)
        acked[session] = std::max(acked[session], seq);
      start = end + 1;
    }
    buffer.erase(0, start);
  }
}

std::uint64_t Total(const std::map<std::string, std::uint64_t>& acked) {
  std::uint64_t total = 0;
  for (const auto& [session, seq] : acked) total += seq;
  return total;
}

TEST(CrashTest, AcknowledgedAppendsSurviveKill9) {
  const test_support::TempDir dir("crash");
  const std::string db = dir.File("log.db");
  std::mt19937 rng(std::random_device{}());
  std::map<std::string, std::uint64_t> acked;  // highest acknowledged seq per session, all cycles
  std::uint64_t total_acked_events = 0;
  const int cycles = Cycles();
  for (int cycle = 0; cycle < cycles; ++cycle) {
    Child child(db);
    std::string buffer;
    bool ready = false;
    std::map<std::string, std::uint64_t> this_cycle = acked;
    // Under load the child may take a while to open the log: the kill timer starts once it has
    // acknowledged an append in this cycle, so every cycle kills a writer in mid-stream.
    const std::uint64_t acked_before = Total(this_cycle);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!(ready && Total(this_cycle) > acked_before) &&
           std::chrono::steady_clock::now() < give_up)
      Collect(child.out(), buffer, this_cycle, ready,
              std::chrono::steady_clock::now() + std::chrono::milliseconds(5));
    ASSERT_GT(Total(this_cycle), acked_before) << "no append acknowledged in cycle " << cycle;
    const auto kill_at =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(rng() % 120 + 1);
    Collect(child.out(), buffer, this_cycle, ready, kill_at);
    ASSERT_EQ(kill(child.pid(), SIGKILL), 0);
    // Lines already in the pipe were acknowledged before the kill: read them all.
    Collect(child.out(), buffer, this_cycle, ready,
            std::chrono::steady_clock::now() + std::chrono::milliseconds(20));
    const int status = child.Reap();
    ASSERT_NE(status, -1);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "the child exited by itself (status " << status << ") in cycle " << cycle;
    acked = this_cycle;

    // Reopen and check every session.
    SqliteLogOptions options;
    options.path = db;
    auto log = OpenSqliteEventLog(options);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    total_acked_events = 0;
    for (const auto& [session, seq] : acked) {
      auto tail = (*log)->Tail(SessionId(session));
      ASSERT_TRUE(tail.ok()) << session << ": " << tail.status().ToString();
      ASSERT_GE(tail->seq.value(), seq)
          << "cycle " << cycle << ": " << session << " lost acknowledged events";
      total_acked_events += seq;
      Seq from(1);
      while (from <= tail->seq) {
        auto page = (*log)->Read(ReadRequest{SessionId(session), std::nullopt,
                                             ReadDirection::kForward, from, 5000, 16 << 20});
        ASSERT_TRUE(page.ok()) << page.status().ToString();
        ASSERT_FALSE(page->events.empty());
        for (const auto& record : page->events) {
          ASSERT_EQ(record.seq, from) << "seq missing or doubled";
          auto event = DecodeRecord(record);
          ASSERT_TRUE(event.ok()) << event.status().ToString();
          ASSERT_EQ(std::get<Notice>(event->payload).text, std::to_string(from.value()))
              << "cycle " << cycle << ": event at the wrong seq in " << session;
          from = from.next();
        }
      }
    }
  }
  EXPECT_EQ(acked.size(), static_cast<std::size_t>(kSessions));
  EXPECT_GT(total_acked_events, 0u);
  std::printf("crash test: %d kill -9 cycles, %llu acknowledged events verified\n", cycles,
              static_cast<unsigned long long>(total_acked_events));
}

}  // namespace
}  // namespace agentstream
