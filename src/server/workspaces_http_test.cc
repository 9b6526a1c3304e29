// Agents' worktrees through the server (docs/workspaces.md): created over HTTP in a real git
// repository made by the test, diffed, and forked over the WebSocket protocol as over HTTP, each
// fork in a worktree of its own.
#include <filesystem>
#include <fstream>

#include "server/testing/server_test_fixture.h"
#include "server/workspace_routes.h"
#include "testing/shell.h"
#include "testing/temp_dir.h"

namespace agentstream::server::testing {
namespace {

namespace fs = std::filesystem;

using test_support::ShellOutput;

class WorkspacesHttpTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& options) override {
    ShellOutput("git init -q -b main " + repo_ + " && printf 'one\\ntwo\\n' >" + repo_ +
                "/f.txt && git -C " + repo_ + " add -A && git -C " + repo_ +
                " -c user.name=t -c user.email=t@t commit -q -m first");
    // A stand-in for the GitHub CLI (GitHub cannot be reached here): records its title, answers
    // a pull request's URL as gh does.
    test_support::WriteTextFile(gh_,
                                "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --title ] && "
                                "printf '%s' \"$2\" > " +
                                    gh_ +
                                    ".title; shift; done\n"
                                    "echo https://github.com/octo/app/pull/1\n");
    fs::permissions(gh_, fs::perms::owner_all);
    WorkspaceRoutesOptions workspace_options;
    workspace_options.git.gh_program = gh_;
    workspaces_ = std::make_unique<WorkspaceRoutes>(*manager_, log_, worktrees_, workspace_options);
    options.workspaces = workspaces_.get();
  }
  void TearDown() override {
    workspaces_->Stop();
    ServerFixture::TearDown();
    workspaces_.reset();
  }

  std::string Cwd(const std::string& id) { return std::string(Snapshot(id).at("cwd").as_string()); }

  test_support::TempDir dir_{"workspaces-http"};
  const std::string repo_ = dir_.File("repo");
  const std::string root_ = dir_.File("worktrees");
  const std::string gh_ = dir_.File("gh");
  workspace::Worktrees worktrees_{workspace::Git(), root_};
  std::unique_ptr<WorkspaceRoutes> workspaces_;
};

