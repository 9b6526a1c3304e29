// `follow`: the live timeline of one agent in the terminal (or its envelopes with --json), resumed
// after disconnects and daemon restarts, with permission requests answerable inline on a TTY.
#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/commands/command_util.h"
#include "cli/commands/commands.h"
#include "cli/commands/follow_renderer.h"
#include "client/daemon_api.h"
#include "client/endpoint.h"
#include "client/event_follower.h"

namespace agentstream::cli {

namespace {

constexpr std::size_t kMaxAnswerLine = 256;  // bytes of one typed answer kept

// What the stream thread and the answer thread share.
struct Shared {
  explicit Shared(RenderOptions options) : renderer(std::move(options)) {}
  std::mutex mutex;  // guards stdout, `renderer`
  FollowRenderer renderer;
};

void Write(const std::string& text) {
  if (text.empty()) return;
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// Answers the oldest pending permission request with `allow`.
void Answer(Shared& shared, client::Transport& http, const std::string& agent, bool allow) {
  std::string request;
  {
    std::lock_guard lock(shared.mutex);
    if (shared.renderer.pending().empty()) {
      Write(shared.renderer.CloseLine() + "(no permission request is pending)\n");
      return;
    }
    request = shared.renderer.pending().front().request_id;
  }
  client::DaemonApi api(http);
  const boost::json::value body = boost::json::object{{"decision", allow ? "allow" : "deny"}};
  auto reply = api.Call(
      "POST", client::DaemonApi::AgentPath(agent, "/permissions/" + client::PercentEncode(request)),
      &body);
  std::lock_guard lock(shared.mutex);
  Write(shared.renderer.CloseLine());
  if (reply.ok()) {
    Write(fmt::format("({} {})\n", allow ? "allowing" : "denying", request));
  } else {
    Write(fmt::format("(could not answer {}: {})\n", request, reply.status().message()));
  }
}

// Reads answers typed on stdin ("a" / "d" then Enter) until stdin ends. Runs on its own thread
// for the life of the process; owns its HTTP client.
void AnswerLoop(const std::shared_ptr<Shared>& shared, client::TransportOptions options,
                const std::string& agent) {
  auto http = client::Transport::Create(std::move(options));
  if (!http.ok()) return;
  std::string line;
  char c = 0;
  while (::read(STDIN_FILENO, &c, 1) == 1) {
    if (c != '\n') {
      if (line.size() < kMaxAnswerLine) line.push_back(c);
      continue;
    }
    const std::string word = line;
    line.clear();
    if (word == "a" || word == "allow" || word == "y") Answer(*shared, **http, agent, true);
    if (word == "d" || word == "deny" || word == "n") Answer(*shared, **http, agent, false);
  }
}

}  // namespace

int Follow(const ClientContext& context, const FollowOptions& options) {
  if (!options.from.empty() && !ValidCursor(options.from, "--from")) return kExitUsage;
  auto http = client::Transport::Create(context.http);
  if (!http.ok()) {
    PrintError(http.status());
    return kExitUsage;
  }
  const bool tty = !options.plain && !context.json && ::isatty(STDOUT_FILENO) == 1;
  const bool interactive = tty && ::isatty(STDIN_FILENO) == 1;
  auto shared = std::make_shared<Shared>(
      RenderOptions{.tty = tty, .agent = options.agent, .interactive = interactive});
  if (interactive) std::thread(AnswerLoop, shared, context.http, options.agent).detach();

  client::EventFollower follower(
      **http, options.agent,
      client::EventFollowerOptions{.from = options.from.empty() ? "-1" : options.from});
  auto on_event = [&](const EventRecord& record) {
    std::lock_guard lock(shared->mutex);
    Write(context.json ? EncodeEnvelope(record) + "\n" : shared->renderer.Render(record));
    return true;
  };
  auto on_retry = [&](const Status& why, std::chrono::milliseconds delay) {
    std::lock_guard lock(shared->mutex);
    Write(shared->renderer.CloseLine());
    fmt::print(stderr, "agentstream: {}; reconnecting in {:.1f} s\n", why.message(),
               static_cast<double>(delay.count()) / 1000.0);
  };
  const Status status = follower.Run(on_event, on_retry);
  std::lock_guard lock(shared->mutex);
  Write(shared->renderer.CloseLine());
  if (!status.ok()) {
    PrintError(status);
    return kExitError;
  }
  return kExitOk;
}

}  // namespace agentstream::cli
