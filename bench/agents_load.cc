// agents_load: many live agents on one daemon, each streaming as a working agent does, each
// watched by a client; commit-to-client latency, the daemon's CPU per event, its memory per
// agent, its descriptors and threads.
//
// The parent process runs the daemon's server in process (SQLite log with the default fsync
// durability, AgentManager, Server on a free loopback port, two I/O threads) and records, with a
// commit listener, when each event of each session became durable. A child process (this binary
// with --role clients) holds the clients, so that the parent's CPU and memory are the daemon's:
//   - per agent one WebSocket connection that creates the agent (`agents.create`), subscribes to
//     it, sends a prompt, answers its permission requests and sends the next prompt when its turn
//     ends; every tenth agent also has an SSE follower of its log (`live=sse`);
//   - a turn streams `--deltas-per-second` message deltas for `--turn-seconds`, with a tool call
//     halfway; every tenth turn the tool call first asks permission.
// Agents are the scripted provider in process (the load of the log and the fan-out), or with
// `--children` a real child process each: the ACP test agent of src/providers/acp/testdata (a
// Node process), so that process handling counts too.
//
// Phases: the clients connect and create their agents (idle, loaded); after --idle-seconds the
// turns start; the measured window is the next --seconds; then the clients stop prompting,
// interrupt the turns in flight, read on until no frame came for 2 s (at most 120 s) and write
// the arrival time of every seq they received. Latency is arrival minus commit, for the
// events committed in the window; an event committed in the window and never delivered is
// reported as missing, and a frame that skips a seq as a gap.
//
//   agents_load --agents 1000 --seconds 30
//   agents_load --agents 100 --children
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "load_process.h"
#include "process/child_process.h"
#include "process/event_loop.h"
#include "providers/scripted/scripted_provider.h"
#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "server/http_server.h"
#include "store/sqlite/sqlite_log.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using namespace agentstream::bench;  // load_process.h

// The shape of the load, shared by both processes.
struct Shape {
  int agents = 10;
  int turn_seconds = 30;
  int deltas_per_second = 20;
  int idle_seconds = 3;
  int seconds = 30;  // the measured window
  bool children = false;

  int Deltas() const { return turn_seconds * deltas_per_second; }
  int GapMs() const { return 1000 / deltas_per_second; }
  std::string Provider() const { return children ? "acp:load" : "scripted"; }
  // The prompt of turn `turn` of `deltas` deltas; every tenth turn asks permission for its tool
  // call.
  std::string Prompt(int turn, int deltas) const {
    const bool ask = turn % 10 == 9;
    if (children) return fmt::format("stream {} {}{}", deltas, GapMs(), ask ? " perm" : "");
    return fmt::format("stream {}{}", deltas, ask ? " permission" : "");
  }
};

// ---- clients (child process) ----

struct Arrival {
  std::uint64_t seq;
  SteadyNanos at;
};

struct ClientCounters {
  std::atomic<int> ready{0};
  std::atomic<int> failed{0};
  std::atomic<std::uint64_t> gaps{0};
  std::atomic<std::uint64_t> turns{0};
  std::atomic<std::uint64_t> permissions{0};
  std::atomic<bool> prompting{false};
  std::atomic<SteadyNanos> last_frame{0};
};

// The arrivals of one stream of one agent: each seq once, in order; a frame that starts past the
// next expected seq is a gap.
class Arrivals {
 public:
  void Start(std::uint64_t tail) { next_ = tail + 1; }
  void Through(std::uint64_t from, std::uint64_t to, ClientCounters& counters) {
    if (next_ == 0 || to < next_) return;
    if (from > next_) counters.gaps += from - next_;
    const SteadyNanos now = Now();
    for (std::uint64_t s = std::max(from, next_); s <= to; ++s) list_.push_back({s, now});
    next_ = to + 1;
  }
  const std::vector<Arrival>& list() const { return list_; }

 private:
  std::uint64_t next_ = 0;
  std::vector<Arrival> list_;
};

