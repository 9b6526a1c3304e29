// The live reads of a session's events (session_live_source.h).
#include "server/session_live_source.h"

#include <mutex>
#include <utility>
#include <vector>

#include "log/log.h"
#include "net/sse_writer.h"
#include "server/live_reader.h"
#include "system/wall_clock.h"

namespace agentstream::server {

namespace {

using streams::Frame;
using streams::FrameQueue;
using streams::LiveStep;
using streams::StreamResponse;

// Durable Streams' interval cursor for live responses (streams/stream_protocol.h).
std::string StreamCursor() { return streams::ResponseCursor("", system::WallClockMs()); }

// The protocol layer's response of an API answer: its content type and headers as they are.
StreamResponse ToStreamResponse(HttpResponse response) {
  StreamResponse out{response.status, {}, std::move(response.body)};
  out.headers.reserve(response.headers.size() + 2);
  out.headers.emplace_back("Content-Type", std::move(response.content_type));
  out.headers.emplace_back("X-Content-Type-Options", "nosniff");
  for (auto& header : response.headers) out.headers.push_back(std::move(header));
  return out;
}

// The hub batches that arrived since the last step. The hub's callback may still run once
// after the source is gone (hub.h), so the source and the callback share it.
struct Mailbox {
  std::mutex mu;
  std::vector<std::shared_ptr<const EventBatch>> batches;  // guarded by mu
  std::size_t bytes = 0;                                   // guarded by mu
  bool overflowed = false;  // guarded by mu; batches were left out: read them from the log
  std::function<void()> wake;
};

class SessionLiveSource final : public streams::LiveSource {
 public:
  SessionLiveSource(EventLog& log, Hub& hub, Metrics& metrics, EventsQuery query,
                    SessionReadOptions options)
      : log_(log),
        hub_(hub),
        metrics_(metrics),
        query_(std::move(query)),
        options_(options),
        mailbox_(std::make_shared<Mailbox>()) {}

  bool Watch(std::function<void()> wake) override {
    mailbox_->wake = std::move(wake);
    const bool keep = sse();
    // Half the queue's bound, like the catch-up's pause: what the mailbox holds can then be
    // sent whole without dropping a reader whose socket keeps up.
    const std::size_t bound = options_.max_queue_bytes / 2;
    // Subscribed before the first read, so that a commit in between is not missed.
    token_ = hub_.Subscribe(query_.session, [mailbox = mailbox_, keep, bound](
                                                const std::shared_ptr<const EventBatch>& batch) {
      if (keep) {
        std::lock_guard lock(mailbox->mu);
        if (mailbox->bytes + batch->json->size() > bound) {
          mailbox->overflowed = true;
        } else {
          mailbox->bytes += batch->json->size();
          mailbox->batches.push_back(batch);
        }
      }
      mailbox->wake();
    });
    return true;
  }

  bool sse() const override { return query_.live == LiveMode::kSse; }

  std::optional<StreamResponse> Poll(bool timed_out) override {
    bool has_newer = false;
    auto batch = ReadBatch(log_, query_.session, query_.after.epoch, query_.after.seq.next(),
                           options_.batch, &has_newer);
    if (!batch.ok()) return ToStreamResponse(ErrorResponse(batch.status()));
    if ((*batch)->count == 0 && !timed_out && !query_.reset) return std::nullopt;  // wait on
    HttpResponse response = EventsResponse(query_, **batch, has_newer);
    response.headers.emplace_back("Stream-Cursor", StreamCursor());
    if ((*batch)->count == 0) {
      response.status = 204;
      response.body.clear();
    }
    return ToStreamResponse(std::move(response));
  }

  std::string SseHead() const override {
    return "HTTP/1.1 200 OK\r\nServer: agentstream\r\nContent-Type: text/event-stream\r\n"
           "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
           "Connection: close\r\n\r\n";
  }
  std::chrono::milliseconds idle_interval() const override { return options_.keepalive; }

