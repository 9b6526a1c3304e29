// Sending to a push service and to ntfy against a real TLS server on loopback
// (net/tls_test_server.h): the request's headers and encrypted body, and how each reply is
// classified.
#include "push/sender.h"
#include "core/ascii.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <chrono>
#include <map>
#include <string>

#include "net/base64.h"
#include "net/tls_test_server.h"
#include "push/ece.h"

namespace agentstream::push {
namespace {

using net::test_support::Certificate;
using net::test_support::TlsServer;
using std::chrono::milliseconds;

constexpr milliseconds kTimeout{5000};

std::string Reply(std::string_view status, std::string_view body = "",
                  std::string_view headers = "") {
  return "HTTP/1.1 " + std::string(status) + "\r\n" + std::string(headers) +
         "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         std::string(body);
}

// A request as the server got it: the request line, the headers by lowercase name, the body.
struct Received {
  std::string line;
  std::map<std::string, std::string> headers;
  std::string body;

  std::string Header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

Received Parse(const std::string& raw) {
  Received out;
  const std::size_t end = raw.find("\r\n\r\n");
  out.body = raw.substr(end + 4);
  std::size_t at = raw.find("\r\n");
  out.line = raw.substr(0, at);
  while (at < end) {
    const std::size_t next = raw.find("\r\n", at + 2);
    const std::string header = raw.substr(at + 2, next - at - 2);
    const std::size_t colon = header.find(':');
    out.headers[AsciiLowered(header.substr(0, colon))] = header.substr(colon + 2);
    at = next;
  }
  return out;
}

// A subscription of a fresh user agent key (a VapidKey is a P-256 pair too) at `server`.
struct UserAgent {
  VapidKey key = GenerateVapidKey().value();
  std::string auth = "0123456789abcdef";
  PushSubscription At(int port, std::string_view path = "/push/abc") const {
    return {"https://localhost:" + std::to_string(port) + std::string(path), key.public_point(),
            auth};
  }
};

struct Fixture {
  Certificate certificate;
  VapidKey vapid = GenerateVapidKey().value();
  UserAgent ua;

