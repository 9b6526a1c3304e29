#include "process/event_loop.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace agentstream::process {

namespace asio = boost::asio;

namespace {

class ManualHandle final : public TimerHandle {
 public:
  ManualHandle(std::function<void()> cancel, std::weak_ptr<int> alive)
      : cancel_(std::move(cancel)), alive_(std::move(alive)) {}
  ~ManualHandle() override { Cancel(); }
  void Cancel() override {
    if (cancel_ && !alive_.expired()) cancel_();
    cancel_ = nullptr;
  }

 private:
  std::function<void()> cancel_;
  std::weak_ptr<int> alive_;
};

class AsioHandle final : public TimerHandle {
 public:
  explicit AsioHandle(std::shared_ptr<asio::steady_timer> timer, std::shared_ptr<bool> cancelled)
      : timer_(std::move(timer)), cancelled_(std::move(cancelled)) {}
  ~AsioHandle() override { Cancel(); }
  void Cancel() override {
    *cancelled_ = true;
    timer_->cancel();
  }

 private:
  std::shared_ptr<asio::steady_timer> timer_;
  std::shared_ptr<bool> cancelled_;
};

class AsioTimers final : public Timers {
 public:
  explicit AsioTimers(asio::io_context& io) : io_(io) {}
  Clock::time_point Now() const override { return Clock::now(); }
  std::unique_ptr<TimerHandle> After(Millis delay, std::function<void()> fn) override {
    auto timer = std::make_shared<asio::steady_timer>(io_, delay);
    auto cancelled = std::make_shared<bool>(false);
    timer->async_wait([timer, cancelled, fn = std::move(fn)](const boost::system::error_code& ec) {
      if (!ec && !*cancelled) fn();
    });
    return std::make_unique<AsioHandle>(timer, cancelled);
  }

 private:
  asio::io_context& io_;
};

}  // namespace

std::unique_ptr<TimerHandle> ManualTimers::After(Millis delay, std::function<void()> fn) {
  const Key key{now_.load() + delay, next_order_++};
  timers_.emplace(key, std::move(fn));
  return std::make_unique<ManualHandle>([this, key] { timers_.erase(key); }, alive_);
}

void ManualTimers::Advance(Millis d) {
  const Clock::time_point end = now_.load() + d;
  while (!timers_.empty() && timers_.begin()->first.due <= end) {
    auto node = timers_.extract(timers_.begin());
    now_.store(node.key().due);
    node.mapped()();
  }
  now_.store(end);
}

struct EventLoop::Impl {
  asio::io_context io;
  // Keeps run_one_for() blocking (not spinning) while nothing is pending.
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  AsioTimers timers{io};
};

EventLoop::EventLoop() : impl_(std::make_unique<Impl>()) {}
EventLoop::~EventLoop() = default;

Timers& EventLoop::timers() { return impl_->timers; }

void EventLoop::Post(std::function<void()> fn) { asio::post(impl_->io, std::move(fn)); }

bool EventLoop::RunUntil(const std::function<bool()>& pred, Millis timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  auto& io = impl_->io;
  while (!pred()) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    // Wake at least every 20 ms so the predicate and the deadline are checked even when idle.
    io.run_one_for(std::min<Clock::duration>(deadline - now, Millis(20)));
  }
  return pred();
}

void EventLoop::RunFor(Millis d) {
  RunUntil([] { return false; }, d);
}

void* EventLoop::native() { return &impl_->io; }

}  // namespace agentstream::process
