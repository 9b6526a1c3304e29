// The live reads of a generic stream (live_source.h): each wake-up reads what the store holds
// after the reader's offset, through the protocol layer's PollLongPoll and SseStep.
#include "streams/live_source.h"

namespace agentstream::streams {

namespace {

class StoreLiveSource final : public LiveSource {
 public:
  StoreLiveSource(StreamStore& store, LiveRead read, std::chrono::milliseconds idle_interval,
                  std::size_t pause_bytes)
      : store_(store),
        read_(std::move(read)),
        idle_interval_(idle_interval),
        pause_bytes_(pause_bytes) {}
  ~StoreLiveSource() override {
    if (watch_ != 0) store_.Unwatch(read_.path, watch_);
  }

  bool Watch(std::function<void()> wake) override {
    watch_ = store_.Watch(read_.path, std::move(wake));
    return watch_ != 0;
  }
  bool sse() const override { return read_.sse; }
  std::optional<StreamResponse> Poll(bool timed_out) override {
    return PollLongPoll(store_, read_, timed_out);
  }
  std::string SseHead() const override { return SseResponseHead(read_); }
  std::chrono::milliseconds idle_interval() const override { return idle_interval_; }

  LiveStep Step(bool idle, FrameQueue& queue) override {
    LiveStep step;
    if (ended_) return step;
    if (queue.bytes > pause_bytes_) {
      step.more = true;  // read on once the transport has written some
      return step;
    }
    SseOutput out = SseStep(store_, read_, idle);
    ended_ = out.end;
    step.end = out.end;
    step.more = out.more;
    if (!out.events.empty()) queue.Push(Frame{std::move(out.events), nullptr, ""});
    return step;
  }

 private:
  StreamStore& store_;
  LiveRead read_;
  const std::chrono::milliseconds idle_interval_;
  const std::size_t pause_bytes_;
  std::uint64_t watch_ = 0;
  bool ended_ = false;
};

}  // namespace

std::unique_ptr<LiveSource> OpenStoreLiveSource(StreamStore& store, LiveRead read,
                                                std::chrono::milliseconds idle_interval,
                                                std::size_t pause_bytes) {
  return std::make_unique<StoreLiveSource>(store, std::move(read), idle_interval, pause_bytes);
}

}  // namespace agentstream::streams
