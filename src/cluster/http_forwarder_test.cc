// The HTTP forwarder against real loopback sockets: the request an owner receives, its answers
// and errors read back, and every way an owner can fail to answer (refused, silent, a broken
// reply), each reported as not reached; the bounded queue and what the forwarder's end answers.
#include "cluster/http_forwarder.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/api_json.h"
#include "net/tls_test_server.h"

namespace agentstream::cluster {
namespace {

using namespace std::chrono_literals;
using net::test_support::ListenOnLoopback;
using net::test_support::RefusingPort;

// What an owner does with each request it reads.
enum class Behaviour { kReply, kSilent, kCloseMidReply };

// A plain HTTP server on 127.0.0.1 that reads each request (head and Content-Length body), keeps
// it, and answers as `behaviour` says, one connection at a time.
class Owner {
 public:
  explicit Owner(Behaviour behaviour, std::string reply = "")
      : behaviour_(behaviour), reply_(std::move(reply)) {
    listener_ = ListenOnLoopback(port_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~Owner() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;

  runtime::Peer peer() const { return {"owner-1", "http://127.0.0.1:" + std::to_string(port_)}; }
  std::vector<std::string> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  // Waits until `fd` is readable or the server stops.
  bool Readable(int fd) {
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20) > 0) return true;
    }
    return false;
  }
  void Serve() {
    while (Readable(listener_)) {
      const int fd = accept(listener_, nullptr, nullptr);
      if (fd < 0) continue;
      std::string request;
      char buf[4096];
      std::size_t want = std::string::npos;
      while (want == std::string::npos || request.size() < want) {
        if (!Readable(fd)) break;
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        request.append(buf, static_cast<std::size_t>(n));
        const std::size_t head_end = request.find("\r\n\r\n");
        if (want == std::string::npos && head_end != std::string::npos) {
          std::size_t length = 0;
          const std::size_t at = request.find("Content-Length: ");
          if (at != std::string::npos && at < head_end)
            length = std::stoul(request.substr(at + 16));
          want = head_end + 4 + length;
        }
      }
      {
        std::lock_guard lock(mu_);
        requests_.push_back(request);
      }
      if (behaviour_ == Behaviour::kReply) {
        (void)write(fd, reply_.data(), reply_.size());
      } else if (behaviour_ == Behaviour::kCloseMidReply) {
        const std::string partial = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"acc";
        (void)write(fd, partial.data(), partial.size());
      } else {
        Readable(fd);  // until the client gives up (it closes: readable) or the test ends
      }
      close(fd);
    }
  }

