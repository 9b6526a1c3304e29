#include "providers/acp/acp_test_env.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/event_codec.h"
#include "core/timeline/invariants.h"
#include "providers/codex/codex_provider.h"
#include "providers/opencode/opencode_provider.h"
#include "providers/testing/provider_test_peer.h"

namespace agentstream::providers::acp::testing {

namespace fs = std::filesystem;
using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)
using process::Millis;
using providers::testing::ProviderTestPeer;

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
  }
  return "?";
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
  }
  return {};
}

bool AgentInstalled(Agent agent) { return ::access(AgentProgram(agent).c_str(), X_OK) == 0; }

namespace {

void WriteFile(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
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
      WriteFile(home + "/.gemini/settings.json",
                R"({"security":{"auth":{"selectedType":"gemini-api-key"},)"
                R"("folderTrust":{"enabled":false}},"privacy":{"usageStatisticsEnabled":false},)"
                R"("general":{"disableAutoUpdate":true},"telemetry":{"enabled":false}})");
      env.insert(env.end(), {"GEMINI_API_KEY=offline-test", "GOOGLE_GEMINI_BASE_URL=" + base});
      model = "gemini-2.5-flash";
      break;
    case Agent::kOpencode:
    case Agent::kOpencodeServe:
      // Section 4.1; bash asks for permission so that the permission rows can run.
      WriteFile(work + "/opencode.json",
                R"({"provider":{"anthropic":{"options":{"baseURL":")" + base +
                    R"(/v1","apiKey":"sk-ant-offline-test"}}},)"
                    R"("model":"anthropic/claude-sonnet-4-5","autoupdate":false,)"
                    R"("share":"disabled","permission":{"bash":"ask"}})");
      env.insert(env.end(), {"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1"});
      break;
    case Agent::kClaude:
      env.insert(env.end(), {"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=sk-ant-offline-test",
                             "IS_SANDBOX=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
                             "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1"});
      break;
    case Agent::kFake:
      break;
    case Agent::kCodex:
      // Offline codex: a custom Responses-API provider at the model server.
      WriteFile(home + "/codex/config.toml",
                "model = \"fake-model\"\nmodel_provider = \"fake\"\n"
                "[model_providers.fake]\nname = \"Scripted\"\nbase_url = \"" +
                    base + "/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_API_KEY\"\n");
      env.insert(env.end(), {"CODEX_HOME=" + home + "/codex", "FAKE_API_KEY=offline-test"});
      break;
  }
  return AgentSetup{std::move(env), std::move(model), work};
}

AcpSession::AcpSession(process::EventLoop& loop, Agent agent, int port, const Options& options)
    : loop_(loop) {
  if (options.root.empty()) {
    char tmpl[] = "/tmp/agentstream-acp-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  } else {
    root_ = options.root;
    owns_root_ = false;
  }
  AgentSetup setup = PrepareAgent(agent, port, root_);
  std::vector<std::string> env = std::move(setup.env);
  const std::optional<std::string> model = setup.model;
  env.insert(env.end(), options.extra_env.begin(), options.extra_env.end());
  if (agent == Agent::kCodex) {
    codex::CodexOptions c;
    c.program = AgentProgram(agent);
    c.env = env;
    c.cwd = work();
    c.thread_id = options.load_session_id;
    c.stall_timeout = options.stall_timeout;
    c.handshake_timeout = options.handshake_timeout;
    c.interrupt_timeout = options.interrupt_timeout;
    c.kill_plan = {Millis(500), Millis(500)};
    c.close_grace = Millis(2000);
    c.max_line_bytes = options.max_line_bytes;
    if (options.codex_history_page_turns > 0)
      c.history_page_turns = options.codex_history_page_turns;
    auto provider = std::make_unique<codex::CodexProvider>(loop_, std::move(c));
    stderr_tail_ = [p = provider.get()] { return ProviderTestPeer::StderrTail(*p); };
    provider_ = std::move(provider);
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
    auto provider = std::make_unique<opencode::OpencodeProvider>(loop_, std::move(oc));
    stderr_tail_ = [p = provider.get()] { return ProviderTestPeer::StderrTail(*p); };
    provider_ = std::move(provider);
  }
  AcpOptions o;
  if (agent == Agent::kCodex || agent == Agent::kOpencodeServe) {
    // configured below
  } else if (agent == Agent::kFake) {
    o.command = AgentCommand{"acp:fake", {"node", AgentProgram(agent)}, env};
  } else {
    Result<AgentCommand> preset = Preset(AgentName(agent), model, AgentProgram(agent));
    EXPECT_TRUE(preset.ok());
    o.command = *preset;
    o.command.env = env;
  }
  o.cwd = work();
  o.session_id = options.load_session_id;
  o.stall_timeout = options.stall_timeout;
  o.handshake_timeout = options.handshake_timeout;
  start_wait_ = options.handshake_timeout + Millis(30000);
  o.interrupt_timeout = options.interrupt_timeout;
  o.kill_plan = {Millis(500), Millis(500)};
  o.close_grace = Millis(2000);
  o.max_line_bytes = options.max_line_bytes;
  if (!provider_) {
    auto provider = std::make_unique<AcpProvider>(loop_, std::move(o));
    stderr_tail_ = [p = provider.get()] { return ProviderTestPeer::StderrTail(*p); };
    provider_ = std::move(provider);
  }
  runner_ = std::make_unique<SessionRunner>(
      *provider_, providers::testing::NewSessionState("acp"), ids_,
      [this](const std::vector<NewEvent>& batch) {
        for (const NewEvent& ne : batch) {
          Result<Event> e = ToEvent(ne, SessionId("s"), Cursor{Epoch(1), Seq(log_.size() + 1)});
          if (!e.ok()) {
            ADD_FAILURE() << "event does not decode: " << e.status().ToString();
            continue;
          }
          log_.push_back(std::move(e).value());
        }
      },
      effects_.Observer());
}

