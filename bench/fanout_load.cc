// fanout_load: latency from commit to client frame, and server memory per idle subscriber, for
// N subscribers of one session over WebSocket or server-sent events.
//
// The parent process runs the daemon's server in process (SQLite log, AgentManager, Server on a
// free loopback port) and writes events straight into one session's log, one at a time at a fixed
// interval. A commit listener records when each event became durable. A child process (this
// binary with --role clients) opens N connections, subscribes, and records when each seq arrived.
// Both use CLOCK_MONOTONIC (steady_clock), which is shared by the processes of one machine, so
// the latency of (client, seq) is receive time minus commit time. Keeping the clients in another
// process lets the parent's resident memory measure the server alone: memory per idle subscriber
// is (RSS with N idle subscribers - RSS before they connected) / N.
//
// `--transport raw` measures the floor of this machine for the same pattern: a bare Asio server
// (same thread count) that writes a line "SEQ\n" to every connected socket when an event commits,
// with no log read, no JSON and no protocol. Ratios to it, taken in the same conditions, say how
// much of the latency is the daemon's own.
//
//   fanout_load --subscribers 100 --transport ws --events 300 --interval-us 2000
#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "core/event_codec.h"
#include "load_process.h"
#include "process/child_process.h"
#include "process/event_loop.h"
#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "server/http_server.h"
#include "store/sqlite/sqlite_log.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using namespace agentstream::bench;  // load_process.h

// ---- clients (child process) ----

struct ClientOptions {
  std::uint16_t port = 0;
  std::string session;
  std::string transport = "ws";
  int subscribers = 1;
  std::uint64_t last_seq = 0;  // the run is over once every client saw it
  std::string out;
};

// One subscriber. Records the arrival time of every seq it receives, once.
class Client : public std::enable_shared_from_this<Client> {
 public:
  Client(asio::io_context& io, const ClientOptions& options, std::atomic<int>& ready,
         std::atomic<int>& finished)
      : options_(options), ws_(io), socket_(io), ready_(ready), finished_(finished) {
    arrivals_.assign(options.last_seq + 1, 0);
  }

  void Start(const tcp::endpoint& endpoint) {
    if (options_.transport == "ws") {
      beast::get_lowest_layer(ws_).connect(endpoint);
      ws_.handshake("127.0.0.1", "/ws");
      ws_.write(asio::buffer(
          fmt::format(R"({{"type":"subscribe","id":"s","agent":"{}"}})", options_.session)));
      ReadWs();
    } else if (options_.transport == "raw") {
      socket_.connect(endpoint);
      socket_.set_option(tcp::no_delay(true));
      ++ready_;
      ReadRaw();
    } else {
      socket_.connect(endpoint);
      const std::string request = fmt::format(
          "GET /v1/agents/{}/events?offset=-1&live=sse HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
          options_.session);
      asio::write(socket_, asio::buffer(request));
      ReadSse();
    }
  }

  const std::vector<SteadyNanos>& arrivals() const { return arrivals_; }

 private:
  void Record(std::uint64_t through) {
    const SteadyNanos now = Now();
    for (std::uint64_t s = next_; s <= through && s <= options_.last_seq; ++s) arrivals_[s] = now;
    next_ = std::max(next_, through + 1);
    if (!finished_flag_ && next_ > options_.last_seq) {
      finished_flag_ = true;
      ++finished_;
    }
  }

