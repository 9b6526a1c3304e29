#include "cli/sd_notify.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>

#include "testing/datagram_socket.h"
#include "testing/temp_dir.h"

namespace agentstream::cli {
namespace {

// Sets NOTIFY_SOCKET for one test and restores it after.
class NotifySocketEnv {
 public:
  explicit NotifySocketEnv(const std::string& value) {
    if (const char* old = std::getenv("NOTIFY_SOCKET")) old_ = old;
    ::setenv("NOTIFY_SOCKET", value.c_str(), 1);
  }
  ~NotifySocketEnv() {
    if (old_) {
      ::setenv("NOTIFY_SOCKET", old_->c_str(), 1);
    } else {
      ::unsetenv("NOTIFY_SOCKET");
    }
  }

 private:
  std::optional<std::string> old_;
};

using test_support::DatagramSocket;
constexpr std::chrono::seconds kWait{10};

TEST(SdNotify, SendsTheStateToASocketPath) {
  test_support::TempDir dir("sd-notify");
  const std::string path = dir.File("notify");
  DatagramSocket receiver(path);
  ASSERT_TRUE(receiver.bound());
  NotifySocketEnv env(path);
  ASSERT_TRUE(Notify("READY=1").ok());
  EXPECT_EQ(receiver.Receive(kWait), "READY=1");
  ASSERT_TRUE(Notify("STOPPING=1").ok());
  EXPECT_EQ(receiver.Receive(kWait), "STOPPING=1");
}

TEST(SdNotify, SendsTheStateToAnAbstractSocket) {
  // Abstract names are machine-wide: one of this run's own.
  const std::string name = "@agentstream-sd-notify-" + std::to_string(::getpid()) + "-" +
                           std::to_string(std::random_device{}());
  DatagramSocket receiver(name);
  ASSERT_TRUE(receiver.bound());
  NotifySocketEnv env(name);
  ASSERT_TRUE(Notify("READY=1").ok());
  EXPECT_EQ(receiver.Receive(kWait), "READY=1");
}

TEST(SdNotify, IsANoOpWithoutNotifySocket) {
  NotifySocketEnv env("");
  EXPECT_TRUE(Notify("READY=1").ok());
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_TRUE(Notify("READY=1").ok());
}

TEST(SdNotify, ReturnsErrors) {
  {
    NotifySocketEnv env("vsock:2:1234");
    EXPECT_EQ(Notify("READY=1").code(), ErrorCode::kInvalidArgument);
  }
  test_support::TempDir dir("sd-notify");
  NotifySocketEnv env(dir.File("nobody-listens"));
  const Status status = Notify("READY=1");
  EXPECT_EQ(status.code(), ErrorCode::kUnavailable);
  EXPECT_NE(status.message().find("nobody-listens"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace agentstream::cli