void AcpSession::Close() {
  bool closed = false;
  provider_->Close([&](const Status&) { closed = true; });
  loop_.RunUntil([&] { return closed; }, Millis(10000));
}

AcpSession::~AcpSession() {
  Close();
  runner_.reset();
  provider_.reset();
  std::error_code ec;
  if (owns_root_) fs::remove_all(root_, ec);
}

void AcpSession::Start() {
  std::optional<Status> started;
  provider_->Start([&](const Status& s) { started = s; });
  ASSERT_TRUE(WaitFor([&] { return started.has_value(); }, start_wait_))
      << "no session; stderr: " << StderrTail();
  ASSERT_TRUE(started->ok()) << started->ToString() << "; stderr: " << StderrTail();
}

void AcpSession::Submit(const std::string& text) {
  const std::string id = "client_" + std::to_string(next_client_id_++);
  const Status s = runner_->Command(SubmitPrompt{id, text, {}, WhileRunning::kQueue});
  ASSERT_TRUE(s.ok()) << s.ToString();
}

void AcpSession::Interrupt() { ASSERT_TRUE(runner_->Command(RequestInterrupt{}).ok()); }

bool AcpSession::WaitFor(const std::function<bool()>& pred, Millis timeout) {
  return loop_.RunUntil(pred, timeout);
}

bool AcpSession::WaitIdle(Millis timeout) {
  return WaitFor(
      [&] {
        const SessionStatus st = runner_->status();
        return (st == SessionStatus::kIdle || st == SessionStatus::kError) &&
               runner_->state().queue.empty() && !runner_->state().pending_after_teardown;
      },
      timeout);
}

std::vector<TurnId> AcpSession::Turns() const {
  std::vector<TurnId> out;
  for (const Event* e : Of<TurnStarted>()) out.push_back(*e->turn);
  return out;
}

std::string AcpSession::DumpLog() const {
  std::string out;
  for (const Event& e : log_) {
    const std::string payload = EncodePayload(e.payload);
    out += std::to_string(e.seq.value()) + " " + std::string(EventKindName(e.kind())) + " " +
           (e.turn ? e.turn->str() : "-") + " " + payload.substr(0, 200) + "\n";
  }
  return out;
}

std::string AcpSession::TextOfTurn(const TurnId& turn) const {
  std::string text;
  for (const Event& e : log_)
    if (const auto* d = std::get_if<AssistantMessageDelta>(&e.payload); d && e.turn == turn)
      text += d->text;
  return text;
}

void AcpSession::CheckInvariants() {
  for (const auto& v : timeline::CheckInvariants(log_, timeline::CheckOptions{}))
    ADD_FAILURE() << "invariant " << timeline::FormatViolation(v);
}

}  // namespace agentstream::providers::acp::testing