TEST_F(WorkspacesHttpTest, CreatesAndForksOverHttpAndWebSocketGetWorktreesOfTheirOwn) {
  json::value agent = Call("POST", "/v1/agents",
                           R"({"provider":"scripted","cwd":")" + repo_ + R"(","worktree":{}})");
  ASSERT_TRUE(agent.is_object());
  const std::string id(agent.at("id").as_string());
  EXPECT_EQ(Cwd(id), root_ + "/" + id);
  std::ofstream(root_ + "/" + id + "/f.txt") << "one\nTWO\n";
  json::value diff = Call("GET", "/v1/agents/" + id + "/diff");
  EXPECT_EQ(diff.at("files").at(0).at("path"), "f.txt");
  EXPECT_EQ(diff.at("additions"), 1);
  EXPECT_EQ(diff.at("branch"), json::value("agentstream/" + id));
  ShellOutput("git -C " + root_ + "/" + id +
              " -c user.name=t -c user.email=t@t commit -q -am parent");
  const std::string cursor(Snapshot(id).at("cursor").as_string());

  json::value http_fork =
      Call("POST", "/v1/agents/" + id + "/fork", R"({"cursor":")" + cursor + R"("})");
  const std::string http_child(http_fork.at("id").as_string());
  EXPECT_EQ(Cwd(http_child), root_ + "/" + http_child);

  WsClient ws;
  ASSERT_EQ(ws.Connect(port_), 101);
  ASSERT_TRUE(
      ws.Send(R"({"type":"fork","id":"f1","agent":")" + id + R"(","cursor":")" + cursor + R"("})"));
  json::value reply;
  for (int i = 0; i < 100 && reply.is_null(); ++i) {
    auto text = ws.Read();
    ASSERT_TRUE(text.has_value());
    json::value msg = ParseOrNull(*text);
    if (msg.is_object() && msg.as_object().contains("id") && msg.at("id") == "f1") reply = msg;
  }
  ASSERT_EQ(reply.at("type"), "agent") << json::serialize(reply);
  const std::string ws_child(reply.at("agent").at("id").as_string());
  EXPECT_EQ(Cwd(ws_child), root_ + "/" + ws_child);
  for (const std::string& child : {http_child, ws_child}) {
    // From the parent's branch as it is now: its commit, on a branch of the child's own.
    EXPECT_EQ(ShellOutput("git -C " + root_ + "/" + child + " rev-parse HEAD"),
              ShellOutput("git -C " + root_ + "/" + id + " rev-parse HEAD"));
    EXPECT_EQ(ShellOutput("git -C " + root_ + "/" + child + " rev-parse --abbrev-ref HEAD"),
              "agentstream/" + child + "\n");
    bool recorded = false;
    for (const json::value& e : AllEvents(child))
      recorded |= Kind(e) == "workspace.created" &&
                  e.at("payload").at("base") == json::value("agentstream/" + id);
    EXPECT_TRUE(recorded) << child;
  }
  // A create over the WebSocket protocol with a worktree, as the web page's form sends it.
  ASSERT_TRUE(
      ws.Send(R"({"type":"agents.create","id":"c1","agent":{"provider":"scripted","cwd":")" +
              repo_ + R"(","worktree":{"branch":"from-ws"}}})"));
  json::value created;
  for (int i = 0; i < 100 && created.is_null(); ++i) {
    auto text = ws.Read();
    ASSERT_TRUE(text.has_value());
    json::value msg = ParseOrNull(*text);
    if (msg.is_object() && msg.as_object().contains("id") && msg.at("id") == "c1") created = msg;
  }
  ASSERT_EQ(created.at("type"), "agent") << json::serialize(created);
  const std::string ws_agent(created.at("agent").at("id").as_string());
  EXPECT_EQ(Cwd(ws_agent), root_ + "/" + ws_agent);
  EXPECT_EQ(ShellOutput("git -C " + root_ + "/" + ws_agent + " rev-parse --abbrev-ref HEAD"),
            "from-ws\n");

  json::value list = Call("GET", "/v1/worktrees");
  EXPECT_EQ(list.at("worktrees").as_array().size(), 4u);
}

// An agent that may only write files in its worktree plants a git directory there, with an
// fsmonitor program, and points the worktree's .git file at it: the diff and the removal refuse
// it (409), run nothing, and remove nothing.
TEST_F(WorkspacesHttpTest, AGitDirectoryPlantedInAWorktreeIsRefusedAndRunsNothing) {
  json::value agent = Call("POST", "/v1/agents",
                           R"({"provider":"scripted","cwd":")" + repo_ + R"(","worktree":true})");
  const std::string id(agent.at("id").as_string());
  const std::string wt = root_ + "/" + id;
  const std::string marker = dir_.File("ran");
  ShellOutput("cp -r " + repo_ + "/.git " + wt + "/.evil && printf '#!/bin/sh\ntouch " + marker +
              "\n' >" + wt + "/.evil/monitor && chmod +x " + wt + "/.evil/monitor && git -C " + wt +
              "/.evil config core.fsmonitor " + wt + "/.evil/monitor && echo 'gitdir: " + wt +
              "/.evil' >" + wt + "/.git");
  json::value refused = Call("GET", "/v1/agents/" + id + "/diff", "", 409);
  EXPECT_NE(json::serialize(refused).find("will not run git"), std::string::npos)
      << json::serialize(refused);
  Call("DELETE", "/v1/agents/" + id + "?removeWorktree=true&force=true", "", 409);
  EXPECT_TRUE(fs::exists(wt + "/f.txt"));
  EXPECT_FALSE(fs::exists(marker));
}

