#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <future>

#include "streams/json_mode.h"
#include "streams/memory_stream_store.h"
#include "streams/offset.h"
#include "streams/stream_protocol.h"

namespace agentstream::streams {
namespace {

TEST(OffsetTest, FormatsFixedWidthAndParsesBack) {
  const Offset o{1, 42};
  EXPECT_EQ(FormatOffset(o), "0000000000000001_0000000000000042");
  EXPECT_EQ(ParseOffset(FormatOffset(o)), o);
  EXPECT_EQ(ParseOffset("3_7"), (Offset{3, 7}));
  EXPECT_FALSE(ParseOffset("-1"));
  EXPECT_FALSE(ParseOffset("1_"));
  EXPECT_FALSE(ParseOffset("a_1"));
  EXPECT_FALSE(ParseOffset("1_2_3"));
}

TEST(OffsetTest, StringOrderIsStreamOrder) {
  Offset o;
  std::string previous = FormatOffset(o);
  for (std::uint64_t size : {0U, 1U, 9U, 99U, 12345U, 1U}) {
    o = Advance(o, size);
    const std::string next = FormatOffset(o);
    EXPECT_LT(previous, next);
    previous = next;
  }
}

TEST(JsonModeTest, FlattensArraysAndMinifies) {
  EXPECT_EQ(*ProcessJsonAppend(R"([1, {"a": "b c"}, [2]])", false), R"(1,{"a":"b c"},[2],)");
  EXPECT_EQ(*ProcessJsonAppend(R"( {"x" : 1} )", false), R"({"x":1},)");
  EXPECT_EQ(*ProcessJsonAppend("[]", true), "");
  EXPECT_FALSE(ProcessJsonAppend("[]", false).ok());
  EXPECT_FALSE(ProcessJsonAppend("{bad", false).ok());
  std::string out = "[";
  AppendJsonElements("1,2,", &out);
  AppendJsonElements(R"("a,]",)", &out);
  EXPECT_EQ(out + "]", R"([1,2,"a,]"])");
  EXPECT_EQ(*JsonPrefix(R"({"a":[1,2]},3,)", 1), R"({"a":[1,2]},)");
  EXPECT_FALSE(JsonPrefix("1,", 2).ok());
}

TEST(IsoTimeTest, ParsesUtcAndOffsets) {
  EXPECT_EQ(ParseIsoTime("1970-01-01T00:00:00.000Z"), 0);
  EXPECT_EQ(ParseIsoTime("2024-10-09T00:00:00Z"), 1728432000000);
  EXPECT_EQ(ParseIsoTime("2024-10-09T02:00:00+02:00"), 1728432000000);
  EXPECT_EQ(ParseIsoTime("2024-10-09T00:00:00.5Z"), 1728432000500);
  EXPECT_FALSE(ParseIsoTime("not-a-timestamp"));
  EXPECT_FALSE(ParseIsoTime("2024-13-01T00:00:00Z"));
}

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

TEST(JournalTest, StreamsSurviveReopen) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("streams_test_" + std::to_string(::getpid()) + ".db"))
                               .string();
  std::filesystem::remove(path);
  {
    auto store = MemoryStreamStore::Open(path, StreamLimits{});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    CreateArgs args;
    args.path = "/d";
    args.content_type = "application/json";
    args.body = R"([{"a":1}])";
    ASSERT_EQ((*store)->Create(args).code, Code::kCreated);
    AppendArgs append;
    append.path = "/d";
    append.body = "2";
    append.producer = ProducerArgs{"w", 3, 0};
    ASSERT_EQ((*store)->Append(append).code, Code::kOk);
    std::promise<bool> durable;
    (*store)->WhenDurable([&](bool ok) { durable.set_value(ok); });
    EXPECT_TRUE(durable.get_future().get());
  }
  auto store = MemoryStreamStore::Open(path, StreamLimits{});
  ASSERT_TRUE(store.ok());
  ReadResult r = (*store)->Read("/d", std::nullopt);
  ASSERT_EQ(r.messages.size(), 2U);
  EXPECT_EQ(*r.messages[1].data, "2,");
  AppendArgs retry;
  retry.path = "/d";
  retry.body = "2";
  retry.producer = ProducerArgs{"w", 3, 0};
  EXPECT_EQ((*store)->Append(retry).code, Code::kDuplicate);  // producer state survived
  store->reset();
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

