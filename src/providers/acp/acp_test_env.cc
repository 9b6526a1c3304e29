#include "providers/acp/acp_test_env.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "process/run_command.h"
#include "providers/codex/codex_provider.h"
#include "providers/opencode/opencode_provider.h"
#include "testing/temp_dir.h"

namespace agentstream::providers::acp::testing {

namespace fs = std::filesystem;
using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)
using process::Millis;
using test_support::WriteTextFile;

std::string AgentName(Agent agent) {
  switch (agent) {
    case Agent::kGemini:
      return "gemini";
    case Agent::kOpencode:
      return "opencode";
    case Agent::kClaude:
      return "claude";
    case Agent::kFake:
      return "fake";
    case Agent::kCodex:
      return "codex";
    case Agent::kOpencodeServe:
      return "opencode_serve";
    case Agent::kCodexAcp:
      return "codex_acp";
    case Agent::kQwen:
      return "qwen";
    case Agent::kClaudeAgent:
      return "claude_agent";
  }
  return "?";
}

std::string PresetOf(Agent agent) {
  switch (agent) {
    case Agent::kCodexAcp:
      return "codex";
    case Agent::kClaudeAgent:
      return "claude-agent";
    default:
      return AgentName(agent);
  }
}

std::string AgentProgram(Agent agent) {
  const std::string bin = std::string(AGENTSTREAM_SOURCE_DIR) + "/tests/peers/node_modules/.bin/";
  switch (agent) {
    case Agent::kGemini:
      return bin + "gemini";
    case Agent::kOpencode:
    case Agent::kOpencodeServe:
      return bin + "opencode";
    case Agent::kClaude:
      return bin + "claude-code-acp";
    case Agent::kFake:
      return std::string(AGENTSTREAM_SOURCE_DIR) + "/src/providers/acp/testdata/fake_acp_agent.mjs";
    case Agent::kCodex:
      return bin + "codex";
    case Agent::kCodexAcp:
      return bin + "codex-acp";
    case Agent::kQwen:
      return bin + "qwen";
    case Agent::kClaudeAgent:
      return bin + "claude-agent-acp";
  }
  return {};
}

bool AgentInstalled(Agent agent) { return ::access(AgentProgram(agent).c_str(), X_OK) == 0; }

namespace {

// A test session's limits on a child-process provider's options (CodexOptions, AcpOptions): the
// session's timeouts, and a quick kill of an agent that does not exit.
template <class ProviderOptions>
void SetLimits(ProviderOptions& o, const AcpSession::Options& options) {
  o.stall_timeout = options.stall_timeout;
  o.handshake_timeout = options.handshake_timeout;
  o.interrupt_timeout = options.interrupt_timeout;
  o.kill_plan = {Millis(500), Millis(500)};
  o.close_grace = Millis(2000);
  o.max_line_bytes = options.max_line_bytes;
}

// Gives a fresh HOME opencode's database before the test starts the CLI. opencode creates
// the database (~/.local/share/opencode/opencode.db) and runs its migrations at its first
// start, and in CI that first start once exited at once with "Unexpected error / Failed query:
// PRAGMA wal_checkpoint(PASSIVE)", a fault of opencode's own start-up, not of what a test
// checks. A test drives a session as on a machine where opencode has run before: a quick
// `opencode session list` makes the database, tried up to three times.
void InitializeOpencodeData(const std::vector<std::string>& env, const std::string& work) {
  process::SpawnOptions spawn;
  spawn.argv = {AgentProgram(Agent::kOpencode), "session", "list"};
  spawn.env = env;
  spawn.cwd = work;
  std::string last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Result<process::CommandResult> ran = process::RunCommand(spawn, Millis(60000));
    if (ran.ok() && ran->exit.exit_code == 0) return;
    if (!ran.ok() && ran.status().code() == ErrorCode::kNotFound) return;  // not installed
    last = ran.ok() ? ran->exit.Describe() : ran.status().ToString();
  }
  std::cerr << "opencode's database could not be made before the test: " << last << "\n";
}

}  // namespace