  void ReadWs() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) {
        fmt::print(stderr, "client: {} ({})\n", ec.message(), self->ws_.reason().reason.c_str());
        return;
      }
      const std::string text = beast::buffers_to_string(self->buffer_.data());
      self->buffer_.consume(self->buffer_.size());
      if (text.find(R"("type":"subscribed")") != std::string::npos) {
        self->Record(SeqAfter(text, R"("cursor")"));
        ++self->ready_;
      } else if (text.find(R"("type":"events")") != std::string::npos) {
        self->Record(SeqAfter(text, R"("to")"));
      }
      self->ReadWs();
    });
  }

  // Lines "SEQ\n" from the raw floor server.
  void ReadRaw() {
    socket_.async_read_some(asio::buffer(chunk_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) return;
                              self->pending_.append(self->chunk_.data(), n);
                              std::size_t end;
                              while ((end = self->pending_.find('\n')) != std::string::npos) {
                                self->Record(std::stoull(self->pending_.substr(0, end)));
                                self->pending_.erase(0, end + 1);
                              }
                              self->ReadRaw();
                            });
  }

  // Control events carry the offset through which data was delivered.
  void ReadSse() {
    socket_.async_read_some(asio::buffer(chunk_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) return;
                              self->pending_.append(self->chunk_.data(), n);
                              std::size_t end;
                              while ((end = self->pending_.find("\n\n")) != std::string::npos) {
                                const std::string event = self->pending_.substr(0, end);
                                self->pending_.erase(0, end + 2);
                                if (event.find("event: control") == std::string::npos) continue;
                                self->Record(SeqAfter(event, R"("streamNextOffset")"));
                                if (!self->sse_ready_) self->sse_ready_ = true, ++self->ready_;
                              }
                              self->ReadSse();
                            });
  }

  const ClientOptions& options_;
  beast::websocket::stream<beast::tcp_stream> ws_;
  tcp::socket socket_;  // SSE and raw transports
  beast::flat_buffer buffer_;
  std::array<char, 16384> chunk_{};
  std::string pending_;
  bool sse_ready_ = false;
  bool finished_flag_ = false;
  std::atomic<int>& ready_;
  std::atomic<int>& finished_;
  std::uint64_t next_ = 1;
  std::vector<SteadyNanos> arrivals_;
};

