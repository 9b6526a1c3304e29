// The event loop every provider runs on, and the timer interface providers use for timeouts and
// delays. Asio stays inside src/process/*.cc: nothing else includes its headers.
//
// Threading: an EventLoop is driven by one thread at a time (the one calling Run*); every
// callback it runs (timers, posted functions, process output) runs on that thread, so provider
// code needs no locks. Post() is the only method safe to call from other threads.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>

namespace agentstream::process {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

// A pending timer. Destroying or cancelling it guarantees its callback will not run.
class TimerHandle {
 public:
  virtual ~TimerHandle() = default;
  virtual void Cancel() = 0;
};

// Injected clock and timers, so tests can step time by hand (ManualTimers) where it matters.
class Timers {
 public:
  virtual ~Timers() = default;
  virtual Clock::time_point Now() const = 0;
  // Runs `fn` once, `delay` from now, on the loop's thread, unless the handle was cancelled or
  // destroyed first.
  [[nodiscard]] virtual std::unique_ptr<TimerHandle> After(Millis delay,
                                                           std::function<void()> fn) = 0;
};

// Virtual time for tests: nothing fires until Advance(). Now() may be called from any thread (the
// code under test may read the time on a thread of its own); After() and Advance() are not
// thread-safe.
class ManualTimers final : public Timers {
 public:
  Clock::time_point Now() const override { return now_.load(); }
  std::unique_ptr<TimerHandle> After(Millis delay, std::function<void()> fn) override;
  // Moves time forward by `d`, running every timer that falls due, in due order (ties in
  // creation order). Timers created by callbacks run too if they fall due within the step.
  void Advance(Millis d);
  std::size_t pending() const { return timers_.size(); }

 private:
  struct Key {
    Clock::time_point due;
    std::uint64_t order;
    auto operator<=>(const Key&) const = default;
  };
  std::atomic<Clock::time_point> now_{Clock::time_point{}};
  std::uint64_t next_order_ = 0;
  std::map<Key, std::function<void()>> timers_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // handles outliving this object
};

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Real timers on this loop.
  Timers& timers();
  // Queues `fn` to run on the loop thread. Thread-safe.
  void Post(std::function<void()> fn);
  // Runs handlers until `pred()` is true (checked after each handler) or `timeout` passes.
  // Returns pred()'s final value.
  bool RunUntil(const std::function<bool()>& pred, Millis timeout);
  // Runs handlers for `d`.
  void RunFor(Millis d);

  // The asio::io_context behind this loop, for src/process/*.cc only.
  void* native();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentstream::process
