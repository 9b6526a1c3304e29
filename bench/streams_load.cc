// streams_load: whole-system figures of any Durable Streams server, the same for every server
// measured (docs/benchmarks.md, "Generic Durable Streams").
//
// 1. Appends per second with 1 and 32 concurrent keep-alive HTTP/1.1 connections, round-robin
//    over 100 JSON streams, 256-byte messages. Every append is acknowledged before its connection
//    sends the next one, so every counted append was durable by the server's own definition.
// 2. SSE delivery latency with 1 and 100 subscribers of one JSON stream: one append every 50 ms;
//    latency is the time from just before the append is written to the socket until a
//    subscriber has parsed the data event carrying it. Sender and subscribers share one clock.
//
// One thread, Asio coroutines, no HTTP library: the client's own cost per request is a few
// microseconds, so on a small machine the servers get the CPU, not the load tool (a Node client
// spends about as much CPU per append as the server it measures).
//
//   streams_load --url http://127.0.0.1:4437 --seconds 5
#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxHead = std::size_t{64} * 1024;  // a response head longer than this is bad
constexpr std::size_t kMaxBody = std::size_t{8} << 20;    // bodies of the requests made here

struct Target {
  std::string host;
  std::string port;
  std::string prefix;  // path prefix of the streams, e.g. /v1/stream
};

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The value of header `name` (lower case) in a response head, if present.
std::optional<std::string> HeaderValue(const std::string& head, std::string_view name) {
  const std::string lower = Lower(head);
  const std::string key = "\r\n" + std::string(name) + ":";
  const std::size_t at = lower.find(key);
  if (at == std::string::npos) return std::nullopt;
  std::size_t begin = at + key.size();
  const std::size_t end = head.find("\r\n", begin);
  while (begin < end && head[begin] == ' ') ++begin;
  return head.substr(begin, end - begin);
}

// One keep-alive connection; one request at a time.
class Connection {
 public:
  // `host`: the Host header's value, the target's "host:port" (the daemon refuses a name it
  // does not answer to).
  Connection(tcp::socket socket, std::string host)
      : socket_(std::move(socket)), host_(std::move(host)) {}
  const std::string& host() const { return host_; }

  static awaitable<Connection> Open(const Target& target) {
    auto executor = co_await asio::this_coro::executor;
    tcp::resolver resolver(executor);
    auto endpoints = co_await resolver.async_resolve(target.host, target.port, use_awaitable);
    tcp::socket socket(executor);
    co_await asio::async_connect(socket, endpoints, use_awaitable);
    socket.set_option(tcp::no_delay(true));
    co_return Connection(std::move(socket), target.host + ":" + target.port);
  }

  // Sends a request; returns the status after the whole response (head and body) is read.
  awaitable<int> Request(std::string_view method, std::string_view path, std::string_view body) {
    std::string request;
    request.reserve(256 + body.size());
    request.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: ");
    request.append(host_).append("\r\n");
    request.append("Content-Type: application/json\r\n");
    request.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n\r\n");
    request.append(body);
    co_await asio::async_write(socket_, asio::buffer(request), use_awaitable);
    const auto [status, head] = co_await ReadHead();
    co_await SkipBody(status, head);
    co_return status;
  }

  // Reads a response head; returns its status and the head's text (status line included).
  awaitable<std::pair<int, std::string>> ReadHead() {
    const std::size_t end = co_await asio::async_read_until(
        socket_, asio::dynamic_buffer(in_, kMaxHead), "\r\n\r\n", use_awaitable);
    std::string head = in_.substr(0, end);
    in_.erase(0, end);
    int status = 0;
    if (head.size() > 12) status = std::atoi(head.c_str() + 9);
    co_return std::pair{status, head};
  }