  LiveStep Step(bool idle, FrameQueue& queue) override {
    LiveStep step;
    if (ended_) return step;
    const std::size_t queued_before = queue.bytes;
    if (!reader_) {
      reader_ = std::make_unique<LiveReader>(log_, query_.session, query_.after, options_.batch);
      if (query_.reset) AddControl(queue, /*reset=*/true);
    }
    TakeLive(queue);
    // Catching up: what the log holds after the cursor, then the control that says the reader
    // is up to date.
    Pump(queue);
    if (idle && queued_before == 0 && queue.bytes == 0)
      queue.Push(Frame{std::string(net::kSseKeepAlive), nullptr, ""});
    if (queue.bytes > options_.max_queue_bytes) {
      metrics_.SlowClientDropped();
      log::Warn("server.slow_client_dropped", {{"transport", "sse"},
                                               {"agent", query_.session.str()},
                                               {"queued_bytes", queue.bytes},
                                               {"limit", options_.max_queue_bytes}});
      ended_ = true;
      step.drop = true;
      return step;
    }
    step.end = ended_;
    step.more = !ended_ && reader_->catching_up();
    return step;
  }

 private:
  // Delivers the hub batches that are the next thing to deliver.
  void TakeLive(FrameQueue& queue) {
    std::vector<std::shared_ptr<const EventBatch>> batches;
    bool overflowed = false;
    {
      std::lock_guard lock(mailbox_->mu);
      batches.swap(mailbox_->batches);
      mailbox_->bytes = 0;
      std::swap(overflowed, mailbox_->overflowed);
    }
    for (const auto& batch : batches) {
      if (auto deliver = reader_->OnLive(batch)) {
        AddData(queue, *deliver);
        AddControl(queue, false);
      }
    }
    // Batches were left out: the reader reads from its position on.
    if (overflowed && !reader_->reset_needed())
      reader_ =
          std::make_unique<LiveReader>(log_, query_.session, reader_->position(), options_.batch);
  }

  void Pump(FrameQueue& queue) {
    while (!ended_) {
      if (reader_->reset_needed()) {
        auto tail = log_.Tail(query_.session);
        if (!tail.ok()) return;
        query_.after = Cursor{tail->epoch, Seq(0)};
        reader_ = std::make_unique<LiveReader>(log_, query_.session, query_.after, options_.batch);
        AddControl(queue, /*reset=*/true);
        continue;
      }
      if (!reader_->catching_up() || queue.bytes > options_.max_queue_bytes / 2) return;
      auto batch = reader_->Pull();
      if (!batch.ok()) {
        ended_ = true;
        queue.Push(
            Frame{net::FormatSseEvent(
                      "control",
                      R"({"error":")" + std::string(ErrorCodeName(batch.status().code())) + "\"}"),
                  nullptr, ""});
        return;
      }
      if (!*batch) {
        if (!reader_->reset_needed()) AddControl(queue, false);
        continue;
      }
      AddData(queue, **batch);
      AddControl(queue, false);
    }
  }

  void AddData(FrameQueue& queue, const EventBatch& batch) {
    static const std::string kHead = net::SseEventHead("data");
    queue.Push(Frame{kHead, batch.json, std::string(net::kSseEventEnd)});
    metrics_.FramesSent(1);
  }

  void AddControl(FrameQueue& queue, bool reset) {
    queue.Push(
        Frame{streams::FormatControlEvent({.next_offset = FormatStreamOffset(reader_->position()),
                                           .cursor = StreamCursor(),
                                           .up_to_date = !reader_->catching_up(),
                                           .reset = reset}),
              nullptr, ""});
  }

  EventLog& log_;
  Hub& hub_;
  Metrics& metrics_;
  EventsQuery query_;
  const SessionReadOptions options_;
  std::shared_ptr<Mailbox> mailbox_;
  Hub::Token token_;
  std::unique_ptr<LiveReader> reader_;  // SSE; made at the first step
  bool ended_ = false;
};

}  // namespace

std::unique_ptr<streams::LiveSource> OpenSessionLiveSource(EventLog& log, Hub& hub,
                                                           Metrics& metrics, EventsQuery query,
                                                           SessionReadOptions options) {
  return std::make_unique<SessionLiveSource>(log, hub, metrics, std::move(query), options);
}

}  // namespace agentstream::server