class AgentClient : public std::enable_shared_from_this<AgentClient> {
 public:
  AgentClient(asio::io_context& io, const Shape& shape, int index, ClientCounters& counters)
      : shape_(shape),
        index_(index),
        counters_(counters),
        ws_(asio::make_strand(io)),
        sse_(ws_.get_executor()),
        next_turn_(ws_.get_executor()) {}

  // Connects, creates the agent and subscribes (synchronously: before the run starts), then
  // reads asynchronously.
  void Start(const tcp::endpoint& endpoint) {
    beast::get_lowest_layer(ws_).connect(endpoint);
    ws_.handshake("127.0.0.1", "/ws");
    ws_.write(asio::buffer(fmt::format(
        R"({{"type":"agents.create","id":"c","agent":{{"provider":"{}","cwd":"/tmp","title":"load {}"}}}})",
        shape_.Provider(), index_)));
    agent_ = ReplyTo("c").at("agent").at("id").as_string().c_str();
    ws_.write(asio::buffer(fmt::format(R"({{"type":"subscribe","id":"s","agent":"{}"}})", agent_)));
    ws_arrivals_.Start(SeqAfter(beast::buffers_to_string(ReplyText("s").data()), R"("cursor")"));
    ++counters_.ready;
    if (index_ % 10 == 0) {
      sse_.connect(endpoint);
      const std::string request = fmt::format(
          "GET /v1/agents/{}/events?offset=-1&live=sse HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
          agent_);
      asio::write(sse_, asio::buffer(request));
      sse_arrivals_.Start(0);
      ReadSse();
    }
    ReadWs();
  }

  // The first prompt, `delay` from now. The first turn is `first_turn` of the agent's cycle of
  // ten and `deltas` long, so that from the start some turns end, some ask permission.
  void BeginTurns(std::chrono::milliseconds delay, int first_turn, int deltas) {
    asio::post(ws_.get_executor(), [self = shared_from_this(), delay, first_turn, deltas] {
      self->turn_ = first_turn;
      self->deltas_ = deltas;
      self->PromptAfter(delay);
    });
  }

  // Ends the agent's turn in flight: the end of the run.
  void Interrupt() {
    asio::post(ws_.get_executor(), [self = shared_from_this()] {
      self->next_turn_.cancel();
      self->Send(fmt::format(R"({{"type":"interrupt","id":"i","agent":"{}"}})", self->agent_));
    });
  }

  void Stop() {
    asio::post(ws_.get_executor(), [self = shared_from_this()] {
      self->next_turn_.cancel();
      beast::error_code ec;
      beast::get_lowest_layer(self->ws_).socket().close(ec);
      self->sse_.close(ec);
    });
  }

  void Write(std::ostream& out) const {
    out << "A " << agent_ << " ws " << ws_arrivals_.list().size() << '\n';
    for (const Arrival& a : ws_arrivals_.list()) out << a.seq << ' ' << a.at << '\n';
    if (index_ % 10 != 0) return;
    out << "A " << agent_ << " sse " << sse_arrivals_.list().size() << '\n';
    for (const Arrival& a : sse_arrivals_.list()) out << a.seq << ' ' << a.at << '\n';
  }

 private:
  // Reads until the reply to request `id`; the frames before it are events of no interest yet.
  beast::flat_buffer ReplyText(std::string_view id) {
    const std::string marker = fmt::format(R"("id":"{}")", id);
    for (;;) {
      beast::flat_buffer buffer;
      ws_.read(buffer);
      if (beast::buffers_to_string(buffer.data()).find(marker) != std::string::npos) return buffer;
    }
  }
  json::object ReplyTo(std::string_view id) {
    beast::flat_buffer buffer = ReplyText(id);
    json::value reply = json::parse(beast::buffers_to_string(buffer.data()));
    if (reply.at("type").as_string() == "error")
      throw std::runtime_error("agents.create: " + json::serialize(reply));
    return reply.as_object();
  }