  // Bytes of the body as they arrive (de-chunked when the body is chunked); nullopt after the
  // last chunk of a chunked body.
  awaitable<std::optional<std::string>> ReadSome(bool chunked) {
    if (!chunked) {
      if (in_.empty()) co_await ReadMore();
      co_return std::exchange(in_, {});
    }
    const std::size_t line = co_await asio::async_read_until(
        socket_, asio::dynamic_buffer(in_, kMaxBody), "\r\n", use_awaitable);
    const std::size_t size = std::stoul(in_.substr(0, line - 2), nullptr, 16);
    in_.erase(0, line);
    while (in_.size() < size + 2) co_await ReadMore();  // the data and its CRLF (no trailers)
    std::string data = in_.substr(0, size);
    in_.erase(0, size + 2);
    if (size == 0) co_return std::nullopt;
    co_return data;
  }

  awaitable<void> WriteRaw(std::string bytes) {
    co_await asio::async_write(socket_, asio::buffer(bytes), use_awaitable);
  }

  void Close() {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  awaitable<void> ReadMore() {
    char chunk[16384];
    const std::size_t n = co_await socket_.async_read_some(asio::buffer(chunk), use_awaitable);
    if (in_.size() + n > kMaxBody) throw std::runtime_error("response too large");
    in_.append(chunk, n);
  }

  awaitable<void> SkipBody(int status, const std::string& head) {
    if (status == 204 || status == 304) co_return;
    if (auto length = HeaderValue(head, "content-length")) {
      const std::size_t size = std::stoul(*length);
      while (in_.size() < size) co_await ReadMore();
      in_.erase(0, size);
      co_return;
    }
    if (Lower(HeaderValue(head, "transfer-encoding").value_or("")) == "chunked") {
      while (co_await ReadSome(true)) {
      }
    }
  }

  tcp::socket socket_;
  std::string host_;
  std::string in_;
};

std::string Message(std::int64_t i, std::size_t bytes) {
  const std::string head = json::serialize(json::object{{"i", i}, {"t", 0}, {"pad", ""}});
  return json::serialize(
      json::object{{"i", i},
                   {"t", 0},
                   {"pad", std::string(bytes > head.size() ? bytes - head.size() : 0, 'x')}});
}

awaitable<void> CreateStream(const Target& target, const std::string& path) {
  Connection c = co_await Connection::Open(target);
  const int status = co_await c.Request("PUT", path, "");
  if (status != 201 && status != 200)
    throw std::runtime_error("create answered " + std::to_string(status));
  c.Close();
}

struct AppendResult {
  std::int64_t per_second = 0;
  std::map<int, std::int64_t> failed;  // status -> count
};

awaitable<AppendResult> Appends(const Target& target, int connections,
                                const std::vector<std::string>& streams, double seconds,
                                std::size_t message_bytes) {
  auto executor = co_await asio::this_coro::executor;
  const std::string body = Message(1, message_bytes);
  AppendResult result;
  std::int64_t done = 0;
  std::size_t next = 0;
  int running = connections;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  asio::steady_timer finished(executor, Clock::time_point::max());
  for (int k = 0; k < connections; ++k) {
    asio::co_spawn(
        executor,
        [&]() -> awaitable<void> {
          Connection c = co_await Connection::Open(target);
          while (Clock::now() < end) {
            const int status = co_await c.Request("POST", streams[next++ % streams.size()], body);
            if (status == 200 || status == 204) {
              ++done;
            } else {
              ++result.failed[status];
            }
          }
          c.Close();
        },
        [&](const std::exception_ptr& error) {
          if (error) ++result.failed[-1];
          if (--running == 0) finished.cancel();
        });
  }
  boost::system::error_code ec;
  co_await finished.async_wait(asio::redirect_error(use_awaitable, ec));
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  result.per_second = std::llround(static_cast<double>(done) / elapsed);
  co_return result;
}

// The "i" of every item of the JSON array carried by each complete `event: data` block in
// `text`; consumed blocks are erased. Sets *control when a control event was seen.
std::vector<std::int64_t> TakeDataItems(std::string* text, bool* control) {
  std::vector<std::int64_t> items;
  std::size_t cut = 0;
  while ((cut = text->find("\n\n")) != std::string::npos) {
    const std::string block = text->substr(0, cut);
    text->erase(0, cut + 2);
    if (block.rfind("event: control", 0) == 0 || block.rfind("event:control", 0) == 0)
      *control = true;
    if (block.rfind("event: data", 0) != 0 && block.rfind("event:data", 0) != 0) continue;
    std::string data;
    std::size_t at = 0;
    while (at < block.size()) {
      std::size_t eol = block.find('\n', at);
      if (eol == std::string::npos) eol = block.size();
      std::string_view line(block.data() + at, eol - at);
      if (line.rfind("data:", 0) == 0) {
        line.remove_prefix(5);
        if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        if (!data.empty()) data += '\n';
        data.append(line);
      }
      at = eol + 1;
    }
    boost::system::error_code ec;
    const json::value v = json::parse(data, ec);
    if (ec || !v.is_array()) continue;
    for (const json::value& item : v.as_array())
      if (const auto* o = item.if_object();
          o != nullptr && o->contains("i") && o->at("i").is_int64())
        items.push_back(o->at("i").as_int64());
  }
  return items;
}

struct Latency {
  std::size_t deliveries = 0;
  std::size_t expected = 0;
  double p50_ms = 0;
  double p99_ms = 0;
};

awaitable<Latency> SseLatency(const Target& target, int subscribers, const std::string& path,
                              double seconds) {
  auto executor = co_await asio::this_coro::executor;
  co_await CreateStream(target, path);
  const int count = static_cast<int>(seconds * 20);
  std::vector<Clock::time_point> sent(static_cast<std::size_t>(count));
  std::vector<double> latencies;
  int ready = 0;
  int running = subscribers;
  asio::steady_timer all_ready(executor, Clock::time_point::max());
  asio::steady_timer all_done(executor, Clock::time_point::max());
  std::vector<std::shared_ptr<Connection>> readers;
  readers.reserve(static_cast<std::size_t>(subscribers));
  for (int k = 0; k < subscribers; ++k)
    readers.push_back(std::make_shared<Connection>(co_await Connection::Open(target)));
  for (auto& c : readers) {
    asio::co_spawn(
        executor,
        [&, c]() -> awaitable<void> {
          co_await c->WriteRaw("GET " + path +
                               "?offset=now&live=sse HTTP/1.1\r\nHost: " + c->host() + "\r\n\r\n");
          const auto [status, head] = co_await c->ReadHead();
          if (status != 200) throw std::runtime_error("SSE answered " + std::to_string(status));
          const bool chunked =
              Lower(HeaderValue(head, "transfer-encoding").value_or("")) == "chunked";
          std::string text;
          bool control = false;
          bool counted = false;
          for (;;) {
            std::optional<std::string> read = co_await c->ReadSome(chunked);
            if (!read) break;
            std::string bytes = std::move(*read);
            std::erase(bytes, '\r');
            text += bytes;
            const auto items = TakeDataItems(&text, &control);
            const auto now = Clock::now();
            if (control && !counted) {
              counted = true;
              if (++ready == subscribers) all_ready.cancel();
            }
            for (const std::int64_t i : items)
              if (i >= 0 && i < count)
                latencies.push_back(std::chrono::duration<double, std::milli>(
                                        now - sent[static_cast<std::size_t>(i)])
                                        .count());
          }
        },
        [&](const std::exception_ptr&) {
          if (--running == 0) all_done.cancel();
        });
  }
  boost::system::error_code ec;
  all_ready.expires_after(std::chrono::seconds(30));
  co_await all_ready.async_wait(asio::redirect_error(use_awaitable, ec));
  if (ready < subscribers) throw std::runtime_error("subscribers did not all get a control event");
  Connection writer = co_await Connection::Open(target);
  asio::steady_timer pause(executor);
  for (int i = 0; i < count; ++i) {
    const std::string body = json::serialize(json::object{{"i", i}});
    sent[static_cast<std::size_t>(i)] = Clock::now();
    const int status = co_await writer.Request("POST", path, body);
    if (status != 200 && status != 204)
      throw std::runtime_error("append answered " + std::to_string(status));
    pause.expires_after(std::chrono::milliseconds(50));
    co_await pause.async_wait(use_awaitable);
  }
  pause.expires_after(std::chrono::milliseconds(500));
  co_await pause.async_wait(use_awaitable);
  for (auto& c : readers) c->Close();
  co_await all_done.async_wait(asio::redirect_error(use_awaitable, ec));
  writer.Close();
  std::sort(latencies.begin(), latencies.end());
  Latency out;
  out.deliveries = latencies.size();
  out.expected = static_cast<std::size_t>(count) * static_cast<std::size_t>(subscribers);
  auto at = [&](double q) {
    if (latencies.empty()) return 0.0;
    return latencies[std::min(latencies.size() - 1,
                              static_cast<std::size_t>(q * static_cast<double>(latencies.size())))];
  };
  out.p50_ms = at(0.5);
  out.p99_ms = at(0.99);
  co_return out;
}

json::value ToJson(const AppendResult& r) {
  if (r.failed.empty()) return r.per_second;
  json::object failed;
  for (const auto& [status, n] : r.failed) failed[std::to_string(status)] = n;
  return json::object{{"per_s", r.per_second}, {"failed_by_status", failed}};
}

json::value ToJson(const Latency& l) {
  return json::object{{"deliveries", l.deliveries},
                      {"expected", l.expected},
                      {"p50_us", std::llround(l.p50_ms * 1000)},
                      {"p99_us", std::llround(l.p99_ms * 1000)}};
}

awaitable<json::object> Run(Target target, double seconds, std::size_t message_bytes,
                            std::set<std::string> only) {
  auto wanted = [&](const std::string& figure) { return only.empty() || only.count(figure) > 0; };
  const std::string run = std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count());
  std::vector<std::string> streams;
  for (int i = 0; i < 100; ++i) {
    streams.push_back(target.prefix + "/load-" + run + "-" + std::to_string(i));
    co_await CreateStream(target, streams.back());
  }
  json::object out;
  if (wanted("appends_per_s_1_client"))
    out["appends_per_s_1_client"] =
        ToJson(co_await Appends(target, 1, streams, seconds, message_bytes));
  if (wanted("appends_per_s_32_clients"))
    out["appends_per_s_32_clients"] =
        ToJson(co_await Appends(target, 32, streams, seconds, message_bytes));
  if (wanted("sse_1_subscriber"))
    out["sse_1_subscriber"] =
        ToJson(co_await SseLatency(target, 1, target.prefix + "/load-" + run + "-sse-1", seconds));
  if (wanted("sse_100_subscribers"))
    out["sse_100_subscribers"] = ToJson(
        co_await SseLatency(target, 100, target.prefix + "/load-" + run + "-sse-100", seconds));
  co_return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Appends/s and SSE delivery latency of a Durable Streams server"};
  std::string url;
  double seconds = 5;
  std::size_t message_bytes = 256;
  app.add_option("--url", url,
                 "server base URL with the streams prefix, e.g. "
                 "http://127.0.0.1:4437/v1/stream")
      ->required();
  app.add_option("--seconds", seconds, "duration of each measurement");
  app.add_option("--message-bytes", message_bytes, "size of each appended JSON message");
  std::set<std::string> only;
  app.add_option("--only", only,
                 "measure only these figures (appends_per_s_1_client, appends_per_s_32_clients, "
                 "sse_1_subscriber, sse_100_subscribers; comma-separated); all by default")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    std::fprintf(stderr, "streams_load: only http:// URLs\n");
    return 2;
  }
  const std::string rest = url.substr(scheme.size());
  const std::size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  const std::size_t colon = authority.rfind(':');
  Target target{authority.substr(0, colon),
                colon == std::string::npos ? "80" : authority.substr(colon + 1),
                slash == std::string::npos ? "" : rest.substr(slash)};
  while (!target.prefix.empty() && target.prefix.back() == '/') target.prefix.pop_back();
  asio::io_context io;
  int rc = 0;
  asio::co_spawn(io, Run(target, seconds, message_bytes, only),
                 [&](const std::exception_ptr& error, json::object out) {
                   if (error) {
                     try {
                       std::rethrow_exception(error);
                     } catch (const std::exception& e) {
                       std::fprintf(stderr, "streams_load: %s\n", e.what());
                     }
                     rc = 1;
                     return;
                   }
                   out["url"] = url;
                   std::printf("%s\n", json::serialize(out).c_str());
                 });
  io.run();
  return rc;
}
