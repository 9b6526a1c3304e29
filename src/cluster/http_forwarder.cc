#include "cluster/http_forwarder.h"

#include <boost/json/serialize.hpp>
#include <type_traits>

#include "api/api_json.h"
#include "net/http_client.h"
#include "net/http_url.h"

namespace agentstream::cluster {

namespace json = boost::json;

namespace {

// One command as an HTTP request of the daemon's API, and how its reply body is read.
struct Exchange {
  std::string method;
  std::string path;
  std::optional<json::value> body;
  enum class Reply { kOk, kSendReply, kSnapshot } reply = Reply::kOk;
};

Exchange ExchangeFor(const SessionId& agent, const runtime::AgentCommand& command) {
  const std::string base = "/v1/agents/" + net::PercentEncode(agent.str());
  using R = Exchange::Reply;
  return std::visit(
      [&](const auto& c) -> Exchange {
        using T = std::decay_t<decltype(c)>;
        namespace cmd = runtime::commands;
        if constexpr (std::is_same_v<T, cmd::Send>) {
          return {"POST", base + "/messages", json::value(api::SendRequestToJson(c.request)),
                  R::kSendReply};
        } else if constexpr (std::is_same_v<T, cmd::CancelQueued>) {
          return {
              "DELETE", base + "/messages/" + net::PercentEncode(c.client_message_id), {}, R::kOk};
        } else if constexpr (std::is_same_v<T, cmd::Interrupt>) {
          return {"POST", base + "/interrupt", {}, R::kOk};
        } else if constexpr (std::is_same_v<T, cmd::ReplyPermission>) {
          return {"POST", base + "/permissions/" + net::PercentEncode(c.reply.request_id.str()),
                  json::value(api::PermissionReplyToJson(c.reply)), R::kOk};
        } else if constexpr (std::is_same_v<T, cmd::SetMode>) {
          return {"POST", base + "/mode", json::value(json::object{{"mode", c.mode}}), R::kOk};
        } else if constexpr (std::is_same_v<T, cmd::SetModel>) {
          return {"POST", base + "/model", json::value(json::object{{"model", c.model}}), R::kOk};
        } else if constexpr (std::is_same_v<T, cmd::SetThinking>) {
          return {"POST", base + "/thinking", json::value(json::object{{"thinking", c.option}}),
                  R::kOk};
        } else if constexpr (std::is_same_v<T, cmd::Rename>) {
          return {"POST", base + "/title", json::value(json::object{{"title", c.title}}),
                  R::kSnapshot};
        } else if constexpr (std::is_same_v<T, cmd::Close>) {
          return {"DELETE", base, {}, R::kSnapshot};
        } else {
          return {"POST", base + "/rewind",
                  json::value(json::object{{"cursor", FormatCursor(c.to)}}), R::kSnapshot};
        }
      },
      command);
}

Result<runtime::AgentAnswer> ReadReply(const Exchange& exchange, const net::HttpReply& reply) {
  AS_ASSIGN_OR_RETURN(json::value body, api::ParseJson(reply.body.empty() ? "{}" : reply.body,
                                                       reply.body.size() + 2));
  if (reply.status < 200 || reply.status >= 300) return api::ErrorFromJson(body, reply.status);
  switch (exchange.reply) {
    case Exchange::Reply::kOk:
      return runtime::AgentAnswer{};
    case Exchange::Reply::kSendReply: {
      AS_ASSIGN_OR_RETURN(api::SendReply send, api::SendReplyFromJson(body));
      return runtime::AgentAnswer{std::move(send)};
    }
    case Exchange::Reply::kSnapshot: {
      AS_ASSIGN_OR_RETURN(api::AgentSnapshot snapshot, api::AgentSnapshotFromJson(body));
      return runtime::AgentAnswer{std::move(snapshot)};
    }
  }
  return Error(ErrorCode::kInternal, "unknown reply shape");
}

}  // namespace

HttpForwarder::HttpForwarder(HttpForwarderOptions options) : options_(std::move(options)) {
  for (std::size_t i = 0; i < std::max<std::size_t>(1, options_.threads); ++i)
    workers_.emplace_back([this] { Work(); });
}

HttpForwarder::~HttpForwarder() {
  std::deque<Job> left;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    left.swap(queue_);
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  for (Job& job : left) job.done(Error(ErrorCode::kUnavailable, "the daemon is stopping"), true);
}

void HttpForwarder::Forward(const runtime::Peer& owner, const SessionId& agent,
                            const runtime::AgentCommand& command, Done done) {
  {
    std::lock_guard lock(mu_);
    if (!stop_ && queue_.size() < options_.max_queued) {
      queue_.push_back(Job{owner, agent, command, std::move(done)});
      cv_.notify_one();
      return;
    }
  }
  done(Error(ErrorCode::kUnavailable, "too many commands are being forwarded to other daemons (" +
                                          std::to_string(options_.max_queued) + ")"),
       true);
}

void HttpForwarder::Work() {
  while (true) {
    Job job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Run(job);
  }
}

void HttpForwarder::Run(Job& job) const {
  const Exchange exchange = ExchangeFor(job.agent, job.command);
  net::HttpRequest request;
  request.method = exchange.method;
  request.url = job.owner.url + exchange.path;
  if (exchange.body) request.body = json::serialize(*exchange.body);
  request.headers.emplace_back(kForwardedByHeader, options_.daemon_id);
  if (!options_.token.empty())
    request.headers.emplace_back("Authorization", "Bearer " + options_.token);
  request.connect_timeout = options_.connect_timeout;
  request.timeout = std::holds_alternative<runtime::commands::Send>(job.command)
                        ? options_.send_timeout
                        : options_.timeout;
  request.peer = "daemon " + job.owner.daemon_id + " at " + job.owner.url;
  Result<net::HttpReply> reply = net::SendHttpRequest(request);
  if (!reply.ok()) {
    // A URL the registry holds that does not parse is as good as an owner that is gone.
    return job.done(reply.status(), false);
  }
  job.done(ReadReply(exchange, *reply), true);
}

}  // namespace agentstream::cluster