  void Send(std::string text) {
    outbox_.push_back(std::move(text));
    if (outbox_.size() == 1) WriteNext();
  }
  void WriteNext() {
    ws_.async_write(asio::buffer(outbox_.front()),
                    [self = shared_from_this()](beast::error_code ec, std::size_t) {
                      if (ec) return;
                      self->outbox_.pop_front();
                      if (!self->outbox_.empty()) self->WriteNext();
                    });
  }

  void PromptAfter(std::chrono::milliseconds delay) {
    next_turn_.expires_after(delay);
    next_turn_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || !self->counters_.prompting) return;
      const int turn = self->turn_++;
      const int deltas = std::exchange(self->deltas_, self->shape_.Deltas());
      self->Send(fmt::format(
          R"({{"type":"send","id":"p{}","agent":"{}","text":"{}","clientMessageId":"load-{}-{}"}})",
          turn, self->agent_, self->shape_.Prompt(turn, deltas), self->index_, turn));
    });
  }

  void ReadWs() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return;
      const std::string text = beast::buffers_to_string(self->buffer_.data());
      self->buffer_.consume(self->buffer_.size());
      self->OnWsFrame(text);
      self->ReadWs();
    });
  }

  void OnWsFrame(const std::string& text) {
    if (text.find(R"("type":"events")") == std::string::npos) {
      // Once the run ends, its interrupts race the turns they end (a turn already over, a
      // permission answered after its turn was interrupted): those answers are no failure.
      if (text.find(R"("type":"error")") != std::string::npos && counters_.prompting) {
        fmt::print(stderr, "agent {}: {}\n", agent_, text);
        ++counters_.failed;
      }
      return;
    }
    counters_.last_frame = Now();
    ws_arrivals_.Through(SeqAfter(text, R"("from")"), SeqAfter(text, R"("to")"), counters_);
    const bool asks = text.find(R"("permission.requested")") != std::string::npos;
    const bool ends = text.find(R"("kind":"turn.)") != std::string::npos;
    if (!asks && !ends) return;
    json::value frame = json::parse(text);
    for (const json::value& event : frame.at("events").as_array()) {
      const json::string& kind = event.at("kind").as_string();
      if (kind == "permission.requested") {
        ++counters_.permissions;
        Send(fmt::format(
            R"({{"type":"permission.reply","id":"q","agent":"{}","requestId":"{}","decision":"allow"}})",
            agent_, event.at("payload").at("requestId").as_string().c_str()));
      } else if (kind == "turn.completed" || kind == "turn.failed" || kind == "turn.canceled") {
        ++counters_.turns;
        PromptAfter(std::chrono::milliseconds(500));  // a moment to read the answer
      }
    }
  }

  // Control events carry the offset through which data was delivered.
  void ReadSse() {
    sse_.async_read_some(
        asio::buffer(chunk_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
          if (ec) return;
          self->counters_.last_frame = Now();
          self->sse_pending_.append(self->chunk_.data(), n);
          std::size_t end = 0;
          while ((end = self->sse_pending_.find("\n\n")) != std::string::npos) {
            const std::string event = self->sse_pending_.substr(0, end);
            self->sse_pending_.erase(0, end + 2);
            if (event.find("event: control") == std::string::npos) continue;
            const std::uint64_t next = SeqAfter(event, R"("streamNextOffset")");
            self->sse_arrivals_.Through(self->sse_through_ + 1, next, self->counters_);
            self->sse_through_ = std::max(self->sse_through_, next);
          }
          self->ReadSse();
        });
  }

  const Shape& shape_;
  const int index_;
  ClientCounters& counters_;
  beast::websocket::stream<beast::tcp_stream> ws_;
  tcp::socket sse_;
  asio::steady_timer next_turn_;
  std::string agent_;
  beast::flat_buffer buffer_;
  std::deque<std::string> outbox_;
  int turn_ = 0;
  int deltas_ = 0;
  Arrivals ws_arrivals_;
  Arrivals sse_arrivals_;
  std::uint64_t sse_through_ = 0;
  std::array<char, 16384> chunk_{};
  std::string sse_pending_;
};

