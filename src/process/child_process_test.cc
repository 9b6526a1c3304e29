#include "process/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>

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
