#include "client/event_follower.h"

#include <algorithm>
#include <thread>

#include "api/api_json.h"
#include "client/daemon_api.h"
#include "client/endpoint.h"
#include "net/sse_parser.h"

namespace agentstream::client {

using net::SseParser;

EventFollower::EventFollower(Transport& http, std::string agent, EventFollowerOptions options)
    : http_(http), agent_(std::move(agent)), options_(std::move(options)), offset_(options_.from) {}

Result<bool> EventFollower::Deliver(const std::vector<EventRecord>& records,
                                    const EventCallback& on_event) {
  for (const EventRecord& record : records) {
    if (!seen_.Admit(record.cursor())) continue;  // replayed by a resumed read
    if (!on_event(record)) return false;
  }
  return true;
}

struct EventFollower::Connection {
  int http_status = 0;
  bool sse = false;
  std::string body;  // an error reply, or a catch-up reply when the daemon did not answer SSE
  std::string header_offset;
  SseParser parser;
  std::vector<SseEvent> events;
};

Result<bool> EventFollower::Consume(Connection& c, Attempt& attempt, std::string_view bytes,
                                    const EventCallback& on_event,
                                    const UpToDateCallback& on_up_to_date) {
  if (c.http_status != 200 || !c.sse) {
    const std::size_t limit =
        c.http_status != 200 ? options_.max_error_body_bytes : options_.max_catch_up_bytes;
    if (c.body.size() + bytes.size() > limit) {
      if (c.http_status != 200) return false;  // enough of an error message
      return Error(ErrorCode::kTooLarge,
                   "a catch-up reply is larger than " + std::to_string(limit) + " bytes");
    }
    c.body.append(bytes);
    return true;
  }
  c.events.clear();
  AS_RETURN_IF_ERROR(c.parser.Feed(bytes, c.events));
  for (const SseEvent& event : c.events) {
    AS_ASSIGN_OR_RETURN(StreamFrame frame, DecodeStreamFrame(event));
    attempt.progressed = true;
    AS_ASSIGN_OR_RETURN(bool more, Deliver(frame.events, on_event));
    if (!more) {
      attempt.stopped = true;
      return false;
    }
    if (frame.next_offset) offset_ = *frame.next_offset;
    if (frame.up_to_date && on_up_to_date) on_up_to_date();
  }
  return true;
}

void EventFollower::Finish(Connection& c, Attempt& attempt, const EventCallback& on_event) {
  if (attempt.stopped) {
    attempt.status = Status::Ok();
  } else if (attempt.status.ok() && c.http_status != 200) {
    auto json = api::ParseJson(c.body);
    const Status error = json.ok()
                             ? api::ErrorFromJson(*json, c.http_status)
                             : Error(ErrorCode::kInternal, "HTTP " + std::to_string(c.http_status));
    attempt.status = Error(error.code(), "daemon: " + error.ToString());
    attempt.permanent =
        c.http_status >= 400 && c.http_status < 500 && c.http_status != 408 && c.http_status != 429;
  } else if (attempt.status.ok() && !c.sse) {  // a catch-up reply: deliver it, then read on
    auto records = DecodeEnvelopeArray(c.body);
    if (!records.ok()) {
      attempt.status = records.status();
      attempt.permanent = true;
      return;
    }
    auto more = Deliver(*records, on_event);
    attempt.stopped = more.ok() && !*more;
    if (!c.header_offset.empty()) offset_ = c.header_offset;
    attempt.progressed = true;
    attempt.status =
        attempt.stopped ? Status::Ok() : Error(ErrorCode::kUnavailable, "polling for new events");
  } else if (attempt.status.ok()) {
    attempt.status = Error(ErrorCode::kUnavailable, "the daemon ended the stream");
  }
  if (attempt.status.code() == ErrorCode::kUnsupportedVersion) attempt.permanent = true;
}

EventFollower::Attempt EventFollower::ReadOnce(const EventCallback& on_event,
                                               const UpToDateCallback& on_up_to_date) {
  Attempt attempt;
  Connection connection;
  StreamHandler handler;
  handler.on_head = [&](const HttpResponse& head) -> Result<bool> {
    connection.http_status = head.status;
    connection.sse = head.Header("Content-Type").starts_with("text/event-stream");
    connection.header_offset = head.Header("Stream-Next-Offset");
    return true;
  };
  handler.on_data = [&](std::string_view bytes) -> Result<bool> {
    auto more = Consume(connection, attempt, bytes, on_event, on_up_to_date);
    // What the daemon sent does not decode: reading it again would fail the same way.
    if (!more.ok() && more.status().code() != ErrorCode::kUnavailable) attempt.permanent = true;
    return more;
  };
  const std::string target =
      DaemonApi::AgentPath(agent_, "/events?offset=" + PercentEncode(offset_) + "&live=sse");
  attempt.status = http_.Stream(target, "text/event-stream", handler, options_.stop);
  Finish(connection, attempt, on_event);
  return attempt;
}

Status EventFollower::Run(const EventCallback& on_event, const RetryCallback& on_retry,
                          const UpToDateCallback& on_up_to_date) {
  auto stopped = [this] { return options_.stop != nullptr && options_.stop->load(); };
  std::chrono::milliseconds backoff = options_.first_backoff;
  for (;;) {
    Attempt attempt = ReadOnce(on_event, on_up_to_date);
    if (attempt.stopped || stopped()) return Status::Ok();
    if (attempt.permanent) return attempt.status;
    if (attempt.progressed) backoff = options_.first_backoff;
    if (on_retry) on_retry(attempt.status, backoff);
    const auto until = std::chrono::steady_clock::now() + backoff;
    while (!stopped() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
          std::chrono::milliseconds(100), std::chrono::duration_cast<std::chrono::milliseconds>(
                                              until - std::chrono::steady_clock::now())));
    }
    if (stopped()) return Status::Ok();
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace agentstream::client