TEST(JournalTest, ASecondStoreOnTheSameDatabaseIsRefused) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("streams_excl_" + std::to_string(::getpid()) + ".db"))
                               .string();
  std::filesystem::remove(path);
  {
    auto first = MemoryStreamStore::Open(path, StreamLimits{});
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    auto second = MemoryStreamStore::Open(path, StreamLimits{});
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().ToString().find("another daemon"), std::string::npos)
        << second.status().ToString();
  }
  auto reopened = MemoryStreamStore::Open(path, StreamLimits{});  // the lock went with the first
  EXPECT_TRUE(reopened.ok()) << reopened.status().ToString();
  reopened->reset();
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
}

StreamResponse Call(StreamStore& store, StreamRequest req) {
  Outcome result;
  HandleStreamRequest(store, nullptr, req, "http://h", [&](Outcome o) { result = std::move(o); });
  return std::get<StreamResponse>(result);
}

std::string HeaderOf(const StreamResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers)
    if (n == name) return v;
  return "";
}

TEST(ProtocolTest, EtagAnd304) {
  MemoryStreamStore store(StreamLimits{}, nullptr);
  EXPECT_EQ(Call(store, {"PUT", "/v1/stream/x", "", {{"content-type", "text/plain"}}, "hi"}).status,
            201);
  StreamResponse first = Call(store, {"GET", "/v1/stream/x", "offset=-1", {}, ""});
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, "hi");
  const std::string etag = HeaderOf(first, "etag");
  ASSERT_FALSE(etag.empty());
  StreamResponse again =
      Call(store, {"GET", "/v1/stream/x", "offset=-1", {{"if-none-match", etag}}, ""});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
}

TEST(ProtocolTest, ACreateExpiredAlreadyIs400) {
  MemoryStreamStore store(StreamLimits{}, nullptr);
  const StreamResponse old = Call(
      store, {"PUT", "/v1/stream/old", "", {{"stream-expires-at", "1970-01-01T00:00:00Z"}}, ""});
  EXPECT_EQ(old.status, 400);
  EXPECT_NE(old.body.find("in the past"), std::string::npos) << old.body;
  EXPECT_EQ(Call(store, {"HEAD", "/v1/stream/old", "", {}, ""}).status, 404);
  EXPECT_EQ(
      Call(store,
           {"PUT", "/v1/stream/later", "", {{"stream-expires-at", "2999-01-01T00:00:00Z"}}, ""})
          .status,
      201);
}

TEST(ProtocolTest, RejectsBadOffsetsAndProducerHeaders) {
  MemoryStreamStore store(StreamLimits{}, nullptr);
  Call(store, {"PUT", "/v1/stream/x", "", {{"content-type", "text/plain"}}, ""});
  EXPECT_EQ(Call(store, {"GET", "/v1/stream/x", "offset=../etc", {}, ""}).status, 400);
  EXPECT_EQ(Call(store, {"GET", "/v1/stream/x", "offset=-1&offset=now", {}, ""}).status, 400);
  EXPECT_EQ(Call(store, {"GET", "/v1/stream/x", "live=sse", {}, ""}).status, 400);
  EXPECT_EQ(
      Call(
          store,
          {"POST", "/v1/stream/x", "", {{"content-type", "text/plain"}, {"producer-id", "p"}}, "a"})
          .status,
      400);
  EXPECT_EQ(Call(store, {"PUT", "/v1/stream/y", "", {{"stream-ttl", "1e3"}}, ""}).status, 400);
}

TEST(ProtocolTest, SsePairsEveryDataEventWithAControlEvent) {
  MemoryStreamStore store(StreamLimits{}, nullptr);
  Call(store, {"PUT", "/v1/stream/j", "", {{"content-type", "application/json"}}, "[1,2]"});
  Call(store, {"POST", "/v1/stream/j", "", {{"content-type", "application/json"}}, "3"});
  LiveRead read;
  read.sse = true;
  read.path = "/v1/stream/j";
  SseOutput out = SseStep(store, read, false);
  const std::string& e = out.events;
  const std::size_t d1 = e.find("event: data\ndata:[1,2]\n\n");
  const std::size_t c1 = e.find("event: control", d1);
  const std::size_t d2 = e.find("event: data\ndata:[3]\n\n", c1);
  const std::size_t c2 = e.find("event: control", d2);
  ASSERT_NE(d1, std::string::npos);
  ASSERT_NE(c1, std::string::npos);
  ASSERT_NE(d2, std::string::npos);
  ASSERT_NE(c2, std::string::npos);
  EXPECT_NE(e.find("\"upToDate\":true", c2), std::string::npos);
  EXPECT_FALSE(out.end);
}

}  // namespace
}  // namespace agentstream::streams
