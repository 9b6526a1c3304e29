#include "providers/opencode/opencode_server.h"

#include <unistd.h>

#include <atomic>
#include <boost/json/parse.hpp>
#include <cctype>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "net/base64.h"
#include "net/sse_parser.h"
#include "providers/wire_fields.h"
#include "system/random_id.h"

namespace agentstream::providers::opencode {

namespace json = boost::json;

namespace {

std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}
// Servers by key; guarded by RegistryMutex().
std::map<std::string, std::weak_ptr<OpencodeServer>>& Registry() {
  static std::map<std::string, std::weak_ptr<OpencodeServer>> registry;
  return registry;
}

void Unregister(const std::string& key, const OpencodeServer* server) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(key);
  if (it == Registry().end()) return;
  const std::shared_ptr<OpencodeServer> current = it->second.lock();
  if (!current || current.get() == server) Registry().erase(it);
}

}  // namespace

// The two threads that block on HTTP, and what they hand to the loop.
struct OpencodeServer::Threads {
  struct Job {
    net::HttpRequest request;
    ReplyFn reply;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Job> jobs;            // guarded by mu
  std::deque<std::string> events;  // guarded by mu
  bool drain_posted = false;       // guarded by mu
  std::size_t dropped = 0;         // guarded by mu
  std::atomic<bool> stop{false};
  std::thread worker, reader;
};

std::shared_ptr<OpencodeServer> OpencodeServer::Acquire(process::EventLoop& loop,
                                                        const OpencodeServerConfig& config) {
  std::string key = std::to_string(reinterpret_cast<std::uintptr_t>(&loop)) + '\n' +
                    config.program + '\n' + config.cwd;
  for (const std::string& e : config.env) key += '\n' + e;
  std::shared_ptr<OpencodeServer> server;
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    if (auto it = Registry().find(key); it != Registry().end()) server = it->second.lock();
    if (server && !server->exited_ && !server->stopping_) {
      ++server->holders_;
      return server;
    }
    server = std::make_shared<OpencodeServer>(loop, config, key);
    Registry()[key] = server;
  }
  server->holders_ = 1;
  server->Start();
  return server;
}

OpencodeServer::OpencodeServer(process::EventLoop& loop, OpencodeServerConfig config,
                               std::string key)
    : loop_(loop),
      config_(std::move(config)),
      key_(std::move(key)),
      password_(system::RandomHex(32)),
      threads_(std::make_unique<Threads>()) {}

OpencodeServer::~OpencodeServer() {
  *alive_ = false;
  Unregister(key_, this);
  threads_->stop = true;
  threads_->cv.notify_all();
  if (threads_->worker.joinable()) threads_->worker.join();
  if (threads_->reader.joinable()) threads_->reader.join();
  child_.reset();
}

void OpencodeServer::Start() {
  process::SpawnOptions spawn;
  spawn.argv = {config_.program, "serve", "--hostname", "127.0.0.1", "--port", "0"};
  const std::vector<std::string>* env = &config_.env;
  std::vector<std::string> daemon_env;
  if (env->empty()) {
    for (char** e = environ; *e; ++e) daemon_env.emplace_back(*e);
    env = &daemon_env;
  }
  for (const std::string& e : *env)
    if (e.rfind("OPENCODE_SERVER_PASSWORD=", 0) != 0 && e.rfind("OPENCODE_SERVER_USERNAME=", 0))
      spawn.env.push_back(e);
  spawn.env.push_back("OPENCODE_SERVER_PASSWORD=" + password_);
  spawn.cwd = config_.cwd;
  auto child = process::ChildProcess::Spawn(loop_, spawn,
                                            {[this](const process::Frame& f) { OnStdout(f); },
                                             [this](const process::ExitInfo& e) { OnExit(e); }});
  if (!child.ok()) {
    exited_ = true;
    Unregister(key_, this);
    failure_ = "cannot start opencode serve: " + child.status().message();
    return;
  }
  child_ = std::move(child).value();
  Threads* t = threads_.get();
  t->worker = std::thread([t, loop = &loop_, alive = std::weak_ptr<bool>(alive_)] {
    for (;;) {
      Threads::Job job;
      {
        std::unique_lock<std::mutex> lock(t->mu);
        t->cv.wait(lock, [t] { return t->stop || !t->jobs.empty(); });
        if (t->stop) return;
        job = std::move(t->jobs.front());
        t->jobs.pop_front();
      }
      Result<net::HttpReply> reply = net::SendHttpRequest(job.request);
      loop->Post([alive, fn = std::move(job.reply), reply = std::move(reply)]() mutable {
        if (alive.lock()) fn(std::move(reply));
      });
    }
  });
  start_timer_ = loop_.timers().After(config_.start_timeout, [this] {
    if (!ready_)
      Fail("opencode serve did not come up within " +
           std::to_string(config_.start_timeout.count()) + " ms");
  });
}