  const Behaviour behaviour_;
  const std::string reply_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

std::string JsonReply(int status, const std::string& reason, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

struct Answer {
  Result<runtime::AgentAnswer> answer = Error(ErrorCode::kInternal, "no answer");
  bool reached = false;
};

HttpForwarderOptions Options() {
  HttpForwarderOptions options;
  options.daemon_id = "daemon-a";
  options.token = "secret-token";
  options.threads = 2;
  options.connect_timeout = 2s;
  options.timeout = 2s;
  options.send_timeout = 2s;
  return options;
}

// Forwards `command` and waits for its answer.
Answer ForwardAndWait(HttpForwarder& forwarder, const runtime::Peer& owner,
                      const runtime::AgentCommand& command,
                      const SessionId& agent = SessionId("ses_1")) {
  std::promise<Answer> promise;
  forwarder.Forward(owner, agent, command, [&](Result<runtime::AgentAnswer> answer, bool reached) {
    promise.set_value(Answer{std::move(answer), reached});
  });
  std::future<Answer> future = promise.get_future();
  if (future.wait_for(30s) != std::future_status::ready) return Answer{};
  return future.get();
}

runtime::commands::Send SendOf(const std::string& text, const std::string& client_message_id) {
  runtime::commands::Send send;
  send.request.text = text;
  send.request.client_message_id = client_message_id;
  return send;
}

TEST(HttpForwarder, ASendIsPostedWithTheDaemonsNameAndTokenAndItsReplyReadBack) {
  api::SendReply sent;
  sent.accepted = true;
  sent.turn = TurnId("turn_7");
  sent.cursor = Cursor{Epoch(1), Seq(12)};
  Owner owner(Behaviour::kReply,
              JsonReply(200, "OK", boost::json::serialize(api::SendReplyToJson(sent))));
  HttpForwarder forwarder(Options());
  const Answer a =
      ForwardAndWait(forwarder, owner.peer(), SendOf("hello", "m-1"), SessionId("ses/odd id"));
  ASSERT_TRUE(a.answer.ok()) << a.answer.status().ToString();
  EXPECT_TRUE(a.reached);
  const auto* reply = std::get_if<api::SendReply>(&*a.answer);
  ASSERT_NE(reply, nullptr);
  EXPECT_TRUE(reply->accepted);
  EXPECT_EQ(reply->turn, TurnId("turn_7"));
  EXPECT_EQ(reply->cursor.seq, Seq(12));

  const std::vector<std::string> requests = owner.requests();
  ASSERT_EQ(requests.size(), 1u);
  const std::string& r = requests[0];
  // The agent id is one path segment, percent-encoded.
  EXPECT_EQ(r.rfind("POST /v1/agents/ses%2Fodd%20id/messages HTTP/1.1\r\n", 0), 0u) << r;
  EXPECT_NE(r.find(std::string(kForwardedByHeader) + ": daemon-a\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("Authorization: Bearer secret-token\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\"hello\""), std::string::npos) << r;
  EXPECT_NE(r.find("\"m-1\""), std::string::npos) << r;
}

TEST(HttpForwarder, TheOwnersErrorComesBackWithItsCodeAsReached) {
  Owner owner(Behaviour::kReply,
              JsonReply(421, "Misdirected Request",
                        boost::json::serialize(api::ErrorToJson(
                            Error(ErrorCode::kMisdirected, "daemon b does not own ses_1")))));
  HttpForwarder forwarder(Options());
  const Answer a = ForwardAndWait(forwarder, owner.peer(), runtime::commands::Interrupt{});
  ASSERT_FALSE(a.answer.ok());
  EXPECT_TRUE(a.reached);
  EXPECT_EQ(a.answer.status().code(), ErrorCode::kMisdirected) << a.answer.status().ToString();
  EXPECT_NE(a.answer.status().message().find("does not own"), std::string::npos);
  ASSERT_EQ(owner.requests().size(), 1u);
  EXPECT_EQ(owner.requests()[0].rfind("POST /v1/agents/ses_1/interrupt HTTP/1.1\r\n", 0), 0u);
}

TEST(HttpForwarder, AReplyThatIsNotJsonIsAnErrorAsReached) {
  Owner owner(Behaviour::kReply, JsonReply(200, "OK", "not json"));
  HttpForwarder forwarder(Options());
  const Answer a = ForwardAndWait(forwarder, owner.peer(), runtime::commands::Close{});
  ASSERT_FALSE(a.answer.ok());
  EXPECT_TRUE(a.reached);
  EXPECT_EQ(owner.requests()[0].rfind("DELETE /v1/agents/ses_1 HTTP/1.1\r\n", 0), 0u);
}

TEST(HttpForwarder, AThinkingOptionIsPostedToTheOwner) {
  Owner owner(Behaviour::kReply, JsonReply(200, "OK", R"({"ok":true})"));
  HttpForwarder forwarder(Options());
  const Answer a = ForwardAndWait(forwarder, owner.peer(), runtime::commands::SetThinking{"off"});
  ASSERT_TRUE(a.answer.ok()) << a.answer.status().ToString();
  ASSERT_EQ(owner.requests().size(), 1u);
  EXPECT_EQ(owner.requests()[0].rfind("POST /v1/agents/ses_1/thinking HTTP/1.1\r\n", 0), 0u);
  EXPECT_NE(owner.requests()[0].find(R"({"thinking":"off"})"), std::string::npos);
}

TEST(HttpForwarder, AnOwnerThatRefusesTheConnectionIsNotReached) {
  RefusingPort port;
  HttpForwarder forwarder(Options());
  const Answer a = ForwardAndWait(
      forwarder, runtime::Peer{"gone", "http://127.0.0.1:" + std::to_string(port.port())},
      SendOf("x", "m-2"));
  ASSERT_FALSE(a.answer.ok());
  EXPECT_FALSE(a.reached);
  EXPECT_EQ(a.answer.status().code(), ErrorCode::kUnavailable) << a.answer.status().ToString();
}

TEST(HttpForwarder, ASilentOwnerIsNotReachedOnceTheTimeLimitPasses) {
  Owner owner(Behaviour::kSilent);
  HttpForwarderOptions options = Options();
  options.timeout = 300ms;
  HttpForwarder forwarder(options);
  const auto start = std::chrono::steady_clock::now();
  const Answer a = ForwardAndWait(forwarder, owner.peer(), runtime::commands::SetMode{"plan"});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(a.answer.ok());
  EXPECT_FALSE(a.reached);
  EXPECT_NE(a.answer.status().message().find("did not answer"), std::string::npos)
      << a.answer.status().ToString();
  EXPECT_LT(took, 10s);
  EXPECT_EQ(owner.requests().size(), 1u);  // it was sent: whether it ran is unknown
}

TEST(HttpForwarder, AReplyCutShortIsNotReached) {
  Owner owner(Behaviour::kCloseMidReply);
  HttpForwarder forwarder(Options());
  const Answer a = ForwardAndWait(forwarder, owner.peer(), runtime::commands::SetModel{"m"});
  ASSERT_FALSE(a.answer.ok());
  EXPECT_FALSE(a.reached) << a.answer.status().ToString();
}

TEST(HttpForwarder, BeyondTheQueueACommandFailsAtOnceAndTheEndAnswersTheQueued) {
  Owner owner(Behaviour::kSilent);
  HttpForwarderOptions options = Options();
  options.threads = 1;
  options.max_queued = 1;
  options.timeout = 2s;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Answer> answers;
  auto record = [&](Result<runtime::AgentAnswer> answer, bool reached) {
    std::lock_guard lock(mu);
    answers.push_back(Answer{std::move(answer), reached});
    cv.notify_all();
  };
  std::optional<HttpForwarder> forwarder(std::in_place, options);
  // The first command holds the only worker (the owner never answers), the second waits in the
  // queue, the third finds the queue full.
  forwarder->Forward(owner.peer(), SessionId("ses_1"), runtime::commands::Interrupt{}, record);
  while (owner.requests().empty()) std::this_thread::sleep_for(5ms);
  forwarder->Forward(owner.peer(), SessionId("ses_2"), runtime::commands::Interrupt{}, record);
  forwarder->Forward(owner.peer(), SessionId("ses_3"), runtime::commands::Interrupt{}, record);
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return answers.size() == 1; }));
    EXPECT_EQ(answers[0].answer.status().code(), ErrorCode::kUnavailable);
    EXPECT_TRUE(answers[0].reached);  // nothing was sent
    EXPECT_NE(answers[0].answer.status().message().find("too many"), std::string::npos);
  }
  forwarder.reset();  // waits for the first exchange (its time limit), answers the queued one
  std::lock_guard lock(mu);
  ASSERT_EQ(answers.size(), 3u);
  int stopping = 0;
  for (const Answer& a : answers) {
    EXPECT_FALSE(a.answer.ok());
    if (a.answer.status().message().find("stopping") != std::string::npos) ++stopping;
  }
  EXPECT_EQ(stopping, 1);
  EXPECT_EQ(owner.requests().size(), 1u);  // the queued command was never sent
}

}  // namespace
}  // namespace agentstream::cluster
