// Paired devices over real sockets (device_routes.h): pairing and the exchange, the device token
// as a credential beside the owner's, who may change what, and a revocation closing the device's
// WebSocket, SSE and long-poll connections within a second (on this daemon at once, and when
// another daemon revoked it, at the next poll of the store).
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "devices/device_service.h"
#include "server/testing/http_fixtures.h"
#include "system/wall_clock.h"

namespace agentstream::server::testing {
namespace {

using Headers = std::map<std::string, std::string>;

Headers Bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

class DevicesTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override {
    o.host = "0.0.0.0";
    o.security.token = "own3r";
    o.long_poll_timeout = 20s;
    devices_ = std::make_unique<devices::DeviceService>(
        log_.devices(), devices::DeviceServiceOptions{.poll_interval_ms = 250});
    devices_->Start();
    o.devices = devices_.get();
    o.pairing_public_url = public_url_;
    o.streams = &streams_;
  }

  // Pairs a device through the owner's pairing code; its token and id.
  std::pair<std::string, std::string> Pair(const std::string& name) {
    TestResponse code =
        HttpCall(port_, "POST", "/v1/pairings", R"({"name":")" + name + "\"}", Bearer("own3r"));
    EXPECT_EQ(code.status, 201) << code.body;
    const json::value pairing = ParseOrNull(code.body);
    TestResponse paired =
        HttpCall(port_, "POST", "/v1/pairings/exchange",
                 R"({"code":")" + std::string(pairing.at("code").as_string()) + "\"}",
                 {{"User-Agent", "T/1"}});
    EXPECT_EQ(paired.status, 201) << paired.body;
    const json::value device = ParseOrNull(paired.body);
    return {std::string(device.at("token").as_string()),
            std::string(device.at("device").at("id").as_string())};
  }

  std::string public_url_;
  std::unique_ptr<devices::DeviceService> devices_;
  streams::MemoryStreamStore streams_{streams::StreamLimits{}, nullptr};
};

TEST_F(DevicesTest, APairedDeviceUsesItsOwnToken) {
  TestResponse pairing = HttpCall(port_, "POST", "/v1/pairings",
                                  R"({"name":"phone","expiresInMs":60000})", Bearer("own3r"));
  ASSERT_EQ(pairing.status, 201) << pairing.body;
  const json::value created = ParseOrNull(pairing.body);
  const std::string code(created.at("code").as_string());
  EXPECT_EQ(code.rfind("asp_", 0), 0u);
  EXPECT_EQ(std::string(created.at("url").as_string()),
            "http://127.0.0.1:" + std::to_string(port_) + "/#pair=" + code);
  EXPECT_NEAR(static_cast<double>(created.at("expiresMs").as_int64()),
              static_cast<double>(system::WallClockMs() + 60000), 5000.0);

  // No credential needed for the exchange; once only.
  TestResponse paired = HttpCall(port_, "POST", "/v1/pairings/exchange",
                                 R"({"code":")" + code + "\"}", {{"User-Agent", "Phone/1"}});
  ASSERT_EQ(paired.status, 201) << paired.body;
  const json::value device = ParseOrNull(paired.body);
  const std::string token(device.at("token").as_string());
  EXPECT_EQ(token.rfind("asd_", 0), 0u);
  EXPECT_EQ(device.at("device").at("name"), "phone");
  EXPECT_EQ(device.at("device").at("current"), true);
  EXPECT_EQ(device.at("device").at("revoked"), false);
  TestResponse again =
      HttpCall(port_, "POST", "/v1/pairings/exchange", R"({"code":")" + code + "\"}");
  EXPECT_EQ(again.status, 401);
  EXPECT_EQ(ParseOrNull(again.body).at("error").at("code"), "unauthorized");

  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", Bearer(token)).status, 200);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents?token=" + token).status, 200);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", Bearer("asd_forged")).status, 401);
  const json::value me = ParseOrNull(HttpCall(port_, "GET", "/v1/whoami", "", Bearer(token)).body);
  EXPECT_EQ(me.at("principal"), "device");
  EXPECT_EQ(me.at("device").at("name"), "phone");
  EXPECT_EQ(me.at("device").at("userAgent"), "Phone/1");
  EXPECT_EQ(
      ParseOrNull(HttpCall(port_, "GET", "/v1/whoami", "", Bearer("own3r")).body).at("principal"),
      "owner");
  // A device does not make pairing codes.
  EXPECT_EQ(HttpCall(port_, "POST", "/v1/pairings", "{}", Bearer(token)).status, 403);
  WsClient ws;
  EXPECT_EQ(ws.Connect(port_, "/ws?token=" + token), 101);
  // Counted under their route patterns, never their ids.
  const std::string metrics = HttpCall(port_, "GET", "/metrics", "", Bearer("own3r")).body;
  for (const char* route : {"/v1/pairings\"", "/v1/pairings/exchange\"", "/v1/whoami\""})
    EXPECT_NE(metrics.find(route), std::string::npos) << route;
}

