// The inbox: a stable per-session token, signed deliveries appended once, and every
// way a delivery can fail to authenticate.
#include "server/inbox.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "consumers/signature.h"
#include "runtime/provider_factory.h"
#include "store/memory_log.h"

namespace agentstream::server {
namespace {

using namespace std::chrono_literals;

class InboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(log_.CreateSession(parent_, SessionMeta{"scripted", "/w"},
                                   {MakeNewEvent(SessionCreated{"scripted", "/w"})})
                    .ok());
  }
  void TearDown() override {
    bool done = false;
    manager_.Shutdown([&] { done = true; });
    loop_.RunUntil([&] { return done; }, 10s);
  }

  consumers::Delivery MakeDelivery(std::uint64_t ordinal, std::uint64_t seq) {
    consumers::Delivery d;
    d.consumer = ConsumerId("fwd");
    d.session = SessionId("ses_child");
    d.epoch = Epoch(1);
    d.seq_start = d.seq_end = Seq(seq);
    d.ordinal = ordinal;
    d.idempotency_key = consumers::IdempotencyKey(d.consumer, d.session, d.epoch, d.seq_end);
    EventRecord record;
    record.session = SessionId("ses_child");
    record.epoch = Epoch(1);
    record.seq = Seq(seq);
    record.kind = static_cast<std::uint16_t>(EventKind::kNotice);
    record.payload = R"({"level":"info","text":"hello"})";
    d.events.push_back(record);
    d.first_seqs.push_back(Seq(seq));
    return d;
  }

  Result<InboxResult> Accept(const std::string& timestamp, const std::string& signature,
                             const std::string& body) {
    std::optional<Result<InboxResult>> out;
    inbox_.Accept(parent_, timestamp, signature, body,
                  [&](Result<InboxResult> r) { out = std::move(r); });
    loop_.RunUntil([&] { return out.has_value(); }, 10s);
    if (!out) return Error(ErrorCode::kInternal, "no answer");
    return *out;
  }
  Result<InboxResult> AcceptSigned(const consumers::Delivery& d) {
    const std::string body = consumers::DeliveryToJson(d);
    const std::string ts = std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
    return Accept(ts, consumers::WebhookSignature(inbox_.TokenFor(parent_), ts, body), body);
  }

  SessionId parent_{"ses_parent"};
  MemoryEventLog log_;
  process::EventLoop loop_;
  runtime::DefaultProviderFactory factory_;
  runtime::AgentManager manager_{log_, factory_, loop_};
  Inbox inbox_{manager_, std::string(64, 'a')};
};

TEST_F(InboxTest, TokensAreStablePerSessionAndDifferAcrossSessionsAndKeys) {
  EXPECT_EQ(inbox_.TokenFor(parent_), inbox_.TokenFor(parent_));
  EXPECT_EQ(inbox_.TokenFor(parent_).size(), 64u);
  EXPECT_NE(inbox_.TokenFor(parent_), inbox_.TokenFor(SessionId("ses_other")));
  Inbox other(manager_, std::string(64, 'b'));
  EXPECT_NE(inbox_.TokenFor(parent_), other.TokenFor(parent_));
}

TEST_F(InboxTest, ASignedDeliveryIsAppendedOnceAndInOrder) {
  Result<InboxResult> first = AcceptSigned(MakeDelivery(0, 1));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->appended, 1u);
  EXPECT_FALSE(first->duplicate);
  Result<InboxResult> again = AcceptSigned(MakeDelivery(0, 1));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->appended, 0u);
  ASSERT_TRUE(AcceptSigned(MakeDelivery(1, 2)).ok());
  // An ordinal that skips one is refused: the sender must redeliver what it journaled.
  EXPECT_EQ(AcceptSigned(MakeDelivery(3, 4)).status().code(), ErrorCode::kSequenceGap);

  Result<ReadResult> read = log_.Read(ReadRequest{parent_});
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->events.size(), 3u);  // created + two forwarded events
  for (std::size_t i = 1; i < 3; ++i) {
    Result<Event> e = DecodeRecord(read->events[i]);
    ASSERT_TRUE(e.ok());
    const auto* sub = std::get_if<SubagentEvent>(&e->payload);
    ASSERT_NE(sub, nullptr);
    EXPECT_EQ(sub->child, SessionId("ses_child"));
    EXPECT_EQ(sub->child_seq, Seq(i));
    EXPECT_EQ(sub->child_kind, "notice");
  }
}

TEST_F(InboxTest, UnauthenticatedDeliveriesAreRefusedAndAppendNothing) {
  const consumers::Delivery d = MakeDelivery(0, 1);
  const std::string body = consumers::DeliveryToJson(d);
  const auto now = std::chrono::system_clock::now();
  const std::string ts = std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count());
  const std::string good = consumers::WebhookSignature(inbox_.TokenFor(parent_), ts, body);
  EXPECT_EQ(Accept("", "", body).status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(Accept(ts, "v1=00", body).status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(Accept("12x", good, body).status().code(), ErrorCode::kUnauthenticated);
  // Signed with another session's token.
  EXPECT_EQ(
      Accept(ts, consumers::WebhookSignature(inbox_.TokenFor(SessionId("ses_x")), ts, body), body)
          .status()
          .code(),
      ErrorCode::kUnauthenticated);
  // A body changed after signing.
  EXPECT_EQ(Accept(ts, good, body + " ").status().code(), ErrorCode::kUnauthenticated);
  // A timestamp beyond the allowed skew, correctly signed.
  const std::string old = std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count() -
      kInboxClockSkew.count() - 5);
  EXPECT_EQ(Accept(old, consumers::WebhookSignature(inbox_.TokenFor(parent_), old, body), body)
                .status()
                .code(),
            ErrorCode::kUnauthenticated);
  // Signed, but not a delivery.
  const std::string junk = R"({"hello":1})";
  EXPECT_EQ(Accept(ts, consumers::WebhookSignature(inbox_.TokenFor(parent_), ts, junk), junk)
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  Result<ReadResult> read = log_.Read(ReadRequest{parent_});
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->events.size(), 1u);
}

TEST_F(InboxTest, ASessionCannotDeliverIntoItself) {
  consumers::Delivery d = MakeDelivery(0, 1);
  d.session = parent_;
  std::optional<Result<InboxResult>> out;
  inbox_.Append(parent_, d, [&](Result<InboxResult> r) { out = std::move(r); });
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->status().code(), ErrorCode::kInvalidArgument);
}

TEST(InboxKey, IsCreatedOnceWithPrivateModeAndReadBack) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("agentstream_inbox_key_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "inbox.key").string();
  Result<std::string> created = LoadOrCreateInboxKey(path);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->size(), 64u);
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  Result<std::string> read = LoadOrCreateInboxKey(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, *created);
  std::ofstream(path) << "not a key\n";
  EXPECT_EQ(LoadOrCreateInboxKey(path).status().code(), ErrorCode::kCorruption);
  EXPECT_NE(*LoadOrCreateInboxKey(""), *LoadOrCreateInboxKey(""));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace agentstream::server
