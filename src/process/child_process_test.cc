#include "process/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "process/event_loop.h"
#include "testing/temp_dir.h"

namespace agentstream::process {
namespace {

using std::chrono::milliseconds;

struct Captured {
  std::vector<Frame> frames;
  std::optional<ExitInfo> exit;
};

std::unique_ptr<ChildProcess> Start(EventLoop& loop, Captured& run, std::vector<std::string> argv,
                                    SpawnOptions o = {}) {
  o.argv = std::move(argv);
  auto child = ChildProcess::Spawn(loop, o,
                                   {[&run](Frame f) { run.frames.push_back(std::move(f)); },
                                    [&run](ExitInfo e) { run.exit = std::move(e); }});
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  return child.ok() ? std::move(child).value() : nullptr;
}

bool Alive(int pid) { return ::kill(pid, 0) == 0; }

// The parent of `pid`, or 0.
int ParentOf(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  int parent = 0;
  std::sscanf(line.c_str() + close + 2, "%*c %d", &parent);
  return parent;
}

// Alive and not a zombie (a killed process whose parent died waits as one for init).
bool Running(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

TEST(ChildProcessTest, ArgvEnvCwdAndExitCode) {
  EventLoop loop;
  Captured run;
  SpawnOptions o;
  o.env = {"PATH=/usr/bin:/bin", "GREETING=hello world"};
  o.cwd = "/tmp";
  auto child = Start(
      loop, run,
      {"sh", "-c", "echo \"$GREETING\"; echo \"$1\"; pwd; exit 3", "sh", "arg with spaces"}, o);
  ASSERT_TRUE(loop.RunUntil([&] { return run.exit.has_value(); }, milliseconds(5000)));
  ASSERT_EQ(run.frames.size(), 3u);
  EXPECT_EQ(run.frames[0].text, "hello world");
  EXPECT_EQ(run.frames[1].text, "arg with spaces");
  EXPECT_EQ(run.frames[2].text, "/tmp");
  EXPECT_EQ(run.exit->exit_code, 3);
  EXPECT_EQ(run.exit->signal, 0);
}

// The daemon is killed with SIGKILL while its agent runs background tasks (one in a session of
// its own): the agent, the tasks
// and the supervisor are all gone soon after, though nobody in the daemon could clean up.
TEST(ChildProcessTest, TheAgentAndEverythingItStartedDieWithTheDaemon) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t daemon = ::fork();
  ASSERT_GE(daemon, 0);
  if (daemon == 0) {  // a stand-in daemon: starts the agent, reports its pids, waits to be killed
    ::close(report[0]);
    EventLoop loop;
    Captured run;
    // A task in the agent's group, and one in a session of its own.
    auto child =
        Start(loop, run, {"sh", "-c", "sleep 300 & setsid sleep 302 & echo $! $$; exec sleep 301"});
    if (!child || !loop.RunUntil([&] { return !run.frames.empty(); }, milliseconds(5000)))
      ::_exit(1);
    const std::string line = run.frames[0].text + " " + std::to_string(child->pid()) + "\n";
    // (the agent's pid is the shell's $$)
    (void)!::write(report[1], line.data(), line.size());
    for (;;) ::pause();
  }
  ::close(report[1]);
  char buf[128] = {};
  ASSERT_GT(::read(report[0], buf, sizeof buf - 1), 0);
  ::close(report[0]);
  int task = 0, agent = 0, agent_again = 0;
  ASSERT_EQ(std::sscanf(buf, "%d %d %d", &task, &agent, &agent_again), 3) << buf;
  EXPECT_EQ(agent, agent_again) << "ChildProcess::pid() is the agent's own";
  const int supervisor = ParentOf(agent);
  ASSERT_GT(supervisor, 0);
  ASSERT_NE(supervisor, daemon) << "the agent runs under a supervisor";
  ASSERT_TRUE(Running(task) && Running(agent) && Running(supervisor));
  ASSERT_EQ(::kill(daemon, SIGKILL), 0);
  ASSERT_EQ(::waitpid(daemon, nullptr, 0), daemon);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((Running(task) || Running(agent) || Running(supervisor)) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(Running(task)) << "the background task outlived the daemon";
  EXPECT_FALSE(Running(agent)) << "the agent outlived the daemon";
  EXPECT_FALSE(Running(supervisor));
}

// What an agent leaves behind when it exits dies with it, in its group or not.
TEST(ChildProcessTest, WhatAnAgentLeavesBehindDiesWithIt) {
  EventLoop loop;
  Captured run;
  auto child = Start(loop, run, {"sh", "-c", "setsid sleep 303 & echo $!; exit 7"});
  ASSERT_TRUE(loop.RunUntil([&] { return run.exit.has_value(); }, milliseconds(5000)));
  EXPECT_EQ(run.exit->exit_code, 7) << "the supervisor exits as the agent did";
  ASSERT_EQ(run.frames.size(), 1u);
  const int left = std::stoi(run.frames[0].text);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (Running(left) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(Running(left)) << "a detached process outlived its agent";
}

// The agent's stdin reaches EOF when the daemon closes it, although another agent was started
// since (whose supervisor must hold no copy of the first one's pipes).
TEST(ChildProcessTest, AnotherAgentHoldsNoneOfThisOnesPipes) {
  EventLoop loop;
  Captured first, second;
  auto a = Start(loop, first, {"sh", "-c", "cat >/dev/null; echo eof"});
  auto b = Start(loop, second, {"sleep", "30"});
  ASSERT_TRUE(a && b);
  a->CloseStdin();
  ASSERT_TRUE(loop.RunUntil([&] { return first.exit.has_value(); }, milliseconds(5000)));
  ASSERT_EQ(first.frames.size(), 1u);
  EXPECT_EQ(first.frames[0].text, "eof");
}

TEST(ChildProcessTest, MissingProgramIsAnError) {
  EventLoop loop;
  Captured run;
  SpawnOptions o;
  o.argv = {"/nonexistent/agent"};
  auto child = ChildProcess::Spawn(loop, o, {});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(ChildProcess::Spawn(loop, SpawnOptions{}, {}).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(ChildProcessTest, StdinLinesRoundTripAndEofEndsTheProcess) {
  EventLoop loop;
  Captured run;
  auto child = Start(loop, run, {"cat"});
  ASSERT_TRUE(child->WriteLine("{\"n\":1}").ok());
  ASSERT_TRUE(child->WriteLine("{\"n\":2}").ok());
  ASSERT_TRUE(loop.RunUntil([&] { return run.frames.size() == 2; }, milliseconds(5000)));
  EXPECT_EQ(run.frames[1].text, "{\"n\":2}");
  EXPECT_FALSE(run.exit.has_value());  // stdin still open: cat keeps running
  child->CloseStdin();
  EXPECT_EQ(child->WriteLine("late").code(), ErrorCode::kUnavailable);
  ASSERT_TRUE(loop.RunUntil([&] { return run.exit.has_value(); }, milliseconds(5000)));
  EXPECT_EQ(run.exit->exit_code, 0);
}

TEST(ChildProcessTest, WritingToAnAgentThatClosedItsStdinIsAnErrorNotThisProcesssEnd) {
  // The agent closes its stdin and lives on. The write to it fails with EPIPE; were SIGPIPE not
  // ignored, it would kill this process.
  EventLoop loop;
  Captured run;
  auto child = Start(loop, run, {"sh", "-c", "exec 0<&-; echo closed; sleep 0.5; echo alive"});
  ASSERT_TRUE(loop.RunUntil([&] { return run.frames.size() == 1; }, milliseconds(5000)));
  ASSERT_TRUE(child->WriteLine("{\"n\":1}").ok());
  ASSERT_TRUE(loop.RunUntil([&] { return run.exit.has_value(); }, milliseconds(5000)));
  ASSERT_EQ(run.frames.size(), 2u);
  EXPECT_EQ(run.frames[1].text, "alive");
  EXPECT_EQ(run.exit->exit_code, 0);
  EXPECT_EQ(child->WriteLine("late").code(), ErrorCode::kUnavailable);
}

TEST(ChildProcessTest, OversizeLinesAndStderrRing) {
  EventLoop loop;
  Captured run;
  SpawnOptions o;
  o.max_line_bytes = 16;
  o.stderr_ring_bytes = 8;
  auto child = Start(loop, run,
                     {"sh", "-c",
                      "head -c 100000 /dev/zero | tr '\\0' x; echo; echo short; "
                      "echo 0123456789abcdef-tail >&2"},
                     o);
  ASSERT_TRUE(loop.RunUntil([&] { return run.exit.has_value(); }, milliseconds(5000)));
  ASSERT_EQ(run.frames.size(), 2u);
  EXPECT_EQ(run.frames[0].kind, Frame::Kind::kOversize);
  EXPECT_EQ(run.frames[0].text.size(), 16u);
  EXPECT_EQ(run.frames[0].dropped, 100000u - 16u);
  EXPECT_EQ(run.frames[1].text, "short");
  EXPECT_EQ(run.exit->stderr_tail, "ef-tail\n");
}

TEST(ChildProcessTest, KillEscalatesToSigkillAndCleansTheGroup) {
  EventLoop loop;
  Captured run;
  const test_support::TempDir dir("child-process");
  const std::string pidfile = dir.File("grandchild.pid");
  // Ignores SIGINT and SIGTERM; leaves a grandchild behind in its process group.
  auto child = Start(loop, run,
                     {"sh", "-c",
                      "trap '' INT TERM; sleep 300 & echo $! > " + pidfile +
                          "; echo ready; while true; do sleep 1; done"});
  ASSERT_TRUE(loop.RunUntil([&] { return !run.frames.empty(); }, milliseconds(5000)));
  int grandchild = 0;
  std::ifstream(pidfile) >> grandchild;
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(Alive(grandchild));
  bool done = false;
  const auto start = Clock::now();
  child->Terminate(KillPlan{milliseconds(100), milliseconds(100)}, [&] { done = true; });
  ASSERT_TRUE(loop.RunUntil([&] { return done; }, milliseconds(5000)));
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  ASSERT_TRUE(run.exit.has_value());
  EXPECT_EQ(run.exit->signal, SIGKILL);  // SIGINT and SIGTERM were ignored
  loop.RunUntil([&] { return !Alive(grandchild); }, milliseconds(2000));
  EXPECT_FALSE(Alive(grandchild));
}

TEST(ChildProcessTest, DestroyingKillsTheProcess) {
  EventLoop loop;
  Captured run;
  auto child = Start(loop, run, {"sleep", "300"});
  const int pid = child->pid();
  ASSERT_TRUE(Alive(pid));
  child.reset();
  EXPECT_FALSE(Alive(pid));
  loop.RunFor(milliseconds(50));
  EXPECT_FALSE(run.exit.has_value());  // no handler after destruction
}

TEST(ManualTimersTest, FiresInDueOrderAndHonoursCancel) {
  ManualTimers t;
  std::vector<int> fired;
  auto a = t.After(milliseconds(30), [&] { fired.push_back(3); });
  auto b = t.After(milliseconds(10), [&] { fired.push_back(1); });
  auto c = t.After(milliseconds(20), [&] { fired.push_back(2); });
  c->Cancel();
  t.Advance(milliseconds(15));
  EXPECT_EQ(fired, (std::vector<int>{1}));
  t.Advance(milliseconds(15));
  EXPECT_EQ(fired, (std::vector<int>{1, 3}));
  auto d = t.After(milliseconds(5), [&] { fired.push_back(4); });
  d.reset();  // destroying the handle cancels too
  t.Advance(milliseconds(10));
  EXPECT_EQ(fired, (std::vector<int>{1, 3}));
  EXPECT_EQ(t.pending(), 0u);
}

}  // namespace
}  // namespace agentstream::process
