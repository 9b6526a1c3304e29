// A webhook receiver for tests and benchmarks. Verifies each request's signature, applies each
// idempotency key's side effect once (one line in the effects file), records every request
// (redeliveries included) in the requests file, and answers {"state":{"effects":N}} with the
// number of effects applied for that session.
//
//   webhook_receiver --secret S [--port P] [--effects FILE] [--requests FILE] [--fail N]
//                    [--delay-ms D]
// Prints "PORT <port>" on stdout once listening. --fail N answers the first N requests with 500.
// Effects file lines: "KEY SESSION EPOCH SEQSTART SEQEND EVENTS COALESCED".
// Requests file lines: "KEY SEQSTART SEQEND ORDINAL SIGOK".
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "consumers/delivery.h"
#include "consumers/sinks.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

struct Config {
  std::string secret;
  unsigned short port = 0;
  std::string effects_path, requests_path;
  long fail = 0;
  long delay_ms = 0;
};

class Receiver {
 public:
  explicit Receiver(Config config) : config_(std::move(config)) {
    // Side effects already applied by an earlier run of the receiver stay applied.
    std::ifstream in(config_.effects_path);
    std::string key, session;
    std::string rest;
    while (in >> key >> session && std::getline(in, rest)) {
      applied_.insert(key);
      ++per_session_[session];
    }
    if (!config_.effects_path.empty()) effects_.open(config_.effects_path, std::ios::app);
    if (!config_.requests_path.empty()) requests_.open(config_.requests_path, std::ios::app);
  }

  http::response<http::string_body> Handle(const http::request<http::string_body>& req) {
    http::response<http::string_body> res;
    res.version(11);
    res.set(http::field::connection, "close");
    if (config_.delay_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(config_.delay_ms));
    const std::string timestamp(req["X-Agentstream-Timestamp"]);
    const std::string signature(req["X-Agentstream-Signature"]);
    const bool sig_ok = signature == agentstream::consumers::WebhookSignature(
                                         config_.secret, timestamp, req.body());
    auto delivery = agentstream::consumers::DeliveryFromJson(req.body());
    std::lock_guard lock(mu_);
    if (!delivery.ok()) {
      res.result(http::status::bad_request);
      res.body() = delivery.status().ToString();
      res.prepare_payload();
      return res;
    }
    const auto& d = *delivery;
    const std::string key(req["Idempotency-Key"]);
    if (requests_.is_open()) {
      requests_ << key << ' ' << d.seq_start.value() << ' ' << d.seq_end.value() << ' ' << d.ordinal
                << ' ' << (sig_ok ? 1 : 0) << '\n';
      requests_.flush();
    }
    if (!sig_ok || key != d.idempotency_key) {
      res.result(http::status::unauthorized);
      res.prepare_payload();
      return res;
    }
    if (failed_ < config_.fail) {
      ++failed_;
      res.result(http::status::internal_server_error);
      res.body() = "failing on purpose";
      res.prepare_payload();
      return res;
    }
    if (applied_.insert(key).second) {
      ++per_session_[d.session.str()];
      if (effects_.is_open()) {
        effects_ << key << ' ' << d.session.str() << ' ' << d.epoch.value() << ' '
                 << d.seq_start.value() << ' ' << d.seq_end.value() << ' ' << d.events.size() << ' '
                 << (d.coalesced ? 1 : 0) << '\n';
        effects_.flush();
      }
    }
    res.result(http::status::ok);
    res.set(http::field::content_type, "application/json");
    res.body() = json::serialize(
        json::object{{"state", json::object{{"effects", per_session_[d.session.str()]}}}});
    res.prepare_payload();
    return res;
  }

 private:
  const Config config_;
  std::mutex mu_;
  std::set<std::string> applied_;
  std::map<std::string, std::int64_t> per_session_;
  std::ofstream effects_, requests_;
  long failed_ = 0;
};

void Serve(tcp::socket socket, Receiver& receiver) {
  beast::error_code ec;
  beast::flat_buffer buffer;
  http::request_parser<http::string_body> parser;
  parser.body_limit(std::size_t{64} << 20);
  http::read(socket, buffer, parser, ec);
  if (ec) return;
  auto res = receiver.Handle(parser.get());
  http::write(socket, res, ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--secret")
      config.secret = value;
    else if (flag == "--port")
      config.port = static_cast<unsigned short>(std::stoi(value));
    else if (flag == "--effects")
      config.effects_path = value;
    else if (flag == "--requests")
      config.requests_path = value;
    else if (flag == "--fail")
      config.fail = std::stol(value);
    else if (flag == "--delay-ms")
      config.delay_ms = std::stol(value);
    else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  Receiver receiver(config);
  asio::io_context ioc{1};
  tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), config.port));
  std::cout << "PORT " << acceptor.local_endpoint().port() << std::endl;
  while (true) {
    tcp::socket socket(ioc);
    beast::error_code ec;
    acceptor.accept(socket, ec);
    if (ec) continue;
    std::thread([s = std::move(socket), &receiver]() mutable {
      Serve(std::move(s), receiver);
    }).detach();
  }
}
