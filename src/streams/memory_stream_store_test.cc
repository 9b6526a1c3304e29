// The memory stream store without a journal, on a clock the test steps: creation, appends,
// idempotent producers, closing, expiry, forks and watchers.
#include "streams/memory_stream_store.h"

#include <gtest/gtest.h>

#include <atomic>

namespace agentstream::streams {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  StoreTest() : store_(StreamLimits{}, nullptr, [this] { return now_.load(); }) {}
  OpResult Create(const std::string& path, const std::string& type, std::string body = "") {
    CreateArgs args;
    args.path = path;
    args.content_type = type;
    args.body = std::move(body);
    return store_.Create(args);
  }
  OpResult Append(const std::string& path, std::string body, std::optional<ProducerArgs> p = {}) {
    AppendArgs args;
    args.path = path;
    args.body = std::move(body);
    args.producer = std::move(p);
    return store_.Append(args);
  }
  std::string ReadAll(const std::string& path, std::optional<Offset> after = {}) {
    std::string out;
    for (;;) {
      ReadResult r = store_.Read(path, after);
      for (const Message& m : r.messages) out += *m.data;
      if (!r.messages.empty()) after = r.messages.back().offset;
      if (r.up_to_date) return out;
    }
  }
  std::atomic<std::int64_t> now_{1'000'000};
  MemoryStreamStore store_;
};

TEST_F(StoreTest, CreateIsIdempotentAndConflictsOnOtherConfig) {
  EXPECT_EQ(Create("/s", "text/plain").code, Code::kCreated);
  EXPECT_EQ(Create("/s", "TEXT/PLAIN; charset=utf-8").code, Code::kOk);
  EXPECT_EQ(Create("/s", "application/json").code, Code::kConfigConflict);
}

TEST_F(StoreTest, AppendsAdvanceOffsetsAndCheckContentType) {
  Create("/s", "text/plain");
  const OpResult a = Append("/s", "hello");
  ASSERT_EQ(a.code, Code::kOk);
  EXPECT_EQ(a.offset, Advance(Offset{}, 5));
  AppendArgs bad;
  bad.path = "/s";
  bad.body = "x";
  bad.content_type = "application/json";
  EXPECT_EQ(store_.Append(bad).code, Code::kTypeMismatch);
  EXPECT_EQ(Append("/missing", "x").code, Code::kNotFound);
}

TEST_F(StoreTest, ChunkedReadsReassembleExactly) {
  Create("/big", "application/octet-stream");
  std::string expected;
  for (int i = 0; i < 40; ++i) {
    std::string chunk(std::size_t{100} * 1024, static_cast<char>('a' + i % 26));
    expected += chunk;
    ASSERT_EQ(Append("/big", chunk).code, Code::kOk);
  }
  ReadResult first = store_.Read("/big", std::nullopt);
  EXPECT_FALSE(first.up_to_date);  // max_read_bytes cut it short
  EXPECT_EQ(ReadAll("/big"), expected);
}

TEST_F(StoreTest, IdempotentProducerDedupsAndFences) {
  Create("/p", "text/plain");
  EXPECT_EQ(Append("/p", "a", ProducerArgs{"w", 0, 0}).code, Code::kOk);
  EXPECT_EQ(Append("/p", "a", ProducerArgs{"w", 0, 0}).code, Code::kDuplicate);
  const OpResult gap = Append("/p", "c", ProducerArgs{"w", 0, 2});
  EXPECT_EQ(gap.code, Code::kSequenceGap);
  EXPECT_EQ(gap.expected_seq, 1U);
  EXPECT_EQ(Append("/p", "b", ProducerArgs{"w", 1, 1}).code, Code::kInvalidEpochSeq);
  EXPECT_EQ(Append("/p", "b", ProducerArgs{"w", 1, 0}).code, Code::kOk);
  const OpResult stale = Append("/p", "z", ProducerArgs{"w", 0, 1});
  EXPECT_EQ(stale.code, Code::kStaleEpoch);
  EXPECT_EQ(stale.current_epoch, 1U);
  EXPECT_EQ(ReadAll("/p"), "ab");
}

TEST_F(StoreTest, ClosedStreamRefusesAppendsButDedupsTheClosingRetry) {
  Create("/c", "text/plain");
  AppendArgs close;
  close.path = "/c";
  close.body = "last";
  close.close = true;
  close.producer = ProducerArgs{"w", 0, 0};
  EXPECT_EQ(store_.Append(close).code, Code::kOk);
  EXPECT_EQ(store_.Append(close).code, Code::kDuplicate);
  EXPECT_EQ(Append("/c", "more").code, Code::kClosed);
  EXPECT_TRUE(store_.Head("/c").info.closed);
}