TEST_F(DevicesTest, BodiesAreStrict) {
  for (const char* body : {R"({"name":"p","extra":1})", R"({"name":""})", R"({"name":"a\u0007"})",
                           R"({"expiresInMs":9999})", R"({"expiresInMs":86400001})",
                           R"({"expiresInMs":"600000"})", R"([])"}) {
    TestResponse refused = HttpCall(port_, "POST", "/v1/pairings", body, Bearer("own3r"));
    EXPECT_EQ(refused.status, 400) << body << ": " << refused.body;
  }
  EXPECT_EQ(HttpCall(port_, "POST", "/v1/pairings/exchange", R"({"code":"x","name":"y"})").status,
            400);
  EXPECT_EQ(HttpCall(port_, "POST", "/v1/pairings/exchange", "{}").status, 400);
  const auto [token, id] = Pair("phone");
  EXPECT_EQ(
      HttpCall(port_, "PATCH", "/v1/devices/" + id, R"({"name":"x","y":1})", Bearer(token)).status,
      400);
  EXPECT_EQ(HttpCall(port_, "PATCH", "/v1/devices/" + id, R"({"name":""})", Bearer(token)).status,
            400);
  EXPECT_EQ(
      HttpCall(port_, "PATCH", "/v1/devices/dev_none", R"({"name":"x"})", Bearer("own3r")).status,
      404);
}

TEST_F(DevicesTest, ADeviceChangesOnlyItselfAndTheOwnerAny) {
  const auto [phone, phone_id] = Pair("phone");
  const auto [tablet, tablet_id] = Pair("tablet");
  const json::value list =
      ParseOrNull(HttpCall(port_, "GET", "/v1/devices", "", Bearer(phone)).body);
  ASSERT_EQ(list.at("devices").as_array().size(), 2u);
  EXPECT_EQ(list.at("devices").at(0).at("id"), phone_id.c_str());
  EXPECT_EQ(list.at("devices").at(0).at("current"), true);
  EXPECT_EQ(list.at("devices").at(1).at("current"), false);

  EXPECT_EQ(
      HttpCall(port_, "PATCH", "/v1/devices/" + tablet_id, R"({"name":"x"})", Bearer(phone)).status,
      403);
  EXPECT_EQ(HttpCall(port_, "DELETE", "/v1/devices/" + tablet_id, "", Bearer(phone)).status, 403);
  TestResponse renamed =
      HttpCall(port_, "PATCH", "/v1/devices/" + phone_id, R"({"name":"my phone"})", Bearer(phone));
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  EXPECT_EQ(ParseOrNull(renamed.body).at("name"), "my phone");
  TestResponse by_owner = HttpCall(port_, "PATCH", "/v1/devices/" + tablet_id,
                                   R"({"name":"kitchen"})", Bearer("own3r"));
  EXPECT_EQ(ParseOrNull(by_owner.body).at("name"), "kitchen");
  // A device may revoke itself; then its token is refused.
  TestResponse gone = HttpCall(port_, "DELETE", "/v1/devices/" + phone_id, "", Bearer(phone));
  ASSERT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(ParseOrNull(gone.body).at("revoked"), true);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", Bearer(phone)).status, 401);
  EXPECT_EQ(HttpCall(port_, "DELETE", "/v1/devices/" + phone_id, "", Bearer("own3r")).status,
            200);  // idempotent
}