void Say(std::string_view line) {
  fmt::print("{}\n", line);
  std::fflush(stdout);
}

int RunClients(const Shape& shape, std::uint16_t port, const std::string& out_path) {
  RaiseFileLimit();
  asio::io_context io;
  ClientCounters counters;
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  std::vector<std::shared_ptr<AgentClient>> clients;
  auto work = asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });
  try {
    for (int i = 0; i < shape.agents; ++i) {
      clients.push_back(std::make_shared<AgentClient>(io, shape, i, counters));
      clients.back()->Start(endpoint);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "clients: agent {}: {}\n", clients.size(), e.what());
    work.reset();
    io.stop();
    io_thread.join();
    return 1;
  }
  Say(fmt::format("ready {}", counters.ready.load()));
  std::this_thread::sleep_for(std::chrono::seconds(shape.idle_seconds));

  counters.prompting = true;
  std::mt19937 random(7);
  std::uniform_int_distribution<int> spread(0, 999);
  std::uniform_int_distribution<int> first_deltas(1, shape.Deltas());
  for (int i = 0; i < shape.agents; ++i)
    clients[i]->BeginTurns(std::chrono::milliseconds(spread(random)), i % 10, first_deltas(random));
  Say("live");
  std::this_thread::sleep_for(std::chrono::seconds(shape.seconds));
  Say("end");
  // The turns in flight are interrupted; the clients read on until no frame came for 2 s (at most
  // 120 s), so that an event not received by then was never delivered.
  counters.prompting = false;
  for (auto& client : clients) client->Interrupt();
  const SteadyNanos drain_limit = Now() + SteadyNanos{120'000'000'000};
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } while (Now() - counters.last_frame.load() < SteadyNanos{2'000'000'000} && Now() < drain_limit);
  for (auto& client : clients) client->Stop();
  work.reset();
  io_thread.join();

  std::ofstream out(out_path);
  for (const auto& client : clients) client->Write(out);
  out.close();
  Say(fmt::format("done turns={} permissions={} gaps={} errors={}", counters.turns.load(),
                  counters.permissions.load(), counters.gaps.load(), counters.failed.load()));
  // The load did what it says: turns ended, and (with ten agents or more) permissions were asked.
  const bool ran = counters.turns > 0 && (shape.agents < 10 || counters.permissions > 0);
  return counters.failed == 0 && counters.gaps == 0 && ran ? 0 : 1;
}

// ---- the daemon (parent process) ----

// The scripted agent of a load turn: deltas of one token, a tool call halfway that asks
// permission when the prompt says so.
class LoadFactory final : public agentstream::runtime::ProviderFactory {
 public:
  LoadFactory(const Shape& shape, agentstream::runtime::ProviderFactoryOptions options)
      : shape_(shape), others_(std::move(options)) {}

  agentstream::Result<std::unique_ptr<agentstream::providers::AgentProvider>> Make(
      const agentstream::api::AgentConfig& config,
      const std::optional<agentstream::providers::PersistenceHandle>& resume,
      agentstream::process::EventLoop& loop) override {
    using agentstream::providers::scripted::ScriptStep;
    if (config.provider != "scripted") return others_.Make(config, resume, loop);
    const agentstream::process::Millis gap(shape_.GapMs());
    // "stream DELTAS [permission]" (Shape::Prompt).
    auto turn = [gap](const std::string& prompt) {
      const int deltas = std::max(2, std::atoi(prompt.c_str() + prompt.find(' ') + 1));
      const auto half = [&](int n) {
        std::string text;
        for (int i = 0; i < n; ++i) text += "token ";
        return ScriptStep::Text(text, n, gap);
      };
      json::object input{{"command", "ls"}};
      std::vector<ScriptStep> steps;
      steps.push_back(half(deltas / 2));
      if (prompt.find("permission") != std::string::npos)
        steps.push_back(ScriptStep::Permission("Bash", input, "README.md\nsrc\n"));
      else
        steps.push_back(ScriptStep::Tool("Bash", input, "README.md\nsrc\n"));
      steps.push_back(half(deltas - deltas / 2));
      return steps;
    };
    return std::unique_ptr<agentstream::providers::AgentProvider>(
        std::make_unique<agentstream::providers::scripted::ScriptedProvider>(loop.timers(), turn));
  }
  std::vector<std::string> Names() const override { return others_.Names(); }

 private:
  const Shape& shape_;
  agentstream::runtime::DefaultProviderFactory others_;
};

// When each seq of each session became durable.
class CommitTimes {
 public:
  void Record(const agentstream::CommitNotice& notice) {
    const SteadyNanos now = Now();
    std::lock_guard lock(mu_);
    auto& times = sessions_[notice.session.str()];
    const auto tail = static_cast<std::size_t>(notice.tail.value());
    if (tail + 1 <= times.size()) return;
    times.resize(tail + 1, now);
  }
  // Events committed between Begin() and End().
  void Begin() {
    std::lock_guard lock(mu_);
    window_begin_ = Now();
  }
  void End() {
    std::lock_guard lock(mu_);
    window_end_ = Now();
  }
  // The commit time of `seq` of `session`, 0 when unknown.
  SteadyNanos At(const std::string& session, std::uint64_t seq) const {
    auto it = sessions_.find(session);
    if (it == sessions_.end() || seq >= it->second.size()) return 0;
    return it->second[seq];
  }
  // The seqs of `session` committed in the window.
  std::vector<std::uint64_t> InWindow(const std::string& session) const {
    std::vector<std::uint64_t> seqs;
    auto it = sessions_.find(session);
    if (it == sessions_.end()) return seqs;
    for (std::size_t s = 1; s < it->second.size(); ++s)
      if (it->second[s] >= window_begin_ && it->second[s] < window_end_) seqs.push_back(s);
    return seqs;
  }
  std::uint64_t CommittedInWindow() const {
    std::uint64_t n = 0;
    for (const auto& [session, times] : sessions_)
      for (std::size_t s = 1; s < times.size(); ++s)
        if (times[s] >= window_begin_ && times[s] < window_end_) ++n;
    return n;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<SteadyNanos>> sessions_;
  SteadyNanos window_begin_ = 0;
  SteadyNanos window_end_ = 0;
};

struct Measure {
  double cpu_seconds = 0;
  SteadyNanos at = 0;
};

// The resident memory of this process's descendants (the agents' supervisors and processes),
// leaving out the subtree of `skip` (the clients).
std::size_t DescendantsResidentBytes(int skip) {
  std::unordered_map<int, std::vector<int>> children;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(it->path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    int ppid = 0;
    rest >> state >> ppid;
    children[ppid].push_back(std::stoi(name));
  }
  std::size_t total = 0;
  std::vector<int> open{static_cast<int>(getpid())};
  while (!open.empty()) {
    const int pid = open.back();
    open.pop_back();
    for (int child : children[pid]) {
      if (child == skip) continue;
      total += ResidentBytes(std::to_string(child));
      open.push_back(child);
    }
  }
  return total;
}

int RunLoad(const Shape& shape, const std::string& self_path, const std::string& acp_agent) {
  using namespace agentstream;
  RaiseFileLimit();
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("agentstream-agents-{}", static_cast<long>(getpid()));
  std::filesystem::create_directories(dir);
  SqliteLogOptions log_options;
  log_options.path = (dir / "log.db").string();
  auto opened = OpenSqliteEventLog(log_options);
  if (!opened.ok()) return fmt::print(stderr, "{}\n", opened.status().ToString()), 1;
  EventLog& log = **opened;

  process::EventLoop loop;
  runtime::ProviderFactoryOptions provider_options;
  provider_options.acp_agents["acp:load"] = {"acp:load", {"node", acp_agent}, {}};
  LoadFactory factory(shape, provider_options);
  runtime::AgentManagerOptions manager_options;
  // The default bound on live runtimes (256) would stop the idlest agents to make room.
  manager_options.max_live_agents = static_cast<std::size_t>(shape.agents);
  runtime::AgentManager agents(log, factory, loop, manager_options);
  std::atomic<bool> stop_loop{false};
  std::thread loop_thread([&] {
    while (!stop_loop) loop.RunUntil([&] { return stop_loop.load(); }, process::Millis(1000));
  });
  server::ServerOptions server_options;
  server_options.port = 0;
  server_options.threads = 2;
  server_options.max_connections = 16384;
  server_options.max_waiting_per_address = 16384;  // every client is 127.0.0.1
  server::Server server(agents, log, server_options);
  if (Status s = server.Start(); !s.ok()) return fmt::print(stderr, "{}\n", s.ToString()), 1;

  CommitTimes commits;
  ListenerRegistration listening =
      log.SubscribeCommits([&](const CommitNotice& notice) { commits.Record(notice); });

  const std::size_t rss_before = ResidentBytes();
  const std::string samples = (dir / "arrivals.txt").string();
  std::string phase;
  std::string summary;
  Measure live, end;
  std::size_t rss_idle = 0, rss_live = 0, children_idle = 0, children_live = 0;
  std::size_t fds_live = 0, threads_live = 0;
  std::atomic<bool> finished{false};
  bool clients_ok = false;
  int clients_pid = 0;  // set once spawned, before any line of the clients is read
  process::EventLoop child_loop;
  auto spawned = process::ChildProcess::Spawn(
      child_loop,
      process::SpawnOptions{
          {self_path, "--role", "clients", "--port", std::to_string(server.port()), "--agents",
           std::to_string(shape.agents), "--turn-seconds", std::to_string(shape.turn_seconds),
           "--deltas-per-second", std::to_string(shape.deltas_per_second), "--idle-seconds",
           std::to_string(shape.idle_seconds), "--seconds", std::to_string(shape.seconds), "--out",
           samples, shape.children ? "--children" : "--no-children"}},
      process::ProcessHandlers{[&](process::Frame frame) {
                                 const std::string line(frame.text);
                                 if (line.rfind("ready", 0) == 0) {
                                   std::this_thread::sleep_for(std::chrono::seconds(1));  // settle
                                   rss_idle = ResidentBytes();
                                   children_idle = DescendantsResidentBytes(clients_pid);
                                 } else if (line == "live") {
                                   commits.Begin();
                                   live = {CpuSeconds(), Now()};
                                 } else if (line == "end") {
                                   end = {CpuSeconds(), Now()};
                                   commits.End();
                                   rss_live = ResidentBytes();
                                   children_live = DescendantsResidentBytes(clients_pid);
                                   fds_live = OpenDescriptors();
                                   threads_live = ThreadCount();
                                 } else if (line.rfind("done", 0) == 0) {
                                   summary = line;
                                 }
                                 phase = line;
                               },
                               [&](process::ExitInfo info) {
                                 if (info.exit_code != 0)
                                   fmt::print(stderr, "clients: {}\n", info.Describe());
                                 clients_ok = info.exit_code == 0;
                                 finished = true;
                               }});
  if (!spawned.ok()) return fmt::print(stderr, "{}\n", spawned.status().ToString()), 1;
  std::unique_ptr<process::ChildProcess> child = std::move(*spawned);
  clients_pid = child->pid();
  const process::Millis limit((shape.idle_seconds + shape.seconds + 600) * 1000);
  child_loop.RunUntil([&] { return finished.load(); }, limit);
  listening.Reset();

  // Latency of every delivery of an event committed in the window; the missing ones.
  std::vector<double> ws_ms, sse_ms;
  std::uint64_t missing = 0;
  std::ifstream in(samples);
  std::string tag, agent, transport;
  std::size_t count = 0;
  while (in >> tag >> agent >> transport >> count) {
    std::unordered_map<std::uint64_t, SteadyNanos> arrived;
    for (std::size_t i = 0; i < count; ++i) {
      std::uint64_t seq = 0;
      SteadyNanos at = 0;
      in >> seq >> at;
      arrived[seq] = at;
    }
    auto& out = transport == "ws" ? ws_ms : sse_ms;
    for (std::uint64_t seq : commits.InWindow(agent)) {
      auto it = arrived.find(seq);
      if (it == arrived.end()) {
        ++missing;
        continue;
      }
      out.push_back(static_cast<double>(it->second - commits.At(agent, seq)) / 1e6);
    }
  }
  const double window_s = static_cast<double>(end.at - live.at) / 1e9;
  const std::uint64_t events = commits.CommittedInWindow();
  const double cpu = end.cpu_seconds - live.cpu_seconds;
  const auto per_agent = [&](std::size_t rss) {
    return static_cast<double>(rss - std::min(rss, rss_before)) / shape.agents / 1024;
  };
  fmt::print("agents={} provider={} window_s={:.1f} events={} events_per_s={:.0f}\n", shape.agents,
             shape.Provider(), window_s, events, static_cast<double>(events) / window_s);
  fmt::print("{}\n", summary.empty() ? "clients: no summary" : summary);
  fmt::print("ws_latency_ms p50={:.1f} p99={:.1f} max={:.1f} samples={}\n", Percentile(ws_ms, 0.5),
             Percentile(ws_ms, 0.99), Percentile(ws_ms, 1.0), ws_ms.size());
  fmt::print("sse_latency_ms p50={:.1f} p99={:.1f} max={:.1f} samples={} missing={}\n",
             Percentile(sse_ms, 0.5), Percentile(sse_ms, 0.99), Percentile(sse_ms, 1.0),
             sse_ms.size(), missing);
  fmt::print("daemon_cpu cores={:.2f} us_per_event={:.1f}\n", cpu / window_s,
             events ? cpu * 1e6 / static_cast<double>(events) : 0.0);
  fmt::print(
      "daemon_rss_mib before={:.0f} idle={:.0f} live={:.0f} kib_per_idle_agent={:.0f} "
      "kib_per_live_agent={:.0f}\n",
      rss_before / 1048576.0, rss_idle / 1048576.0, rss_live / 1048576.0, per_agent(rss_idle),
      per_agent(rss_live));
  if (shape.children)
    fmt::print("children_rss_mib idle={:.0f} live={:.0f}\n", children_idle / 1048576.0,
               children_live / 1048576.0);
  fmt::print("daemon_fds={} daemon_threads={}\n", fds_live, threads_live);

  server.Stop();
  std::atomic<bool> stopped{false};
  loop.Post([&] { agents.Shutdown([&] { stopped = true; }); });
  while (!stopped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop_loop = true;
  loop.Post([] {});
  loop_thread.join();
  std::filesystem::remove_all(dir);
  // Every event committed in the window reached every client once, in order, and every request
  // of the clients was answered without an error.
  return missing == 0 && clients_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"agents_load: many live agents on one daemon, each streaming and watched"};
  std::string role = "load";
  Shape shape;
  std::uint16_t port = 0;
  std::string out;
  std::string acp_agent = AGENTSTREAM_FAKE_ACP_AGENT;
  app.add_option("--role", role, "load (default) or clients (internal)");
  app.add_option("--agents", shape.agents, "live agents, each with a WebSocket client");
  app.add_option("--turn-seconds", shape.turn_seconds, "length of a turn");
  app.add_option("--deltas-per-second", shape.deltas_per_second, "message deltas per second");
  app.add_option("--idle-seconds", shape.idle_seconds, "idle, loaded phase before the turns");
  app.add_option("--seconds", shape.seconds, "the measured window");
  app.add_flag("--children,!--no-children", shape.children,
               "agents are child processes (the ACP test agent, Node)");
  app.add_option("--acp-agent", acp_agent, "the ACP test agent's script");
  app.add_option("--port", port);
  app.add_option("--out", out);
  CLI11_PARSE(app, argc, argv);
  if (role == "clients") return RunClients(shape, port, out);
  return RunLoad(shape, std::filesystem::canonical("/proc/self/exe").string(), acp_agent);
}
