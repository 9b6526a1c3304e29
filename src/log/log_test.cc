#include "log/log.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace agentstream::log {
namespace {

// Each test logs into its own stream; the default configuration is restored afterwards.
class LogTest : public ::testing::Test {
 protected:
  void Use(Level level, Format format, std::vector<std::string> secrets = {}) {
    Configure(Options{level, format, std::move(secrets), &out_});
  }
  void TearDown() override { Configure(Options{Level::kOff}); }

  std::vector<std::string> Lines() const {
    std::vector<std::string> lines;
    std::istringstream in(out_.str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  std::ostringstream out_;
};

TEST_F(LogTest, LinesBelowTheLevelAreDropped) {
  Use(Level::kWarn, Format::kJson);
  EXPECT_FALSE(Enabled(Level::kInfo));
  EXPECT_TRUE(Enabled(Level::kWarn));
  Debug("a.debug");
  Info("a.info");
  Warn("a.warn", {{"n", 1}});
  Error("a.error");
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  const boost::json::value warn = boost::json::parse(lines[0]);
  EXPECT_EQ(warn.at("level").as_string(), "warn");
  EXPECT_EQ(warn.at("event").as_string(), "a.warn");
  EXPECT_EQ(warn.at("n").as_int64(), 1);
  EXPECT_EQ(boost::json::parse(lines[1]).at("level").as_string(), "error");
}

TEST_F(LogTest, OffDropsEverythingAndTraceKeepsEverything) {
  Use(Level::kOff, Format::kText);
  Error("a.error");
  EXPECT_TRUE(Lines().empty());
  Use(Level::kTrace, Format::kText);
  Trace("a.trace");
  ASSERT_EQ(Lines().size(), 1u);
  EXPECT_NE(Lines()[0].find(" TRACE a.trace"), std::string::npos) << Lines()[0];
}

TEST_F(LogTest, ARepeatedFailureIsLoggedOncePerErrorUntilASuccess) {
  Use(Level::kInfo, Format::kJson);
  RepeatedFailure renewals("store.renew_failed");
  const Status down = agentstream::Error(ErrorCode::kUnavailable, "the store is gone");
  renewals.Report(down, {{"leases", 2}});
  renewals.Report(down, {{"leases", 3}});
  renewals.Report(agentstream::Error(ErrorCode::kUnavailable, "refused"));
  renewals.Report(Status::Ok());
  renewals.Report(down);
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  const boost::json::value first = boost::json::parse(lines[0]);
  EXPECT_EQ(first.at("level").as_string(), "warn");
  EXPECT_EQ(first.at("event").as_string(), "store.renew_failed");
  EXPECT_NE(first.at("error").as_string().find("the store is gone"), boost::json::string::npos);
  EXPECT_EQ(first.at("leases").as_int64(), 2);
  EXPECT_NE(lines[1].find("refused"), std::string::npos) << "another error is logged";
  EXPECT_NE(lines[2].find("the store is gone"), std::string::npos) << "again after a success";
}

TEST_F(LogTest, SecretsGivenToConfigureAreMasked) {
  Use(Level::kInfo, Format::kText, {"tok-123", ""});
  Info("daemon.started", {{"error", "rejected tok-123"}});
  ASSERT_EQ(Lines().size(), 1u);
  EXPECT_EQ(Lines()[0].find("tok-123"), std::string::npos) << Lines()[0];
  EXPECT_NE(Lines()[0].find("error=\"rejected ***\""), std::string::npos) << Lines()[0];
}

TEST_F(LogTest, ScopesAddTheirFieldsUntilTheyEnd) {
  Use(Level::kInfo, Format::kText);
  std::vector<Field> captured;
  {
    Scope agent({{"agent", "ses_a"}});
    {
      Scope provider({{"provider", "acp:x"}});
      captured = Scope::Current();
      Info("process.started", {{"pid", 9}});
    }
    Info("agent.created");
  }
  Info("daemon.stopping");
  {
    Scope again(captured);  // entered later, e.g. when the process exits
    Info("process.exited");
  }
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("process.started agent=ses_a provider=acp:x pid=9"), std::string::npos);
  EXPECT_NE(lines[1].find("agent.created agent=ses_a"), std::string::npos);
  EXPECT_EQ(lines[1].find("provider"), std::string::npos);
  EXPECT_EQ(lines[2].find("agent="), std::string::npos);
  EXPECT_NE(lines[3].find("process.exited agent=ses_a provider=acp:x"), std::string::npos);
}

TEST(TailTest, KeepsTheEndWithinTheBound) {
  EXPECT_EQ(Tail("short\n\n"), "short");
  std::string text = "head" + std::string(kMaxValueBytes, 'x') + "é" + "end\n";
  const std::string tail = Tail(text);
  EXPECT_LE(tail.size(), kMaxValueBytes);
  EXPECT_EQ(tail.substr(0, 3), "...");
  EXPECT_EQ(tail.substr(tail.size() - 5),
            "\xC3\xA9"
            "end");
  // A cut inside a character moves forward to the next one.
  std::string multi;
  while (multi.size() < kMaxValueBytes + 10) multi += "é";
  const std::string cut = Tail(multi);
  EXPECT_EQ(static_cast<unsigned char>(cut[3]), 0xC3);
}

TEST(ParseTest, NamesOfLevelsAndFormats) {
  EXPECT_EQ(ParseLevel("debug"), Level::kDebug);
  EXPECT_EQ(ParseLevel("off"), Level::kOff);
  EXPECT_EQ(ParseLevel("INFO"), std::nullopt);
  EXPECT_EQ(ParseFormat("json"), Format::kJson);
  EXPECT_EQ(ParseFormat("auto"), std::nullopt);
}

}  // namespace
}  // namespace agentstream::log