TEST_F(DevicesTest, RevocationClosesTheDevicesConnectionsWithinASecond) {
  const auto [token, id] = Pair("phone");
  const auto [other, other_id] = Pair("other");
  TestResponse agent = HttpCall(port_, "POST", "/v1/agents",
                                R"({"provider":"scripted","cwd":"/tmp"})", Bearer("own3r"));
  ASSERT_EQ(agent.status, 200) << agent.body;
  const std::string agent_id(ParseOrNull(agent.body).at("id").as_string());

  WsClient ws;
  ASSERT_EQ(ws.Connect(port_, "/ws?token=" + token), 101);
  WsClient kept;
  ASSERT_EQ(kept.Connect(port_, "/ws?token=" + other), 101);
  SseClient sse;
  ASSERT_EQ(
      sse.Open(port_, "/v1/agents/" + agent_id + "/events?offset=now&live=sse&token=" + token),
      200);
  RawConnection poll;
  ASSERT_TRUE(poll.Connect(port_));
  poll.Send("GET /v1/agents/" + agent_id + "/events?offset=now&live=long-poll HTTP/1.1\r\n" +
            "Host: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n\r\n");
  std::this_thread::sleep_for(200ms);  // the long-poll is waiting

  const auto revoked_at = std::chrono::steady_clock::now();
  ASSERT_EQ(HttpCall(port_, "DELETE", "/v1/devices/" + id, "", Bearer("own3r")).status, 200);
  EXPECT_FALSE(ws.Read(1000ms).has_value());
  EXPECT_TRUE(ws.closed());
  EXPECT_TRUE(sse.Closed(1000ms));
  poll.ReadUntilClosed(1000ms);
  EXPECT_TRUE(poll.closed());
  EXPECT_LT(std::chrono::steady_clock::now() - revoked_at, 2000ms);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", Bearer(token)).status, 401);
  WsClient again;
  EXPECT_EQ(again.Connect(port_, "/ws?token=" + token), 401);
  // The other device's connection stays.
  EXPECT_FALSE(kept.closed());
  EXPECT_TRUE(kept.Send(R"({"type":"agents.list","id":"1"})"));
  EXPECT_TRUE(kept.Read(2000ms).has_value());
}

TEST_F(DevicesTest, RevocationClosesTheDevicesGenericStreamReads) {
  const auto [token, id] = Pair("phone");
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/stream/notes", "",
                     {{"Authorization", "Bearer own3r"}, {"Content-Type", "text/plain"}})
                .status,
            201);
  SseClient sse;
  ASSERT_EQ(sse.Open(port_, "/v1/stream/notes?offset=-1&live=sse&token=" + token), 200);
  ASSERT_EQ(HttpCall(port_, "DELETE", "/v1/devices/" + id, "", Bearer("own3r")).status, 200);
  EXPECT_TRUE(sse.Closed(1000ms));
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/stream/notes?offset=-1&token=" + token).status, 401);
}

TEST_F(DevicesTest, ARevocationWrittenByAnotherDaemonClosesAtThePoll) {
  const auto [token, id] = Pair("phone");
  WsClient ws;
  ASSERT_EQ(ws.Connect(port_, "/ws?token=" + token), 101);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", Bearer(token)).status, 200);  // cached
  // As another daemon sharing the store would: straight to the store.
  ASSERT_TRUE(log_.devices().RevokeDevice(id, system::WallClockMs()).ok());
  EXPECT_FALSE(ws.Read(1000ms).has_value());
  EXPECT_TRUE(ws.closed());
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", Bearer(token)).status, 401);
}

class PublicUrlTest : public DevicesTest {
 protected:
  void Configure(ServerOptions& o) override {
    public_url_ = url_;
    DevicesTest::Configure(o);
  }
  std::string url_ = "http://10.1.2.3:7600";
};

TEST_F(PublicUrlTest, PlainHttpToAnotherMachineIsRefusedForPairing) {
  TestResponse refused = HttpCall(port_, "POST", "/v1/pairings", "{}", Bearer("own3r"));
  EXPECT_EQ(refused.status, 400);
  for (const char* named : {"Tailscale", "Caddy", "--tls-cert", "docs/remote.md"})
    EXPECT_NE(refused.body.find(named), std::string::npos) << named << ": " << refused.body;
}

class HttpsPublicUrlTest : public PublicUrlTest {
 protected:
  void Configure(ServerOptions& o) override {
    url_ = "https://agents.example.net/";
    PublicUrlTest::Configure(o);
  }
};

TEST_F(HttpsPublicUrlTest, TheLinkStartsWithThePublicUrl) {
  TestResponse pairing = HttpCall(port_, "POST", "/v1/pairings", "{}", Bearer("own3r"));
  ASSERT_EQ(pairing.status, 201) << pairing.body;
  const std::string url(ParseOrNull(pairing.body).at("url").as_string());
  EXPECT_EQ(url.rfind("https://agents.example.net/#pair=asp_", 0), 0u) << url;
}

TEST_F(DevicesTest, FailedExchangesAreLimitedPerAddress) {
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(HttpCall(port_, "POST", "/v1/pairings/exchange", R"({"code":"asp_x"})").status, 401);
  TestResponse limited = HttpCall(port_, "POST", "/v1/pairings/exchange", R"({"code":"asp_x"})");
  EXPECT_EQ(limited.status, 429) << limited.body;
}

}  // namespace
}  // namespace agentstream::server::testing
