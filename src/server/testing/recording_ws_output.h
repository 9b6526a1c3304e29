// Test-only: a WsOutput (server/ws_app.h) that keeps every frame it is given instead of writing
// it, for tests and fuzz targets that drive a WsApp without a socket. Not thread-safe: use it on
// the app's strand only.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/ws_app.h"

namespace agentstream::server::testing {

class RecordingWsOutput final : public WsOutput {
 public:
  // Schedules a delayed function (WsOutput::After); the default drops it.
  using Scheduler = std::function<void(std::chrono::milliseconds, std::function<void()>)>;

  // `written`: frames count as written at once (queued_bytes() stays 0); otherwise they stay
  // queued forever, as on a client that never reads.
  explicit RecordingWsOutput(bool written, Scheduler after = nullptr)
      : written_(written), after_(std::move(after)) {}

  void Send(std::string head, std::shared_ptr<const std::string> shared,
            std::string tail) override {
    std::string frame = std::move(head);
    if (shared) frame += *shared;
    frame += tail;
    if (!written_) bytes_ += frame.size();
    frames.push_back(std::move(frame));
  }
  std::size_t queued_bytes() const override { return bytes_; }
  void Close(std::string reason) override {
    closed = true;
    close_reason = std::move(reason);
  }
  void After(std::chrono::milliseconds delay, std::function<void()> fn) override {
    if (after_) after_(delay, std::move(fn));
  }

  std::vector<std::string> frames;  // every frame, in the order sent
  bool closed = false;
  std::string close_reason;

 private:
  bool written_;
  Scheduler after_;
  std::size_t bytes_ = 0;
};

}  // namespace agentstream::server::testing