// removeWorktree=TRUE (or yes, on) once closed the agent and kept its worktree: it is refused,
// and nothing is closed or removed.
TEST_F(WorkspacesHttpTest, ARemoveWorktreeValueOtherThanTrueOrFalseIsRefused) {
  json::value agent = Call("POST", "/v1/agents",
                           R"({"provider":"scripted","cwd":")" + repo_ + R"(","worktree":true})");
  const std::string id(agent.at("id").as_string());
  for (const char* query : {"removeWorktree=TRUE", "removeWorktree=True", "removeWorktree=yes",
                            "removeWorktree=on", "removeWorktree=true&force=yes"}) {
    const TestResponse res = HttpCall(port_, "DELETE", "/v1/agents/" + id + "?" + query);
    EXPECT_EQ(res.status, 400) << query << ": " << res.body;
    EXPECT_NE(res.body.find(" must be true, false, 1 or 0"), std::string::npos) << res.body;
  }
  EXPECT_EQ(Snapshot(id).at("closed"), false);
  EXPECT_TRUE(fs::exists(root_ + "/" + id + "/f.txt"));
  Call("DELETE", "/v1/agents/" + id + "?removeWorktree=1");
  EXPECT_EQ(Snapshot(id).at("closed"), true);
  EXPECT_FALSE(fs::exists(root_ + "/" + id));
  // An unknown member of a create's worktree object is refused before git runs.
  TestResponse typo =
      HttpCall(port_, "POST", "/v1/agents",
               R"({"provider":"scripted","cwd":")" + repo_ + R"(","worktree":{"brnch":"x"}})");
  EXPECT_EQ(typo.status, 400);
  EXPECT_NE(typo.body.find(R"(unknown field \"brnch\" in worktree)"), std::string::npos)
      << typo.body;
  EXPECT_EQ(Call("GET", "/v1/worktrees").at("worktrees").as_array().size(), 1u);
}

