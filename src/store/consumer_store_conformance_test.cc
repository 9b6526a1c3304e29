// The ConsumerStore conformance suite (store/consumer_store.h): consumer leases and their
// fencing, positions with the sink's state, durable definitions. Every backend passes it unchanged.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "store/test_backend.h"
#include "system/wall_clock.h"

namespace agentstream {
namespace {

class ConsumerStoreConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = testing::MakeBackend(GetParam());
    if (!backend_) GTEST_SKIP() << "AGENTSTREAM_TEST_PG names no PostgreSQL server";
  }
  ConsumerStore& consumers() { return backend_->log().consumers(); }

  // A session of `events` notices, for the positions to point into.
  SessionId NewSession(const std::string& id, int events) {
    std::vector<NewEvent> initial;
    for (int i = 1; i <= events; ++i)
      initial.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, id + "#" + std::to_string(i)}));
    auto created = backend_->log().CreateSession(SessionId(id), SessionMeta{"scripted", "/w", id},
                                                 std::move(initial));
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return SessionId(id);
  }

  std::unique_ptr<testing::Backend> backend_;
};

// On the real clock, with short leases: a store shared by several daemons judges leases by its own
// clock (docs/architecture.md), so the times a caller passes are only what it believes.
TEST_P(ConsumerStoreConformance, ConsumerLeasesFenceStaleHolders) {
  // Long enough for a few commits on a slow disk within one lease.
  constexpr std::int64_t kTtl = 2000;
  const auto lapse = [] { std::this_thread::sleep_for(std::chrono::milliseconds(kTtl + 500)); };
  const auto now = [] { return system::WallClockMs(); };
  const ConsumerId c("hook");
  const SessionId s = NewSession("s", 3);
  auto a = consumers().AcquireLease(c, s, "worker-a", now(), kTtl);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->generation, 1u);
  EXPECT_EQ(a->position, (Cursor{Epoch(1), Seq(0)}));
  EXPECT_EQ(consumers().AcquireLease(c, s, "worker-b", now(), kTtl).status().code(),
            ErrorCode::kConflict);
  auto renewed = consumers().AcquireLease(c, s, "worker-a", now(), kTtl);
  ASSERT_TRUE(renewed.ok());
  EXPECT_EQ(renewed->generation, 1u);
  ASSERT_TRUE(
      consumers()
          .CommitConsumerPosition(c, s, 1, Cursor{Epoch(1), Seq(2)}, "{\"msg\":\"m1\"}", now())
          .ok());
  // worker-a stalls past its lease; worker-b takes over with the next generation.
  lapse();
  auto b = consumers().AcquireLease(c, s, "worker-b", now(), kTtl);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->generation, 2u);
  EXPECT_EQ(b->position, (Cursor{Epoch(1), Seq(2)}));
  EXPECT_EQ(b->adapter_state, "{\"msg\":\"m1\"}");
  EXPECT_EQ(consumers()
                .CommitConsumerPosition(c, s, 1, Cursor{Epoch(1), Seq(3)}, std::nullopt, now())
                .code(),
            ErrorCode::kFenced);
  ASSERT_TRUE(consumers()
                  .CommitConsumerPosition(c, s, 2, Cursor{Epoch(1), Seq(3)}, std::nullopt, now())
                  .ok());
  lapse();
  EXPECT_EQ(consumers()
                .CommitConsumerPosition(c, s, 2, Cursor{Epoch(1), Seq(4)}, std::nullopt, now())
                .code(),
            ErrorCode::kFenced)
      << "an expired lease cannot write";

  backend_->Reopen();
  auto list = consumers().ListConsumerPositions(c);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].position, (Cursor{Epoch(1), Seq(3)}));
  EXPECT_EQ((*list)[0].adapter_state, "{\"msg\":\"m1\"}") << "state kept when not replaced";
  EXPECT_EQ(consumers().ReleaseLease(c, s, 1).code(), ErrorCode::kFenced);
  ASSERT_TRUE(consumers().ReleaseLease(c, s, 2).ok());
  auto c2 = consumers().AcquireLease(c, s, "worker-c", now(), kTtl);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->generation, 3u);
  ASSERT_TRUE(consumers().DeleteConsumerPositions(c).ok());
  EXPECT_TRUE(consumers().ListConsumerPositions(c)->empty());
}

TEST_P(ConsumerStoreConformance, ConsumerDefinitionsAreDurableAndDeleteTheirPositions) {
  const SessionId s = NewSession("s1", 1);
  EXPECT_TRUE(consumers().ListConsumers()->empty());
  ASSERT_TRUE(consumers().SaveConsumer(ConsumerId("b"), "{\"v\":1}").ok());
  ASSERT_TRUE(consumers().SaveConsumer(ConsumerId("a"), "{\"v\":2}").ok());
  ASSERT_TRUE(consumers().SaveConsumer(ConsumerId("b"), "{\"v\":3}").ok());  // replaces
  ASSERT_TRUE(consumers().AcquireLease(ConsumerId("a"), s, "w", 1000, 500).ok());
  ASSERT_TRUE(consumers().AcquireLease(ConsumerId("b"), s, "w", 1000, 500).ok());
  backend_->Reopen();
  auto listed = consumers().ListConsumers();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].id, ConsumerId("a"));
  EXPECT_EQ((*listed)[0].definition, "{\"v\":2}");
  EXPECT_EQ((*listed)[1].id, ConsumerId("b"));
  EXPECT_EQ((*listed)[1].definition, "{\"v\":3}");
  ASSERT_TRUE(consumers().DeleteConsumer(ConsumerId("a")).ok());
  EXPECT_EQ(consumers().DeleteConsumer(ConsumerId("a")).code(), ErrorCode::kNotFound);
  backend_->Reopen();
  ASSERT_EQ(consumers().ListConsumers()->size(), 1u);
  EXPECT_TRUE(consumers().ListConsumerPositions(ConsumerId("a"))->empty());
  EXPECT_EQ(consumers().ListConsumerPositions(ConsumerId("b"))->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, ConsumerStoreConformance,
                         ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace agentstream