TEST_F(StoreTest, SlidingTtlExpiresUnlessAccessed) {
  CreateArgs args;
  args.path = "/t";
  args.content_type = "text/plain";
  args.ttl_seconds = 10;
  ASSERT_EQ(store_.Create(args).code, Code::kCreated);
  now_ += 9000;
  EXPECT_EQ(store_.Read("/t", std::nullopt).code, Code::kOk);  // extends
  now_ += 9000;
  EXPECT_EQ(store_.Head("/t").code, Code::kOk);
  now_ += 2000;
  EXPECT_EQ(store_.Head("/t").code, Code::kNotFound);
}

TEST_F(StoreTest, AbsoluteExpiry) {
  CreateArgs args;
  args.path = "/e";
  args.content_type = "text/plain";
  args.expires_at = "x";
  args.expires_at_ms = now_ + 5000;
  ASSERT_EQ(store_.Create(args).code, Code::kCreated);
  now_ += 4999;
  EXPECT_EQ(store_.Read("/e", std::nullopt).code, Code::kOk);
  now_ += 1;
  EXPECT_EQ(store_.Read("/e", std::nullopt).code, Code::kNotFound);
}

// A stream that would be expired when made is refused, by the store's clock; nothing is made.
TEST_F(StoreTest, AnExpiryAtOrBeforeNowIsRefused) {
  CreateArgs args;
  args.path = "/old";
  args.content_type = "text/plain";
  args.expires_at = "x";
  for (const std::int64_t at : {std::int64_t{0}, now_.load() - 1, now_.load()}) {
    args.expires_at_ms = at;
    EXPECT_EQ(store_.Create(args).code, Code::kExpiresInPast) << at;
  }
  EXPECT_EQ(store_.Head("/old").code, Code::kNotFound);
  args.expires_at_ms = now_ + 1;
  EXPECT_EQ(store_.Create(args).code, Code::kCreated);
}

TEST_F(StoreTest, ForkReadsThroughItsSourceAndKeepsItSoftDeleted) {
  Create("/src", "text/plain", "abc");
  const Offset fork_point = store_.Head("/src").info.tail;
  Append("/src", "def");
  CreateArgs fork;
  fork.path = "/fork";
  fork.forked_from = "/src";
  fork.fork_offset = fork_point;
  ASSERT_EQ(store_.Create(fork).code, Code::kCreated);
  EXPECT_EQ(store_.Head("/fork").info.content_type, "text/plain");
  Append("/fork", "XY");
  EXPECT_EQ(ReadAll("/fork"), "abcXY");
  EXPECT_EQ(store_.Delete("/src").code, Code::kOk);
  EXPECT_EQ(store_.Head("/src").code, Code::kGone);
  EXPECT_EQ(Create("/src", "text/plain").code, Code::kHasForks);
  EXPECT_EQ(ReadAll("/fork"), "abcXY");
  EXPECT_EQ(store_.Delete("/fork").code, Code::kOk);
  EXPECT_EQ(store_.Head("/src").code, Code::kNotFound);  // the cascade removed it
}

TEST_F(StoreTest, ForkSubOffsetCopiesAPrefixOfTheNextMessage) {
  Create("/j", "application/json", "[1,2,3]");
  CreateArgs fork;
  fork.path = "/jf";
  fork.forked_from = "/j";
  fork.fork_offset = Offset{};
  fork.fork_sub_offset = 2;
  ASSERT_EQ(store_.Create(fork).code, Code::kCreated);
  EXPECT_EQ(ReadAll("/jf"), "1,2,");
  fork.path = "/jf2";
  fork.fork_sub_offset = 4;
  EXPECT_EQ(store_.Create(fork).code, Code::kBadSubOffset);
}

TEST_F(StoreTest, WatchersWakeOnAppend) {
  Create("/w", "text/plain");
  std::atomic<int> woken{0};
  const std::uint64_t id = store_.Watch("/w", [&] { ++woken; });
  Append("/w", "x");
  EXPECT_EQ(woken.load(), 1);
  store_.Unwatch("/w", id);
  Append("/w", "y");
  EXPECT_EQ(woken.load(), 1);
}

}  // namespace
}  // namespace agentstream::streams
