// A session's log as a live source: every event after the cursor once and in order, whether it
// comes from the hub (shared, not copied) or from the log; hub batches beyond the mailbox's
// bound are read from the log instead; a reader past the queue's bound is dropped; a long-poll
// answers at the first event or at the timeout.
#include "server/session_live_source.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <deque>

#include "core/event_codec.h"
#include "net/sse_parser.h"
#include "store/memory_log.h"

namespace agentstream::server {
namespace {

namespace json = boost::json;

class SessionLiveSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(log_.CreateSession(session_, SessionMeta{"scripted", "/", "", 0, "", ""},
                                   {MakeNewEvent(Notice{NoticeLevel::kInfo, "e1"})})
                    .ok());
  }
  void Append(int n, std::size_t text_bytes = 1) {
    for (int i = 0; i < n; ++i) {
      AppendRequest request;
      request.session = session_;
      request.events.push_back(
          MakeNewEvent(Notice{NoticeLevel::kInfo, std::string(text_bytes, 'x')}));
      ASSERT_TRUE(log_.Append(std::move(request)).ok());
    }
  }
  // Runs what the hub posted (its commit processing and deliveries).
  void RunPosted() {
    while (!posted_.empty()) {
      auto fn = std::move(posted_.front());
      posted_.pop_front();
      fn();
    }
  }
  std::unique_ptr<streams::LiveSource> Open(LiveMode mode, Cursor after,
                                            SessionReadOptions options = {}) {
    EventsQuery query;
    query.session = session_;
    query.live = mode;
    query.after = after;
    auto source = OpenSessionLiveSource(log_, hub_, metrics_, query, options);
    EXPECT_TRUE(source->Watch([this] { ++wakes_; }));
    return source;
  }
  // Writes the queued frames to the parser, as the transport writes them to the socket; the seqs
  // of the data events go to `seqs`.
  void Read(std::vector<std::uint64_t>& seqs) {
    std::string bytes;
    for (const auto& f : queue_.frames) {
      bytes += f.head;
      if (f.shared) bytes += *f.shared;
      bytes += f.tail;
    }
    queue_ = {};
    std::vector<net::SseEvent> events;
    ASSERT_TRUE(parser_.Feed(bytes, events).ok());
    for (const auto& e : events) {
      if (e.event == "control") last_control_ = json::parse(e.data).as_object();
      if (e.event != "data") continue;
      const json::value batch = json::parse(e.data);
      for (const auto& v : batch.as_array())
        seqs.push_back(v.as_object().at("seq").to_number<std::uint64_t>());
    }
  }

  MemoryEventLog log_;
  SessionId session_{"ses_live"};
  std::deque<std::function<void()>> posted_;
  Hub hub_{log_, [this](std::function<void()> fn) { posted_.push_back(std::move(fn)); }};
  Metrics metrics_;
  int wakes_ = 0;
  streams::FrameQueue queue_;
  net::SseParser parser_;
  json::object last_control_;
};

TEST_F(SessionLiveSourceTest, SseCatchesUpThenSendsTheHubsBatchWithoutCopyingIt) {
  Append(4);  // seqs 1..5
  auto source = Open(LiveMode::kSse, Cursor{Epoch(1), Seq(2)});
  ASSERT_TRUE(source->sse());
  std::vector<std::uint64_t> seqs;
  streams::LiveStep step = source->Step(false, queue_);
  Read(seqs);
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{3, 4, 5}));
  EXPECT_FALSE(step.more);
  EXPECT_EQ(last_control_.at("upToDate"), json::value(true));
  EXPECT_EQ(last_control_.at("streamNextOffset"),
            json::value(FormatStreamOffset({Epoch(1), Seq(5)})));

  Append(1);
  RunPosted();
  EXPECT_EQ(wakes_, 1);
  source->Step(false, queue_);
  ASSERT_FALSE(queue_.frames.empty());
  ASSERT_NE(queue_.frames.front().shared, nullptr);  // the hub's encoded batch itself
  Read(seqs);
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{3, 4, 5, 6}));

  // Idle with nothing queued: a keep-alive comment; with bytes queued: nothing more.
  source->Step(true, queue_);
  EXPECT_EQ(queue_.frames.size(), 1u);
  source->Step(true, queue_);
  EXPECT_EQ(queue_.frames.size(), 1u);
}

TEST_F(SessionLiveSourceTest, HubBatchesPastTheMailboxBoundAreReadFromTheLog) {
  SessionReadOptions options;
  options.max_queue_bytes = 4096;
  options.batch = BatchLimits{4, 1 << 20};
  auto source = Open(LiveMode::kSse, Cursor{Epoch(1), Seq(1)}, options);
  std::vector<std::uint64_t> seqs;
  source->Step(false, queue_);
  Read(seqs);  // up to date at seq 1
  // 40 commits of ~500 bytes before the reader steps again: far more than the mailbox holds.
  for (int i = 0; i < 40; ++i) {
    Append(1, 500);
    RunPosted();  // one hub batch per commit
  }
  EXPECT_EQ(wakes_, 40);
  for (int i = 0; i < 100; ++i) {
    const streams::LiveStep step = source->Step(false, queue_);
    ASSERT_FALSE(step.drop);
    Read(seqs);  // all written
    if (!step.more) break;
  }
  std::vector<std::uint64_t> want;
  for (std::uint64_t s = 2; s <= 41; ++s) want.push_back(s);
  EXPECT_EQ(seqs, want);
  EXPECT_EQ(last_control_.at("upToDate"), json::value(true));
}

TEST_F(SessionLiveSourceTest, AReaderPastTheQueueBoundIsDropped) {
  SessionReadOptions options;
  options.max_queue_bytes = 4096;
  auto source = Open(LiveMode::kSse, Cursor{Epoch(1), Seq(1)}, options);
  std::vector<std::uint64_t> seqs;
  source->Step(false, queue_);
  Read(seqs);
  Append(1, 1000);
  RunPosted();
  // The transport still holds almost the whole bound unwritten.
  queue_.Push(streams::Frame{std::string(4000, 'x'), nullptr, ""});
  EXPECT_TRUE(source->Step(false, queue_).drop);
  EXPECT_EQ(metrics_.slow_clients_dropped(), 1u);
  queue_ = {};
  source->Step(false, queue_);
  EXPECT_TRUE(queue_.frames.empty());  // ended
}

TEST_F(SessionLiveSourceTest, ALongPollAnswersAtTheFirstEventOrWith204AtTheTimeout) {
  auto source = Open(LiveMode::kLongPoll, Cursor{Epoch(1), Seq(1)});
  EXPECT_FALSE(source->sse());
  EXPECT_FALSE(source->Poll(false).has_value());
  auto timed_out = source->Poll(true);
  ASSERT_TRUE(timed_out.has_value());
  EXPECT_EQ(timed_out->status, 204);

  Append(2);
  RunPosted();
  EXPECT_GE(wakes_, 1);
  auto answer = source->Poll(false);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(json::parse(answer->body).as_array().size(), 2u);
  bool next_offset = false;
  for (const auto& [name, value] : answer->headers)
    if (name == "Stream-Next-Offset") next_offset = value == FormatStreamOffset({Epoch(1), Seq(3)});
  EXPECT_TRUE(next_offset);
}

}  // namespace
}  // namespace agentstream::server
