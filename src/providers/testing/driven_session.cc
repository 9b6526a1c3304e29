#include "providers/testing/driven_session.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

namespace agentstream::providers::testing {

namespace fs = std::filesystem;
using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)
using process::Millis;

DrivenSession::DrivenSession(process::EventLoop& loop, const std::string& root,
                             const std::string& prefix)
    : loop_(loop), root_(root) {
  if (root_.empty()) root_ = owned_root_.emplace(prefix).path();
  std::error_code ec;
  fs::create_directories(root_ + "/home", ec);
  fs::create_directories(root_ + "/work", ec);
}

DrivenSession::~DrivenSession() {
  if (provider_) Close();
  Drop();
  provider_.reset();
}

void DrivenSession::Start() {
  std::optional<Status> started;
  provider_->Start([&](const Status& s) { started = s; });
  ASSERT_TRUE(WaitFor([&] { return started.has_value(); }, start_wait_))
      << "the provider did not start; stderr: " << StderrTail();
  ASSERT_TRUE(started->ok()) << started->ToString() << "; stderr: " << StderrTail();
}

void DrivenSession::Submit(const std::string& text, WhileRunning while_running) {
  const std::string id = "client_" + std::to_string(next_client_id_++);
  const Status s = Command(SubmitPrompt{id, text, {}, while_running});
  ASSERT_TRUE(s.ok()) << s.ToString();
}

void DrivenSession::Interrupt() { ASSERT_TRUE(Command(RequestInterrupt{}).ok()); }

bool DrivenSession::WaitFor(const std::function<bool()>& pred, Millis timeout) {
  return loop_.RunUntil(pred, timeout);
}

bool DrivenSession::WaitIdle(Millis timeout) {
  return WaitFor([&] { return Settled(); }, timeout);
}

void DrivenSession::Close() {
  bool closed = false;
  provider_->Close([&](const Status&) { closed = true; });
  loop_.RunUntil([&] { return closed; }, Millis(10000));
}

}  // namespace agentstream::providers::testing
