#include "consumers/delivery.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "consumers/consumer_spec.h"
#include "consumers/lane.h"

namespace agentstream::consumers {
namespace {

namespace json = boost::json;

EventRecord Rec(std::uint64_t seq, const Payload& payload,
                std::optional<TurnId> turn = TurnId("t1")) {
  NewEvent e = MakeNewEvent(payload, std::move(turn));
  EventRecord r;
  r.session = SessionId("s");
  r.epoch = Epoch(1);
  r.seq = Seq(seq);
  r.time = 1000 + static_cast<TimestampMs>(seq);
  r.kind = static_cast<std::uint16_t>(e.kind);
  r.turn = e.turn;
  r.payload = e.payload;
  return r;
}

std::string TextOf(const EventRecord& r) {
  return std::string(json::parse(r.payload).as_object().at("text").as_string());
}

TEST(BuildContents, MergesRunsOfDeltasAndOutputsAndCoversTheRange) {
  std::vector<EventRecord> in;
  std::uint64_t seq = 0;
  in.push_back(Rec(++seq, AssistantMessageStart{MessageId("m1"), std::nullopt}));
  std::string expected;
  for (int i = 0; i < 50; ++i) {
    const std::string piece = "d" + std::to_string(i) + " ";
    expected += piece;
    in.push_back(Rec(++seq, AssistantMessageDelta{MessageId("m1"), piece}));
  }
  in.push_back(Rec(++seq, AssistantMessageEnd{MessageId("m1"), std::nullopt}));
  for (int i = 0; i < 10; ++i)
    in.push_back(Rec(++seq, ToolCallOutput{ToolCallId("c1"), "o" + std::to_string(i), i == 7}));
  in.push_back(Rec(++seq, AssistantMessageDelta{MessageId("m2"), "x"}));
  in.push_back(Rec(++seq, AssistantMessageDelta{MessageId("m3"), "y"}));  // another message

  Contents c = BuildContents(in, {}, true, {});
  EXPECT_TRUE(c.coalesced);
  EXPECT_EQ(c.consumed, in.size());
  ASSERT_EQ(c.events.size(), 6u);  // start, merged deltas, end, merged outputs, m2, m3
  EXPECT_EQ(TextOf(c.events[1]), expected);
  EXPECT_EQ(c.first_seqs[1], Seq(2));
  EXPECT_EQ(c.events[1].seq, Seq(51));
  EXPECT_EQ(c.events[1].time, 1051);
  const json::object out = json::parse(c.events[3].payload).as_object();
  EXPECT_EQ(out.at("text").as_string(), "o0o1o2o3o4o5o6o7o8o9");
  EXPECT_TRUE(out.at("truncated").as_bool());
  EXPECT_EQ(c.first_seqs[3], Seq(53));
  EXPECT_EQ(c.events[3].seq, Seq(62));
  EXPECT_EQ(TextOf(c.events[4]), "x");
  EXPECT_EQ(TextOf(c.events[5]), "y");
  // Unmerged events keep their stored bytes.
  EXPECT_EQ(c.events[0].payload, in[0].payload);

  Contents plain = BuildContents(in, {}, false, {});
  EXPECT_FALSE(plain.coalesced);
  EXPECT_EQ(plain.events.size(), in.size());
}

TEST(BuildContents, DifferentTurnsDoNotMergeAndPlansReplace) {
  std::vector<EventRecord> in;
  in.push_back(Rec(1, AssistantMessageDelta{MessageId("m"), "a"}, TurnId("t1")));
  in.push_back(Rec(2, AssistantMessageDelta{MessageId("m"), "b"}, TurnId("t2")));
  in.push_back(Rec(3, Plan{{PlanEntry{"one", PlanEntryStatus::kPending, std::nullopt}}}));
  in.push_back(Rec(4, Plan{{PlanEntry{"two", PlanEntryStatus::kCompleted, std::nullopt}}}));
  Contents c = BuildContents(in, {}, true, {});
  ASSERT_EQ(c.events.size(), 3u);
  EXPECT_EQ(c.events[2].seq, Seq(4));
  EXPECT_EQ(c.first_seqs[2], Seq(3));
  EXPECT_NE(c.events[2].payload.find("two"), std::string::npos);
  EXPECT_EQ(c.events[2].payload.find("one"), std::string::npos);
}

TEST(BuildContents, BoundsAndKindFilter) {
  std::vector<EventRecord> in;
  for (int i = 1; i <= 10; ++i) in.push_back(Rec(i, Notice{NoticeLevel::kInfo, "n"}));
  Contents c = BuildContents(in, {}, true, DeliveryBounds{4, 1 << 20});
  EXPECT_EQ(c.events.size(), 4u);
  EXPECT_EQ(c.consumed, 4u);
  // A byte bound always takes at least one event.
  Contents tiny = BuildContents(in, {}, true, DeliveryBounds{100, 1});
  EXPECT_EQ(tiny.events.size(), 1u);
  ConsumerFilter only_deltas;
  only_deltas.kinds = {"assistant.message.delta"};
  Contents none = BuildContents(in, only_deltas, true, {});
  EXPECT_TRUE(none.events.empty());
  EXPECT_EQ(none.consumed, 10u);  // the range is still covered
}

TEST(Delivery, JsonRoundTripKeepsRangesAndMergedFirstSeqs) {
  Delivery d;
  d.consumer = ConsumerId("c");
  d.session = SessionId("s");
  d.epoch = Epoch(1);
  d.seq_start = Seq(1);
  d.seq_end = Seq(3);
  d.ordinal = 7;
  d.idempotency_key = IdempotencyKey(d.consumer, d.session, d.epoch, d.seq_end);
  d.coalesced = true;
  d.events = {Rec(1, Notice{NoticeLevel::kInfo, "a"}),
              Rec(3, AssistantMessageDelta{MessageId("m"), "bc"})};
  d.first_seqs = {Seq(1), Seq(2)};
  d.state = json::object{{"msg", "42"}};
  EXPECT_EQ(d.idempotency_key, "c/s/1/3");
  const std::string text = DeliveryToJson(d);
  auto back = DeliveryFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ordinal, 7u);
  EXPECT_EQ(back->idempotency_key, "c/s/1/3");
  EXPECT_TRUE(back->coalesced);
  ASSERT_EQ(back->events.size(), 2u);
  EXPECT_EQ(back->first_seqs[1], Seq(2));
  EXPECT_EQ(back->events[1].payload, d.events[1].payload);
  EXPECT_EQ(back->state, d.state);
  EXPECT_EQ(DeliveryToJson(*back), text);
  EXPECT_FALSE(DeliveryFromJson("{\"consumer\":\"c\"}").ok());
  // An event outside the declared range is refused.
  d.seq_end = Seq(2);
  EXPECT_FALSE(DeliveryFromJson(DeliveryToJson(d)).ok());
}

TEST(Delivery, SubagentEventsWrapTheChildsEvents) {
  Delivery d;
  d.session = SessionId("child");
  d.epoch = Epoch(2);
  d.events = {Rec(5, Notice{NoticeLevel::kInfo, "hi"})};
  d.events[0].epoch = Epoch(2);
  auto wrapped = SubagentEventsFor(d);
  ASSERT_TRUE(wrapped.ok());
  ASSERT_EQ(wrapped->size(), 1u);
  EXPECT_EQ((*wrapped)[0].kind, EventKind::kSubagentEvent);
  auto ev = ToEvent((*wrapped)[0], SessionId("parent"), Cursor{Epoch(1), Seq(1)});
  ASSERT_TRUE(ev.ok());
  const auto& sub = std::get<SubagentEvent>(ev->payload);
  EXPECT_EQ(sub.child, SessionId("child"));
  EXPECT_EQ(sub.child_epoch, Epoch(2));
  EXPECT_EQ(sub.child_seq, Seq(5));
  EXPECT_EQ(sub.child_kind, "notice");
  EXPECT_EQ(ParentProducerId(ConsumerId("c"), SessionId("child")).str(), "consumer:c/child");
}

TEST(ConsumerSpec, JsonRoundTripAndFieldErrors) {
  auto spec = ConsumerSpecFromJson(json::parse(R"({"id":"hook-1",
    "filter":{"providers":["claude"],"kinds":["turn.started"]},
    "sink":{"kind":"webhook","url":"http://127.0.0.1:9/x","secret":"0123456789abcdef",
            "headers":{"X-Team":"a"}},
    "retry":{"maxAttempts":3,"initialBackoffMs":10,"maxBackoffMs":100},"coalesce":false})"));
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->retry.max_attempts, 3);
  EXPECT_FALSE(spec->coalesce);
  ASSERT_EQ(spec->sink.headers.size(), 1u);
  auto again = ConsumerSpecFromJson(ConsumerSpecToJson(*spec, false));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *spec);
  const auto redacted = ConsumerSpecToJson(*spec, true);
  EXPECT_EQ(redacted.at("sink").as_object().at("secret").as_string(), "***ef");
  auto error_of = [](const char* text) {
    return ConsumerSpecFromJson(json::parse(text)).status().message();
  };
  EXPECT_NE(error_of(R"({"id":"a b","sink":{"kind":"jsonl","path":"/x"}})").find("\"id\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","sink":{"kind":"webhook","url":"ftp://x","secret":"s"}})")
                .find("sink.url"),
            std::string::npos);
  EXPECT_TRUE(
      ConsumerSpecFromJson(
          json::parse(R"({"id":"a","sink":{"kind":"webhook","url":"https://x/h","secret":"s"}})"))
          .ok());
  EXPECT_NE(
      error_of(R"({"id":"a","sink":{"kind":"jsonl","path":"/x"},"filter":{"kinds":["nope"]}})")
          .find("filter.kinds"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","sink":{"kind":"command"}})").find("sink.argv"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","sink":{"kind":"notify"}})").find("sink.device"),
            std::string::npos);
  auto notify = ConsumerSpecFromJson(
      json::parse(R"({"id":"notify.dev_1","sink":{"kind":"notify","device":"dev_1"}})"));
  ASSERT_TRUE(notify.ok());
  EXPECT_EQ(notify->sink.device, "dev_1");
  EXPECT_EQ(*ConsumerSpecFromJson(ConsumerSpecToJson(*notify, true)), *notify);
}

TEST(LaneRecord, RoundTripsTheJournaledPlan) {
  LaneRecord r;
  r.sink_state = json::object{{"k", 1}};
  r.ordinal_epoch = 2;
  r.next_ordinal = 9;
  r.inflight = InflightPlan{9, Epoch(2), Seq(4), Seq(8), true, json::object{{"offset", 10}}};
  auto back = DecodeLaneRecord(EncodeLaneRecord(r));
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(back->inflight.has_value());
  EXPECT_EQ(back->inflight->seq_end, Seq(8));
  EXPECT_EQ(back->inflight->prepared, r.inflight->prepared);
  EXPECT_EQ(back->next_ordinal, 9u);
  EXPECT_TRUE(DecodeLaneRecord("")->next_ordinal == 0);
  EXPECT_EQ(DecodeLaneRecord("junk").status().code(), ErrorCode::kCorruption);
}

}  // namespace
}  // namespace agentstream::consumers
