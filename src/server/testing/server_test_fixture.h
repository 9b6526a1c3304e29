// Test-only: a real server on a free loopback port over a MemoryEventLog and a real AgentManager
// (scripted provider) whose EventLoop runs on its own thread, plus JSON helpers.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "server/http_server.h"
#include "server/test_client.h"
#include "store/memory_log.h"
#include "testing/eventually.h"

namespace agentstream::server::testing {

namespace json = boost::json;
using namespace std::chrono_literals;
using test_support::Eventually;

inline json::value ParseOrNull(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  return ec ? json::value() : v;
}

// The JSON array in `text` (empty when it is not one). Returned by value so that a range-for
// over it keeps it alive.
inline json::array ArrayOf(const std::string& text) {
  json::value v = ParseOrNull(text);
  return v.is_array() ? std::move(v.as_array()) : json::array();
}

class ServerFixture : public ::testing::Test {
 protected:
  // Override to change server options before start.
  virtual void Configure(ServerOptions&) {}
  virtual std::chrono::milliseconds ChunkGap() { return 5ms; }

  void SetUp() override {
    runtime::ProviderFactoryOptions factory_options;
    factory_options.scripted_chunk_gap = ChunkGap();
    factory_ = std::make_unique<runtime::DefaultProviderFactory>(factory_options);
    manager_ = std::make_unique<runtime::AgentManager>(log_, *factory_, loop_);
    loop_thread_ = std::thread([this] {
      while (!stop_) loop_.RunUntil([this] { return stop_.load(); }, 1000ms);
    });
    ServerOptions options;
    options.port = 0;
    options.threads = 2;
    Configure(options);
    server_ = std::make_unique<Server>(*manager_, log_, options);
    ASSERT_TRUE(server_->Start().ok());
    port_ = server_->port();
  }

  void TearDown() override {
    server_->Stop();
    std::promise<void> stopped;
    manager_->Shutdown([&stopped] { stopped.set_value(); });
    stopped.get_future().wait_for(10s);
    stop_ = true;
    loop_thread_.join();
    manager_.reset();
    server_.reset();
  }

  json::value Call(const std::string& method, const std::string& target,
                   const std::string& body = "", int expect_status = 200) {
    TestResponse res = HttpCall(port_, method, target, body);
    EXPECT_EQ(res.status, expect_status) << method << " " << target << ": " << res.body;
    return ParseOrNull(res.body);
  }

  std::string CreateAgent() {
    json::value agent = Call("POST", "/v1/agents", R"({"provider":"scripted","cwd":"/tmp"})");
    if (!agent.is_object() || !agent.as_object().contains("id")) return "";
    return std::string(agent.at("id").as_string());
  }

  json::value Snapshot(const std::string& id) { return Call("GET", "/v1/agents/" + id); }

  bool WaitIdle(const std::string& id) {
    return Eventually([&] {
      json::value s = Snapshot(id);
      return s.is_object() && s.at("status") == "idle" && s.at("activeTurn").is_null() &&
             s.at("queue").as_array().empty();
    });
  }

  // Every event of the session's current epoch, read over HTTP page by page.
  json::array AllEvents(const std::string& id) {
    json::array out;
    std::string offset = "-1";
    for (int i = 0; i < 1000; ++i) {
      TestResponse res = HttpCall(port_, "GET", "/v1/agents/" + id + "/events?offset=" + offset);
      if (res.status != 200) break;
      for (auto& e : ArrayOf(res.body)) out.push_back(e);
      offset = res.Header("stream-next-offset");
      if (res.Header("stream-up-to-date") == "true") break;
    }
    return out;
  }

  static std::string Kind(const json::value& e) { return std::string(e.at("kind").as_string()); }
  static std::uint64_t SeqOf(const json::value& e) {
    return e.at("seq").to_number<std::uint64_t>();
  }

  MemoryEventLog log_;
  process::EventLoop loop_;
  std::unique_ptr<runtime::DefaultProviderFactory> factory_;
  std::unique_ptr<runtime::AgentManager> manager_;
  std::atomic<bool> stop_{false};
  std::thread loop_thread_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

}  // namespace agentstream::server::testing