AgentSetup PrepareAgent(Agent agent, int port, const std::string& root) {
  const std::string work = root + "/work";
  const std::string home = root + "/home";
  fs::create_directories(home);
  fs::create_directories(work);
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  const char* path = ::getenv("PATH");
  std::vector<std::string> env = {"HOME=" + home,
                                  "PATH=" + std::string(path ? path : "/usr/bin:/bin")};
  std::optional<std::string> model;
  switch (agent) {
    case Agent::kGemini:
      // Offline gemini: API-key auth, no trust prompt, no telemetry or update checks.
      WriteTextFile(
          home + "/.gemini/settings.json",
          R"({"security":{"auth":{"selectedType":"gemini-api-key"},)"
          R"("folderTrust":{"enabled":false}},"privacy":{"usageStatisticsEnabled":false},)"
          R"("general":{"disableAutoUpdate":true},"telemetry":{"enabled":false}})");
      env.insert(env.end(), {"GEMINI_API_KEY=offline-test", "GOOGLE_GEMINI_BASE_URL=" + base});
      model = "gemini-2.5-flash";
      break;
    case Agent::kOpencode:
    case Agent::kOpencodeServe:
      // Section 4.1; bash asks for permission so that the permission rows can run.
      WriteTextFile(work + "/opencode.json",
                    R"({"provider":{"anthropic":{"options":{"baseURL":")" + base +
                        R"(/v1","apiKey":"sk-ant-offline-test"}}},)"
                        R"("model":"anthropic/claude-sonnet-4-5","autoupdate":false,)"
                        R"("share":"disabled","permission":{"bash":"ask"}})");
      env.insert(env.end(), {"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1"});
      InitializeOpencodeData(env, work);
      break;
    case Agent::kClaude:
    case Agent::kClaudeAgent:
      env.insert(env.end(), {"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=sk-ant-offline-test",
                             "IS_SANDBOX=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
                             "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1"});
      break;
    case Agent::kFake:
      break;
    case Agent::kCodex:
      // Offline codex: a custom Responses-API provider at the model server.
      WriteTextFile(home + "/codex/config.toml",
                    "model = \"fake-model\"\nmodel_provider = \"fake\"\n"
                    "[model_providers.fake]\nname = \"Scripted\"\nbase_url = \"" +
                        base + "/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_API_KEY\"\n");
      env.insert(env.end(), {"CODEX_HOME=" + home + "/codex", "FAKE_API_KEY=offline-test"});
      break;
    case Agent::kCodexAcp:
      // codex-acp: the same provider; every command asks (untrusted) and runs unsandboxed (its
      // Linux sandbox needs bubblewrap); a model codex knows, else each turn's text starts with a
      // warning about the model's metadata.
      WriteTextFile(home + "/codex/config.toml",
                    "model = \"gpt-5.4\"\nmodel_provider = \"fake\"\n"
                    "approval_policy = \"untrusted\"\nsandbox_mode = \"danger-full-access\"\n"
                    "[model_providers.fake]\nname = \"Scripted\"\nbase_url = \"" +
                        base + "/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_API_KEY\"\n");
      env.insert(env.end(), {"CODEX_HOME=" + home + "/codex", "FAKE_API_KEY=offline-test"});
      break;
    case Agent::kQwen:
      // qwen-code on its OpenAI-compatible provider (Chat Completions at the model server).
      WriteTextFile(
          home + "/.qwen/settings.json",
          R"({"security":{"auth":{"selectedType":"openai"}},)"
          R"("model":{"name":"qwen-scripted"},"privacy":{"usageStatisticsEnabled":false},)"
          R"("telemetry":{"enabled":false},)"
          R"("general":{"disableAutoUpdate":true,"disableUpdateNag":true}})");
      env.insert(env.end(), {"OPENAI_API_KEY=sk-offline-test", "OPENAI_BASE_URL=" + base + "/v1",
                             "OPENAI_MODEL=qwen-scripted"});
      break;
  }
  return AgentSetup{std::move(env), std::move(model), work};
}

void AgentTest::SetUp() {
  if (!AgentInstalled(GetParam())) {
    std::cerr << "\n*** SKIPPING: " << AgentProgram(GetParam())
              << " is not installed (run tools/setup.sh: npm ci in tests/peers) ***\n\n";
    GTEST_SKIP() << AgentProgram(GetParam()) << " is not installed";
  }
  server_ = std::make_unique<claude::testing::ModelServer>(loop_);
  ASSERT_NE(server_->port(), 0);
}

AcpSession::AcpSession(process::EventLoop& loop, Agent agent, int port, const Options& options)
    : DrivenSession(loop, options.root, "acp") {
  AgentSetup setup = PrepareAgent(agent, port, root());
  std::vector<std::string> env = std::move(setup.env);
  env.insert(env.end(), options.extra_env.begin(), options.extra_env.end());
  const Millis start_wait = options.handshake_timeout + Millis(30000);
  if (agent == Agent::kCodex) {
    codex::CodexOptions c;
    c.program = AgentProgram(agent);
    c.env = env;
    c.cwd = work();
    c.thread_id = options.load_session_id;
    SetLimits(c, options);
    if (options.codex_history_page_turns > 0)
      c.history_page_turns = options.codex_history_page_turns;
    Attach(std::make_unique<codex::CodexProvider>(loop, std::move(c)), "acp", start_wait);
    return;
  }
  if (agent == Agent::kOpencodeServe) {
    opencode::OpencodeOptions oc;
    oc.server.program = AgentProgram(agent);
    oc.server.env = env;
    oc.server.cwd = work();
    oc.server.kill_plan = {Millis(500), Millis(500)};
    oc.cwd = work();
    oc.session_id = options.load_session_id;
    oc.stall_timeout = options.stall_timeout;
    oc.interrupt_timeout = options.interrupt_timeout;
    Attach(std::make_unique<opencode::OpencodeProvider>(loop, std::move(oc)), "acp", start_wait);
    return;
  }
  AcpOptions o;
  if (agent == Agent::kFake) {
    o.command = AgentCommand{"acp:fake", {"node", AgentProgram(agent)}, env};
    o.command.settle_after_failed_turn = options.fake_settle_after_failed_turn;
  } else {
    Result<AgentCommand> preset = Preset(PresetOf(agent), setup.model, AgentProgram(agent));
    EXPECT_TRUE(preset.ok());
    o.command = *preset;
    o.command.env = env;
  }
  o.cwd = work();
  o.session_id = options.load_session_id;
  SetLimits(o, options);
  Attach(std::make_unique<AcpProvider>(loop, std::move(o)), "acp", start_wait);
}

}  // namespace agentstream::providers::acp::testing
