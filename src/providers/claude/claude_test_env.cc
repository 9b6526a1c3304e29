#include "providers/claude/claude_test_env.h"

#include <unistd.h>

#include <boost/json.hpp>
#include <map>

#include "core/timeline/invariants.h"

namespace agentstream::providers::claude::testing {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)
using process::Millis;

std::string ClaudeProgram() {
  return std::string(AGENTSTREAM_SOURCE_DIR) + "/tests/peers/node_modules/.bin/claude";
}
std::string FakeClaudeProgram() {
  return std::string(AGENTSTREAM_SOURCE_DIR) + "/src/providers/claude/testdata/fake_claude.sh";
}

ModelServer::ModelServer(process::EventLoop& loop, std::vector<std::string> extra_env) {
  process::SpawnOptions o;
  o.argv = {"node", std::string(AGENTSTREAM_SOURCE_DIR) + "/tests/model_server/server.mjs"};
  for (char** e = environ; *e; ++e) o.env.emplace_back(*e);
  o.env.insert(o.env.end(), extra_env.begin(), extra_env.end());
  auto child = process::ChildProcess::Spawn(loop, o,
                                            {[this](const process::Frame& f) {
                                               if (f.text.rfind("listening ", 0) == 0)
                                                 port_ = std::stoi(f.text.substr(10));
                                               if (f.text.rfind("request ", 0) == 0) ++requests_;
                                             },
                                             [](const process::ExitInfo&) {}});
  if (!child.ok()) {
    ADD_FAILURE() << "cannot start node: " << child.status().ToString();
    return;
  }
  child_ = std::move(child).value();
  if (!loop.RunUntil([this] { return port_ != 0; }, Millis(10000)))
    ADD_FAILURE() << "model server did not start: " << child_->StderrTail();
}

Session::Session(process::EventLoop& loop, int port, const Options& options)
    : DrivenSession(loop, options.root, "claude") {
  ClaudeOptions co;
  co.launch.program = options.program.empty() ? ClaudeProgram() : options.program;
  co.launch.cwd = work();
  if (!options.resume_session_id.empty()) {
    co.launch.session_id = options.resume_session_id;
    co.launch.resume = true;
  }
  const char* path = ::getenv("PATH");
  co.launch.env = {"HOME=" + root() + "/home", "PATH=" + std::string(path ? path : "/usr/bin:/bin"),
                   "ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(port),
                   "ANTHROPIC_API_KEY=sk-ant-offline-test", "IS_SANDBOX=1"};
  co.stall_timeout = options.stall_timeout;
  co.interrupt_timeout = options.interrupt_timeout;
  co.kill_plan = {Millis(500), Millis(500)};
  co.close_grace = Millis(2000);
  co.max_line_bytes = options.max_line_bytes;
  provider_ =
      &Attach(std::make_unique<ClaudeProvider>(loop, std::move(co)), "claude", Millis(60000));
}

// Tasks started and not yet finished. A task finishes with a task_notification, or, when the
// CLI folds the notification into a running turn instead, with a task_updated to a final status.
std::set<std::string> Session::RunningTasks() const {
  std::set<std::string> running;
  for (const Event& e : log()) {
    const auto* m = std::get_if<ProviderMetadata>(&e.payload);
    if (!m || !m->data.is_object()) continue;
    const boost::json::object& d = m->data.as_object();
    if (m->type == "task.started")
      running.insert(boost::json::value_to<std::string>(d.at("taskId")));
    if (m->type == "task.notification")
      running.erase(boost::json::value_to<std::string>(d.at("taskId")));
    if (m->type == "system/task_updated" && d.contains("patch") && d.at("patch").is_object()) {
      const boost::json::value* status = d.at("patch").as_object().if_contains("status");
      if (status && status->is_string() && status->as_string() != "running")
        running.erase(boost::json::value_to<std::string>(d.at("task_id")));
    }
  }
  return running;
}

bool Session::WaitQuiet(Millis quiet, Millis timeout) {
  std::size_t size = log().size();
  auto changed = process::Clock::now();
  return WaitFor(
      [&] {
        if (log().size() != size) size = log().size(), changed = process::Clock::now();
        const SessionStatus st = runner().status();
        return RunningTasks().empty() &&
               (st == SessionStatus::kIdle || st == SessionStatus::kError) &&
               runner().state().queue.empty() && process::Clock::now() - changed >= quiet;
      },
      timeout);
}

void Session::CheckInvariants(bool with_transcript) {
  timeline::CheckOptions options;
  if (with_transcript) {
    Close();
    Result<std::vector<ProviderEvent>> history = provider_->StreamHistory();
    ASSERT_TRUE(history.ok()) << history.status().ToString();
    std::map<std::string, std::string> texts;
    std::vector<std::string> order;
    for (const ProviderEvent& e : *history) {
      if (const auto* d = std::get_if<ProviderTextDelta>(&e)) {
        if (!texts.count(d->message_id.str())) order.push_back(d->message_id.str());
        texts[d->message_id.str()] += d->text;
      }
    }
    EXPECT_FALSE(order.empty()) << "the transcript holds no assistant message";
    for (const std::string& id : order) options.transcript.push_back({MessageId(id), texts[id]});
  }
  LoggedRunner::CheckInvariants(options);
}

}  // namespace agentstream::providers::claude::testing
