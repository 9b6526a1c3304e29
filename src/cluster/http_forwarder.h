// HttpForwarder: carries a command for an agent that another daemon owns to that daemon's HTTP
// API (runtime/forwarder.h; docs/architecture.md, "Agent ownership"), and the owner's reply back.
// Each forwarded request names this daemon in X-Agentstream-Forwarded-By (so the owner answers
// it or says kMisdirected, and never forwards it on) and carries this daemon's token: daemons that
// share a store share their --token.
//
// A small pool of threads does the blocking HTTP exchanges; its queue is bounded and a command
// beyond it fails at once with kUnavailable (reached: true, nothing was sent). An owner that
// refuses the connection, breaks it, or does not answer within the time limit is reported with
// reached: false.
//
// Thread-safe. Destroying the forwarder waits for the exchanges in progress and answers the
// queued ones with kUnavailable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/forwarder.h"

namespace agentstream::cluster {

// The header that marks a forwarded command, with the forwarding daemon's id.
inline constexpr const char* kForwardedByHeader = "X-Agentstream-Forwarded-By";

struct HttpForwarderOptions {
  std::string daemon_id;  // this daemon, for kForwardedByHeader
  std::string token;      // sent as `Authorization: Bearer` when not empty
  std::size_t threads = 8;
  std::size_t max_queued = 256;
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds timeout{15000};
  // A send is answered once its turn started (or it was queued), which can take the owner's
  // runtime start: this bounds the whole exchange for sends.
  std::chrono::milliseconds send_timeout{75000};
};

class HttpForwarder final : public runtime::Forwarder {
 public:
  explicit HttpForwarder(HttpForwarderOptions options);
  ~HttpForwarder() override;
  HttpForwarder(const HttpForwarder&) = delete;
  HttpForwarder& operator=(const HttpForwarder&) = delete;

  void Forward(const runtime::Peer& owner, const SessionId& agent,
               const runtime::AgentCommand& command, Done done) override;

 private:
  struct Job {
    runtime::Peer owner;
    SessionId agent;
    runtime::AgentCommand command;
    Done done;
  };
  void Work();
  void Run(Job& job) const;

  const HttpForwarderOptions options_;
  std::mutex mu_;  // guards queue_, stop_
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace agentstream::cluster