void OpencodeServer::OnStdout(const process::Frame& frame) {
  constexpr std::string_view kListening = "listening on http://";
  if (!base_url_.empty() || frame.kind != process::Frame::Kind::kLine) return;
  const std::size_t at = frame.text.find(kListening);
  if (at == std::string::npos) return;
  std::string host_port = frame.text.substr(at + kListening.size());
  while (!host_port.empty() && (host_port.back() == '/' || std::isspace(host_port.back()) != 0))
    host_port.pop_back();
  base_url_ = "http://" + host_port;
  net::HttpRequest request;
  request.url = base_url_ + "/global/event";
  request.headers = {{"Authorization", "Basic " + net::EncodeBase64("opencode:" + password_)},
                     {"Accept", "text/event-stream"}};
  request.timeout = config_.request_timeout;
  Threads* t = threads_.get();
  t->reader = std::thread([t, request = std::move(request), loop = &loop_,
                           alive = std::weak_ptr<bool>(alive_), max_event = config_.max_event_bytes,
                           max_queued = config_.max_queued_events, this] {
    // opencode carries everything in the JSON of `data`; an oversize event is dropped, counted.
    net::SseParser parser(net::SseLimits{max_event, max_event, /*skip_oversize=*/true});
    std::vector<net::SseEvent> events;
    Result<net::HttpReply> end = net::StreamHttpGet(
        request,
        {.on_body =
             [&](std::string_view bytes) {
               events.clear();
               (void)parser.Feed(bytes, events);  // cannot fail when oversize events are skipped
               std::unique_lock<std::mutex> lock(t->mu);
               t->dropped = parser.dropped();
               for (net::SseEvent& e : events) {
                 t->cv.wait(lock, [&] { return t->stop || t->events.size() < max_queued; });
                 if (t->stop) return false;
                 t->events.push_back(std::move(e.data));
               }
               if (!t->drain_posted && !t->events.empty()) {
                 t->drain_posted = true;
                 loop->Post([alive, this] {
                   if (alive.lock()) DrainEvents();
                 });
               }
               return !t->stop.load();
             }},
        t->stop);
    if (t->stop) return;
    std::string why =
        end.ok() ? "the opencode event stream ended (HTTP " + std::to_string(end->status) + ")"
                 : "the opencode event stream broke: " + end.status().message();
    loop->Post([alive, this, why = std::move(why)] {
      if (alive.lock()) Fail(why);
    });
  });
}

void OpencodeServer::DrainEvents() {
  std::deque<std::string> events;
  {
    std::lock_guard<std::mutex> lock(threads_->mu);
    events.swap(threads_->events);
    threads_->drain_posted = false;
    dropped_events_ = threads_->dropped;
  }
  threads_->cv.notify_all();
  for (const std::string& data : events) {
    if (exited_) return;
    OnEvent(data);
  }
}

void OpencodeServer::OnEvent(const std::string& data) {
  std::error_code ec;
  json::value v = json::parse(data, ec);
  if (ec || !v.is_object()) return;
  wire::NullNonFinite(v);  // an event's numbers are stored as the agent sent them
  const json::object* payload = wire::Obj(v.as_object(), "payload");
  if (payload == nullptr) payload = &v.as_object();  // the per-directory /event shape
  const std::string type = wire::Str(*payload, "type");
  if (type == "server.connected" && !ready_) {
    ready_ = true;
    start_timer_.reset();
    FinishReady(Status::Ok());
    return;
  }
  const json::object* props = wire::Obj(*payload, "properties");
  if (props == nullptr) return;
  auto it = sinks_.find(wire::Str(*props, "sessionID"));
  if (it == sinks_.end() || !it->second.on_event) return;
  auto on_event = it->second.on_event;  // the sink may unwatch itself
  on_event(type, *props);
}