  PushOutcome Send(TlsServer& server, const PushMessage& message, milliseconds timeout = kTimeout) {
    return SendPush(ua.At(server.port()), vapid, "mailto:ops@example.com", message, timeout,
                    certificate.pem_path);
  }
};

TEST(SendPush, PostsAnEncryptedMessageWithTheRfc8030Headers) {
  Fixture f;
  TlsServer server(f.certificate, Reply("201 Created", "", "Location: /m/1\r\n"));
  const PushMessage message{.payload = R"({"agent":"ses_1"})",
                            .ttl_s = 60,
                            .topic = TopicFor("ses_1"),
                            .urgency = "high"};
  const PushOutcome outcome = f.Send(server, message);
  EXPECT_EQ(outcome.kind, PushOutcome::kDelivered) << outcome.detail;
  EXPECT_EQ(outcome.status, 201);
  ASSERT_EQ(server.requests().size(), 1U);
  const Received got = Parse(server.requests()[0]);
  EXPECT_EQ(got.line, "POST /push/abc HTTP/1.1");
  EXPECT_EQ(got.Header("ttl"), "60");
  EXPECT_EQ(got.Header("topic"), TopicFor("ses_1"));
  EXPECT_EQ(got.Header("urgency"), "high");
  EXPECT_EQ(got.Header("content-encoding"), "aes128gcm");
  EXPECT_EQ(got.Header("content-type"), "application/octet-stream");

  // The body is for the user agent only.
  Result<std::string> plaintext = DecryptPayload(got.body, f.ua.key.private_scalar(), f.ua.auth);
  ASSERT_TRUE(plaintext.ok()) << plaintext.status().ToString();
  EXPECT_EQ(*plaintext, message.payload);

  // VAPID: the key, and a token for the endpoint's origin that expires in 12 hours.
  const std::string authorization = got.Header("authorization");
  ASSERT_EQ(authorization.rfind("vapid t=", 0), 0U) << authorization;
  EXPECT_TRUE(authorization.ends_with(", k=" + VapidPublicKey(f.vapid))) << authorization;
  const std::size_t dot = authorization.find('.');
  const std::string claims_b64 =
      authorization.substr(dot + 1, authorization.find('.', dot + 1) - dot - 1);
  const boost::json::value claims = boost::json::parse(
      net::DecodeBase64(claims_b64, net::Base64Alphabet::kUrlSafeNoPadding).value());
  EXPECT_EQ(claims.at("aud").as_string(), "https://localhost:" + std::to_string(server.port()));
  EXPECT_EQ(claims.at("sub").as_string(), "mailto:ops@example.com");
  const std::int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  EXPECT_NEAR(static_cast<double>(claims.at("exp").as_int64()), static_cast<double>(now_s + 43200),
              60);
}

TEST(SendPush, WithoutATopicSendsNoTopicHeader) {
  Fixture f;
  TlsServer server(f.certificate, Reply("202 Accepted"));
  EXPECT_EQ(f.Send(server, {.payload = "x"}).kind, PushOutcome::kDelivered);
  const Received got = Parse(server.requests().at(0));
  EXPECT_EQ(got.headers.count("topic"), 0U);
  EXPECT_EQ(got.Header("ttl"), "86400");
  EXPECT_EQ(got.Header("urgency"), "normal");
}

TEST(SendPush, GoneSubscriptions) {
  Fixture f;
  for (const char* status : {"404 Not Found", "410 Gone"}) {
    TlsServer server(f.certificate, Reply(status, "push subscription has unsubscribed"));
    const PushOutcome outcome = f.Send(server, {.payload = "x"});
    EXPECT_EQ(outcome.kind, PushOutcome::kGone) << status;
    EXPECT_EQ(outcome.detail, "push subscription has unsubscribed");
  }
}

TEST(SendPush, TooManyRequestsAndServerErrorsAreRetriedAfterWhatTheServiceSays) {
  Fixture f;
  {
    TlsServer server(f.certificate, Reply("429 Too Many Requests", "", "Retry-After: 30\r\n"));
    const PushOutcome outcome = f.Send(server, {.payload = "x"});
    EXPECT_EQ(outcome.kind, PushOutcome::kRetry);
    EXPECT_EQ(outcome.status, 429);
    EXPECT_EQ(outcome.retry_after_ms, 30000);
  }
  {
    TlsServer server(f.certificate, Reply("500 Internal Server Error", "oops"));
    const PushOutcome outcome = f.Send(server, {.payload = "x"});
    EXPECT_EQ(outcome.kind, PushOutcome::kRetry);
    EXPECT_EQ(outcome.status, 500);
    EXPECT_EQ(outcome.retry_after_ms, 0);
  }
  {
    TlsServer server(f.certificate, Reply("503 Service Unavailable", "",
                                          "Retry-After: Fri, 31 Dec 9999 23:59:59 GMT\r\n"));
    EXPECT_EQ(f.Send(server, {.payload = "x"}).retry_after_ms, kMaxRetryAfterMs);
  }
}

TEST(SendPush, OtherClientErrorsAreRejectedWithAShortPrintableDetail) {
  Fixture f;
  const std::string body = "bad\x01\xff request " + std::string(500, 'z');
  TlsServer server(f.certificate, Reply("400 Bad Request", body));
  const PushOutcome outcome = f.Send(server, {.payload = "x"});
  EXPECT_EQ(outcome.kind, PushOutcome::kRejected);
  EXPECT_EQ(outcome.status, 400);
  EXPECT_EQ(outcome.detail.size(), kMaxDetailBytes);
  EXPECT_EQ(outcome.detail.substr(0, 14), "bad?? request ");
}

TEST(SendPush, AServerThatNeverAnswersIsRetriedAfterTheTimeout) {
  Fixture f;
  int port = 0;
  const int listener = net::test_support::ListenOnLoopback(port);  // accepts, never speaks
  const auto start = std::chrono::steady_clock::now();
  const PushOutcome outcome = SendPush(f.ua.At(port), f.vapid, "mailto:a@b.c", {.payload = "x"},
                                       milliseconds(300), f.certificate.pem_path);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  close(listener);
  EXPECT_EQ(outcome.kind, PushOutcome::kRetry);
  EXPECT_EQ(outcome.status, 0);
  EXPECT_FALSE(outcome.detail.empty());
  EXPECT_LT(elapsed, std::chrono::seconds(3));
}

TEST(SendPush, AReplyThatIsNotHttpOrTooLargeIsRetried) {
  Fixture f;
  {
    TlsServer server(f.certificate, "garbage\r\n\r\n");
    const PushOutcome outcome = f.Send(server, {.payload = "x"});
    EXPECT_EQ(outcome.kind, PushOutcome::kRetry);
    EXPECT_EQ(outcome.status, 0);
  }
  {
    TlsServer server(f.certificate, Reply("201 Created", std::string(kMaxReplyBytes + 1, 'x')));
    const PushOutcome outcome = f.Send(server, {.payload = "x"});
    EXPECT_EQ(outcome.kind, PushOutcome::kRetry);
    EXPECT_EQ(outcome.status, 0);
  }
}

TEST(SendPush, RefusesAMessageItCannotSendWithoutSendingIt) {
  Fixture f;
  TlsServer server(f.certificate, Reply("201 Created"));
  for (const PushMessage& message :
       {PushMessage{.payload = std::string(kMaxPlaintextBytes + 1, 'x')},
        PushMessage{.payload = "x", .ttl_s = -1},
        PushMessage{.payload = "x", .ttl_s = kMaxTtlS + 1},
        PushMessage{.payload = "x", .topic = std::string(33, 'a')},
        PushMessage{.payload = "x", .topic = "a.b"},
        PushMessage{.payload = "x", .urgency = "urgent"}}) {
    const PushOutcome outcome = f.Send(server, message);
    EXPECT_EQ(outcome.kind, PushOutcome::kRejected) << message.topic;
    EXPECT_EQ(outcome.status, 0);
    EXPECT_FALSE(outcome.detail.empty());
  }
  EXPECT_TRUE(server.requests().empty());
}

TEST(TopicFor, Is32Base64UrlCharactersPerKey) {
  const std::string topic = TopicFor("ses_1");
  EXPECT_EQ(topic.size(), kMaxTopicChars);
  EXPECT_EQ(
      topic.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
      std::string::npos);
  EXPECT_EQ(TopicFor("ses_1"), topic);
  EXPECT_NE(TopicFor("ses_2"), topic);
}

TEST(SendNtfy, PostsTheTextToTheTopicWithTitlePriorityAndClick) {
  Certificate certificate;
  TlsServer server(certificate, Reply("200 OK", R"({"id":"x"})"));
  const NtfyTarget target{"https://localhost:" + std::to_string(server.port()) + "/ntfy/",
                          "agent_alerts-1"};
  const PushOutcome outcome =
      SendNtfy(target, "Needs you:\nrun tests", "line one\r\nline two", 9,
               "https://daemon.example/#agent=ses_1", kTimeout, certificate.pem_path);
  EXPECT_EQ(outcome.kind, PushOutcome::kDelivered) << outcome.detail;
  const Received got = Parse(server.requests().at(0));
  EXPECT_EQ(got.line, "POST /ntfy/agent_alerts-1 HTTP/1.1");
  EXPECT_EQ(got.Header("title"), "Needs you: run tests");
  EXPECT_EQ(got.Header("priority"), "5");  // clamped
  EXPECT_EQ(got.Header("click"), "https://daemon.example/#agent=ses_1");
  EXPECT_EQ(got.body, "line one  line two");
}

TEST(SendNtfy, BoundsTheTextAndEncodesANonAsciiTitle) {
  Certificate certificate;
  TlsServer server(certificate, Reply("429 Too Many Requests", "", "Retry-After: 7\r\n"));
  const NtfyTarget target{"https://localhost:" + std::to_string(server.port()), "t"};
  std::string title;
  for (int i = 0; i < 100; ++i) title += "é";  // 200 bytes
  const PushOutcome outcome = SendNtfy(target, title + title, std::string(10000, 'b'), 0, "",
                                       kTimeout, certificate.pem_path);
  EXPECT_EQ(outcome.kind, PushOutcome::kRetry);
  EXPECT_EQ(outcome.retry_after_ms, 7000);
  const Received got = Parse(server.requests().at(0));
  EXPECT_EQ(got.line, "POST /t HTTP/1.1");
  EXPECT_EQ(got.Header("priority"), "1");
  EXPECT_EQ(got.headers.count("click"), 0U);
  EXPECT_EQ(got.body.size(), kMaxNtfyBodyBytes);
  // RFC 2047 encoded-words of whole characters, which decode to the title cut at 256 bytes.
  std::string decoded;
  const std::string title_header = got.Header("title");
  std::string_view rest = title_header;
  while (!rest.empty()) {
    ASSERT_TRUE(rest.starts_with("=?UTF-8?B?")) << rest;
    const std::size_t end = rest.find("?=");
    ASSERT_LE(end + 2, 75U);
    decoded += net::DecodeBase64(rest.substr(10, end - 10)).value();
    rest.remove_prefix(std::min(rest.size(), end + 3));
  }
  EXPECT_EQ(decoded, (title + title).substr(0, 256));
}

TEST(NtfyTarget, IsValidated) {
  EXPECT_TRUE(ValidateNtfyTarget({"https://ntfy.sh", "abc_DEF-123"}).ok());
  EXPECT_TRUE(ValidateNtfyTarget({"http://10.0.0.2:8080", std::string(64, 'a')}).ok());
  for (const NtfyTarget& bad :
       std::initializer_list<NtfyTarget>{{"https://ntfy.sh", ""},
                                         {"https://ntfy.sh", std::string(65, 'a')},
                                         {"https://ntfy.sh", "a/b"},
                                         {"https://ntfy.sh", "a b"},
                                         {"ntfy.sh", "t"},
                                         {"ftp://ntfy.sh", "t"},
                                         {"https://ntfy.sh/?x=1", "t"},
                                         {"https://ntfy.sh/#x", "t"}}) {
    const Status status = ValidateNtfyTarget(bad);
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << bad.url << " " << bad.topic;
    EXPECT_NE(status.message().find("ntfy"), std::string::npos);
  }
  Result<NtfyTarget> target =
      NtfyTargetFromJson(boost::json::parse(R"({"url":"https://ntfy.sh","topic":"t"})"));
  ASSERT_TRUE(target.ok());
  EXPECT_EQ(NtfyTargetToJson(*target),
            boost::json::parse(R"({"url":"https://ntfy.sh","topic":"t"})"));
  EXPECT_NE(NtfyTargetFromJson(boost::json::parse(R"({"url":"https://ntfy.sh","topic":"t","x":1})"))
                .status()
                .message()
                .find("\"x\""),
            std::string::npos);
  EXPECT_FALSE(NtfyTargetFromJson(boost::json::parse(R"({"url":"https://ntfy.sh"})")).ok());
  // A target SendNtfy cannot send to is refused before anything is sent.
  EXPECT_EQ(SendNtfy({"https://ntfy.sh", "a/b"}, "t", "b", 3, "", kTimeout).kind,
            PushOutcome::kRejected);
  EXPECT_EQ(SendNtfy({"https://ntfy.sh", "t"}, "t", "b", 3, "https://x/\r\nX: y", kTimeout).kind,
            PushOutcome::kRejected);
  EXPECT_EQ(SendNtfy({"https://ntfy.sh", "t"}, "t", "b", 3, "javascript:alert(1)", kTimeout).kind,
            PushOutcome::kRejected);
}

}  // namespace
}  // namespace agentstream::push