// Commit (with a message, then with the agent's last words), merge into the checked-out base,
// discard, each recorded as a workspace.action event; bad requests change nothing.
TEST_F(WorkspacesHttpTest, GitActionsOnAWorktreeAreRecordedInTheAgentsLog) {
  json::value agent = Call("POST", "/v1/agents",
                           R"({"provider":"scripted","cwd":")" + repo_ + R"(","worktree":true})");
  const std::string id(agent.at("id").as_string());
  const std::string wt = root_ + "/" + id;
  const std::string git = "/v1/agents/" + id + "/git/";
  std::ofstream(wt + "/f.txt") << "one\nTWO\n";
  json::value committed = Call("POST", git + "commit", R"({"message":"Shout two\n\nLoudly."})");
  EXPECT_EQ(committed.at("outcome"), "committed");
  EXPECT_EQ(committed.at("message"), "Shout two");
  EXPECT_EQ(committed.at("agent"), json::value(id));
  const std::string commit(committed.at("commit").as_string());
  EXPECT_EQ(ShellOutput("git -C " + repo_ + " rev-parse agentstream/" + id), commit + "\n");
  Call("POST", git + "commit", "{}", 409);  // nothing to commit

  // Without a message: the first line of the agent's last message.
  Call("POST", "/v1/agents/" + id + "/messages",
       R"({"text":"add a third line","clientMessageId":"m1"})");
  ASSERT_TRUE(WaitIdle(id));
  std::ofstream(wt + "/f.txt", std::ios::app) << "three\n";
  json::value second = Call("POST", git + "commit", "");
  EXPECT_EQ(second.at("message"),
            "I read README.md. Here is what I found: the project builds with CMake and its tests "
            "sit next to the code. You asked: add a third line");

  json::value merged = Call("POST", git + "merge", "{}");
  EXPECT_EQ(merged.at("outcome"), "fast-forward");
  EXPECT_EQ(merged.at("target"), "main");
  EXPECT_EQ(ShellOutput("cat " + repo_ + "/f.txt"), "one\nTWO\nthree\n");

  std::ofstream(wt + "/scratch.txt") << "scratch\n";
  json::value discarded = Call("POST", git + "discard");
  EXPECT_EQ(discarded.at("outcome"), "discarded");
  EXPECT_EQ(discarded.at("files").at(0), "scratch.txt");
  EXPECT_FALSE(fs::exists(wt + "/scratch.txt"));

  // While the agent waits for a permission (in its turn), commit and discard would race it.
  Call("POST", "/v1/agents/" + id + "/messages",
       R"({"text":"needs a permission","clientMessageId":"m2"})");
  ASSERT_TRUE(Eventually([&] { return Snapshot(id).at("status") == "permission"; }));
  std::ofstream(wt + "/during.txt") << "during the turn\n";
  json::value busy = Call("POST", git + "commit", R"({"message":"mid-turn"})", 409);
  EXPECT_NE(json::serialize(busy).find("is in a turn"), std::string::npos) << busy;
  Call("POST", git + "discard", "{}", 409);
  EXPECT_TRUE(fs::exists(wt + "/during.txt"));
  EXPECT_EQ(Call("POST", git + "merge", "{}").at("outcome"), "up-to-date");  // reads refs only

  // A pull request: pushed, then opened by gh, titled by the agent's last message by default (the
  // turn that waits for a permission said it).
  const std::string bare = dir_.File("remote.git");
  ShellOutput("git init -q --bare " + bare + " && git -C " + repo_ +
              " remote add origin https://github.com/octo/app.git && git -C " + repo_ +
              " config remote.origin.pushurl " + bare);
  json::value opened = Call("POST", git + "pr", "{}");
  EXPECT_EQ(opened.at("outcome"), "opened");
  EXPECT_EQ(opened.at("url"), "https://github.com/octo/app/pull/1");
  EXPECT_EQ(opened.at("target"), "main");
  EXPECT_EQ(ShellOutput("cat " + gh_ + ".title"), "Let me look at the project first.");
  json::value no_remote = Call("POST", git + "pr", R"({"title":"t","remote":"upstream"})", 400);
  EXPECT_NE(json::serialize(no_remote).find("no remote"), std::string::npos) << no_remote;
  Call("POST", git + "pr", R"({"title":"t","into":"main"})", 400);

  // Refused before git runs: an unknown action, a body of another shape, an unknown member, a
  // remote the repository does not have.
  Call("POST", git + "rebase", "{}", 404);
  Call("POST", git + "commit", "[]", 400);
  Call("POST", git + "commit", R"({"mesage":"typo"})", 400);
  Call("POST", git + "merge", R"({"noFastForward":"yes"})", 400);
  Call("POST", git + "push", R"({"remote":"nowhere"})", 400);
  Call("POST", "/v1/agents/" + CreateAgent() + "/git/commit", "{}", 404);  // no worktree

  std::vector<std::string> recorded;
  for (const json::value& e : AllEvents(id)) {
    if (Kind(e) != "workspace.action") continue;
    recorded.push_back(std::string(e.at("payload").at("action").as_string()) + " " +
                       std::string(e.at("payload").at("outcome").as_string()));
  }
  EXPECT_EQ(recorded,
            (std::vector<std::string>{"commit committed", "commit committed", "merge fast-forward",
                                      "discard discarded", "merge up-to-date", "pr opened"}));
}

TEST_F(WorkspacesHttpTest, AnAgentWithoutAWorktreeHasNoDiffAndForksPlainly) {
  const std::string id = CreateAgent();
  TestResponse diff = HttpCall(port_, "GET", "/v1/agents/" + id + "/diff");
  EXPECT_EQ(diff.status, 404);
  EXPECT_NE(diff.body.find("has no worktree"), std::string::npos) << diff.body;
  const std::string cursor(Snapshot(id).at("cursor").as_string());
  json::value child =
      Call("POST", "/v1/agents/" + id + "/fork", R"({"cursor":")" + cursor + R"("})");
  EXPECT_EQ(child.at("cwd"), "/tmp");
  EXPECT_FALSE(fs::exists(root_));
}

}  // namespace
}  // namespace agentstream::server::testing