void OpencodeServer::FinishReady(const Status& status) {
  auto waiters = std::move(ready_waiters_);
  ready_waiters_.clear();
  for (auto& w : waiters) w(status);
}

void OpencodeServer::Fail(const std::string& why) {
  if (failure_.empty()) failure_ = why;
  Unregister(key_, this);
  FinishReady(Error(ErrorCode::kUnavailable, why));
  if (child_ && !exited_) child_->Terminate(config_.kill_plan, nullptr);
}

void OpencodeServer::OnExit(const process::ExitInfo& exit) {
  exited_ = true;
  start_timer_.reset();
  Unregister(key_, this);
  threads_->stop = true;
  threads_->cv.notify_all();
  const std::string message = failure_.empty()
                                  ? "opencode serve " + exit.Describe()
                                  : failure_ + " (opencode serve " + exit.Describe() + ")";
  failure_ = message;
  FinishReady(Error(ErrorCode::kUnavailable, message));
  std::deque<Threads::Job> unsent;  // the worker stops: nobody else answers these
  {
    std::lock_guard<std::mutex> lock(threads_->mu);
    unsent.swap(threads_->jobs);
  }
  for (Threads::Job& job : unsent) job.reply(Error(ErrorCode::kUnavailable, message));
  if (!stopping_) {
    auto sinks = sinks_;
    for (auto& [id, sink] : sinks)
      if (sink.on_exit) sink.on_exit(message);
  }
  auto waiters = std::move(stop_waiters_);
  stop_waiters_.clear();
  for (auto& w : waiters)
    if (w) w();
}

void OpencodeServer::WhenReady(std::function<void(Status)> done) {
  if (ready_ && !exited_) {
    loop_.Post([done = std::move(done)] { done(Status::Ok()); });
  } else if (exited_ || !failure_.empty()) {
    loop_.Post(
        [done = std::move(done), why = failure_] { done(Error(ErrorCode::kUnavailable, why)); });
  } else {
    ready_waiters_.push_back(std::move(done));
  }
}

void OpencodeServer::Request(const std::string& method, const std::string& target, std::string body,
                             ReplyFn reply) {
  auto fail = [&](std::string why) {
    loop_.Post([reply = std::move(reply), why = std::move(why)] {
      reply(Error(ErrorCode::kUnavailable, why));
    });
  };
  if (!running() || !ready_) return fail("opencode serve is not running");
  net::HttpRequest request;
  request.method = method;
  request.url = base_url_ + target;
  request.headers = {{"Authorization", "Basic " + net::EncodeBase64("opencode:" + password_)}};
  request.body = std::move(body);
  request.timeout = config_.request_timeout;
  request.max_reply_bytes = config_.max_reply_bytes;
  {
    std::lock_guard<std::mutex> lock(threads_->mu);
    if (threads_->jobs.size() >= config_.max_pending_requests)
      return fail("too many opencode requests in flight");
    threads_->jobs.push_back({std::move(request), std::move(reply)});
  }
  threads_->cv.notify_all();
}

void OpencodeServer::Watch(const std::string& session_id, SessionSink sink) {
  sinks_[session_id] = std::move(sink);
}

void OpencodeServer::Unwatch(const std::string& session_id) { sinks_.erase(session_id); }

void OpencodeServer::Release(std::function<void()> done) {
  if (--holders_ > 0 || !child_ || exited_) {
    if (holders_ <= 0) Unregister(key_, this);
    if (done) loop_.Post(std::move(done));
    return;
  }
  stopping_ = true;
  Unregister(key_, this);
  stop_waiters_.push_back(std::move(done));
  // Holds the server until its process is gone; released from a posted task, never inside the
  // process's own handler.
  child_->Terminate(config_.kill_plan,
                    [self = shared_from_this()] { self->loop_.Post([self] {}); });
}

int OpencodeServer::pid() const { return running() ? child_->pid() : 0; }

std::string OpencodeServer::StderrTail() const { return child_ ? child_->StderrTail() : ""; }

}  // namespace agentstream::providers::opencode