int RunClients(const ClientOptions& options) {
  RaiseFileLimit();
  asio::io_context io;
  std::atomic<int> ready{0}, finished{0};
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), options.port);
  std::vector<std::shared_ptr<Client>> clients;
  for (int i = 0; i < options.subscribers; ++i) {
    clients.push_back(std::make_shared<Client>(io, options, ready, finished));
    clients.back()->Start(endpoint);
  }
  std::thread io_thread([&] {
    auto guard = asio::make_work_guard(io);
    io.run();
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ready < options.subscribers && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  fmt::print("ready {}\n", ready.load());
  std::fflush(stdout);
  while (finished < options.subscribers && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  io.stop();
  io_thread.join();
  std::ofstream out(options.out);
  for (const auto& client : clients)
    for (std::uint64_t s = 1; s <= options.last_seq; ++s)
      out << s << ' ' << client->arrivals()[s] << '\n';
  out.close();
  fmt::print("done {}\n", finished.load());
  std::fflush(stdout);
  return finished == options.subscribers ? 0 : 1;
}

// ---- server and writer (parent process) ----

struct LoadOptions {
  int subscribers = 100;
  std::string transport = "ws";
  int events = 300;
  int interval_us = 2000;
  int server_threads = 2;
};

// The floor: writes "SEQ\n" to every accepted socket, one write per socket per event.
class RawBroadcaster {
 public:
  explicit RawBroadcaster(int threads) : acceptor_(io_, tcp::endpoint(tcp::v4(), 0)) {
    Accept();
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~RawBroadcaster() {
    io_.stop();
    for (auto& t : threads_) t.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

  void Publish(std::uint64_t seq) {
    auto line = std::make_shared<const std::string>(std::to_string(seq) + "\n");
    std::lock_guard lock(mu_);
    for (const auto& peer : peers_)
      asio::post(peer->strand, [peer, line] {
        peer->pending += *line;
        if (!peer->writing) Write(peer);
      });
  }

 private:
  struct Peer {
    explicit Peer(tcp::socket s) : socket(std::move(s)), strand(socket.get_executor()) {}
    tcp::socket socket;
    asio::strand<tcp::socket::executor_type> strand;
    std::string pending, writing_now;
    bool writing = false;
  };
  static void Write(const std::shared_ptr<Peer>& peer) {
    peer->writing = true;
    peer->writing_now.swap(peer->pending);
    peer->pending.clear();
    asio::async_write(peer->socket, asio::buffer(peer->writing_now),
                      asio::bind_executor(peer->strand, [peer](beast::error_code ec, std::size_t) {
                        peer->writing = false;
                        if (!ec && !peer->pending.empty()) Write(peer);
                      }));
  }
  void Accept() {
    acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code ec, tcp::socket s) {
      if (ec) return;
      s.set_option(tcp::no_delay(true), ec);
      auto peer = std::make_shared<Peer>(std::move(s));
      {
        std::lock_guard lock(mu_);
        peers_.push_back(peer);
      }
      Accept();
    });
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::mutex mu_;
  std::vector<std::shared_ptr<Peer>> peers_;  // guarded by mu_
  std::vector<std::thread> threads_;
};

int RunLoad(const LoadOptions& options, const std::string& self_path) {
  using namespace agentstream;
  RaiseFileLimit();
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("agentstream-fanout-{}", static_cast<long>(getpid()));
  std::filesystem::create_directories(dir);
  SqliteLogOptions log_options;
  log_options.path = (dir / "log.db").string();
  log_options.durability = Durability::kOs;
  auto opened = OpenSqliteEventLog(log_options);
  if (!opened.ok()) return fmt::print(stderr, "{}\n", opened.status().ToString()), 1;
  EventLog& log = **opened;
  const SessionId session("ses_fanout");
  auto created = log.CreateSession(
      session, SessionMeta{"scripted", "/bench", "fanout"},
      {MakeNewEvent(SessionCreated{"scripted", "/bench", "fanout", std::nullopt, std::nullopt})});
  if (!created.ok()) return fmt::print(stderr, "{}\n", created.status().ToString()), 1;

  process::EventLoop loop;
  runtime::DefaultProviderFactory factory;
  runtime::AgentManager agents(log, factory, loop);
  std::atomic<bool> stop_loop{false};
  std::thread loop_thread([&] {
    while (!stop_loop) loop.RunUntil([&] { return stop_loop.load(); }, process::Millis(1000));
  });
  server::ServerOptions server_options;
  server_options.port = 0;
  server_options.threads = options.server_threads;
  server_options.max_connections = 16384;
  // Every subscriber connects from 127.0.0.1, SSE ones all at once.
  server_options.max_waiting_per_address = 16384;
  server::Server server(agents, log, server_options);
  if (Status s = server.Start(); !s.ok()) return fmt::print(stderr, "{}\n", s.ToString()), 1;
  std::unique_ptr<RawBroadcaster> raw;
  if (options.transport == "raw") raw = std::make_unique<RawBroadcaster>(options.server_threads);

  // Commit times, indexed by seq; seq 1 is SessionCreated.
  const std::uint64_t last_seq = 1 + static_cast<std::uint64_t>(options.events);
  std::vector<std::atomic<SteadyNanos>> committed(last_seq + 1);
  ListenerRegistration commits = log.SubscribeCommits([&](const CommitNotice& notice) {
    if (notice.session != session || notice.tail.value() > last_seq) return;
    committed[notice.tail.value()] = Now();
    if (raw) raw->Publish(notice.tail.value());
  });

  const std::size_t rss_before = ResidentBytes();
  const std::string samples = (dir / "samples.txt").string();
  std::atomic<int> ready{-1}, done{-1};
  std::unique_ptr<process::ChildProcess> child;
  process::EventLoop child_loop;
  auto spawned = process::ChildProcess::Spawn(
      child_loop,
      process::SpawnOptions{{self_path, "--role", "clients", "--port",
                             std::to_string(raw ? raw->port() : server.port()), "--session",
                             session.str(), "--transport", options.transport, "--subscribers",
                             std::to_string(options.subscribers), "--last-seq",
                             std::to_string(last_seq), "--out", samples}},
      process::ProcessHandlers{[&](process::Frame frame) {
                                 std::string_view line = frame.text;
                                 if (line.rfind("ready ", 0) == 0)
                                   ready = std::stoi(std::string(line.substr(6)));
                                 if (line.rfind("done ", 0) == 0)
                                   done = std::stoi(std::string(line.substr(5)));
                               },
                               [&](process::ExitInfo info) {
                                 if (done < 0) fmt::print(stderr, "clients: {}\n", info.Describe());
                                 if (done < 0) done = 0;
                               }});
  if (!spawned.ok()) return fmt::print(stderr, "{}\n", spawned.status().ToString()), 1;
  child = std::move(*spawned);
  child_loop.RunUntil([&] { return ready >= 0; }, process::Millis(180000));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let the idle state settle
  const std::size_t rss_idle = ResidentBytes();

  for (int i = 0; i < options.events; ++i) {
    AppendRequest request{
        session,
        std::nullopt,
        std::nullopt,
        std::nullopt,
        {MakeNewEvent(AssistantMessageDelta{MessageId("m"), "token "}, TurnId("t"))}};
    if (auto r = log.Append(std::move(request)); !r.ok())
      return fmt::print(stderr, "{}\n", r.status().ToString()), 1;
    std::this_thread::sleep_for(std::chrono::microseconds(options.interval_us));
  }
  child_loop.RunUntil([&] { return done >= 0 && child->exited(); }, process::Millis(180000));

  std::vector<double> latencies_us;
  std::ifstream in(samples);
  std::uint64_t seq = 0;
  SteadyNanos at = 0;
  std::size_t missing = 0;
  while (in >> seq >> at) {
    if (seq < 2 || seq > last_seq) continue;  // seq 1 predates the subscriptions
    if (at == 0 || committed[seq] == 0) {
      ++missing;
      continue;
    }
    latencies_us.push_back(static_cast<double>(at - committed[seq]) / 1000.0);
  }
  fmt::print(
      "transport={} subscribers={} events={} interval_us={} ready={} finished={} samples={} "
      "missing={}\n",
      options.transport, options.subscribers, options.events, options.interval_us, ready.load(),
      done.load(), latencies_us.size(), missing);
  fmt::print("latency_us p50={:.0f} p99={:.0f} max={:.0f}\n", Percentile(latencies_us, 0.50),
             Percentile(latencies_us, 0.99), Percentile(latencies_us, 1.0));
  fmt::print("server_rss_bytes before={} idle={} per_idle_subscriber={:.0f}\n", rss_before,
             rss_idle,
             static_cast<double>(rss_idle - std::min(rss_idle, rss_before)) /
                 std::max(1, options.subscribers));
  commits.Reset();
  raw.reset();
  server.Stop();
  stop_loop = true;
  loop.Post([] {});
  loop_thread.join();
  std::filesystem::remove_all(dir);
  return missing == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fanout_load: commit-to-client latency and memory per idle subscriber"};
  std::string role = "load";
  LoadOptions load;
  ClientOptions clients;
  app.add_option("--role", role, "load (default) or clients (internal)");
  app.add_option("--subscribers", load.subscribers, "subscribers of the session");
  app.add_option("--transport", load.transport, "ws, sse or raw (the machine's floor)")
      ->check(CLI::IsMember({"ws", "sse", "raw"}));
  app.add_option("--events", load.events, "events to append, one per interval");
  app.add_option("--interval-us", load.interval_us, "pause between appends");
  app.add_option("--server-threads", load.server_threads, "server I/O threads");
  app.add_option("--port", clients.port);
  app.add_option("--session", clients.session);
  app.add_option("--last-seq", clients.last_seq);
  app.add_option("--out", clients.out);
  CLI11_PARSE(app, argc, argv);
  if (role == "clients") {
    clients.transport = load.transport;
    clients.subscribers = load.subscribers;
    return RunClients(clients);
  }
  return RunLoad(load, std::filesystem::canonical("/proc/self/exe").string());
}
