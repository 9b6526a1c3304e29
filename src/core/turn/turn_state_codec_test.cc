#include "core/turn/turn_state_codec.h"

#include <gtest/gtest.h>

namespace agentstream::turn {
namespace {

namespace json = boost::json;

TurnState EveryField() {
  TurnState s;
  Run run{TurnId("turn_2"), TurnOrigin::kForeground, RunPhase::kStreaming, "c2", "task"};
  run.prompt_text = "go";
  run.order = 2;
  run.pending_permissions = {RequestId("r1")};
  run.message_ids = {MessageId("m1")};
  run.call_ids = {ToolCallId("k1")};
  run.request_ids = {RequestId("r1")};
  s.open.emplace(run.id, run);
  s.foreground = run.id;
  s.next_order = 3;
  s.by_message.emplace(MessageId("m1"), run.id);
  s.by_call.emplace(ToolCallId("k1"), run.id);
  s.by_request.emplace(RequestId("r1"), run.id);
  s.by_task.emplace("task", run.id);
  Run closed{TurnId("turn_1"), TurnOrigin::kAutonomous, RunPhase::kInterrupted};
  closed.order = 1;
  s.recent_closed.push_back(closed);
  s.closed_ids.insert(closed.id);
  Attachment image{"image", "image/png", "a.png", std::nullopt, "aGk="};
  s.queue.push_back(SubmitPrompt{"c3", "later", {image}, WhileRunning::kQueue});
  s.pending_after_teardown = SubmitPrompt{"c4", "now", {}, WhileRunning::kSteer};
  s.known_client_ids.Set("c2", run.id);
  s.known_client_ids.Set("c3", TurnId());
  s.known_client_ids.Set("c4", TurnId());
  s.last_prompt_text = "go";
  s.errored = true;
  return s;
}

TEST(TurnStateCodec, EveryFieldRoundTrips) {
  const TurnState state = EveryField();
  const std::string text = json::serialize(TurnStateToJson(state));
  Result<TurnState> read = TurnStateFromJson(json::parse(text));
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(json::serialize(TurnStateToJson(*read)), text);
  EXPECT_EQ(read->open.at(TurnId("turn_2")).pending_permissions.count(RequestId("r1")), 1u);
  EXPECT_EQ(read->queue.at(0).attachments.at(0).data, "aGk=");
  EXPECT_EQ(read->pending_after_teardown->while_running, WhileRunning::kSteer);
  EXPECT_EQ(read->closed_ids.count(TurnId("turn_1")), 1u);
  EXPECT_EQ(read->recent_closed.front().origin, TurnOrigin::kAutonomous);
  EXPECT_TRUE(read->errored);
}

TEST(TurnStateCodec, EqualStatesEncodeEquallyWhateverTheirHashOrder) {
  TurnState a = EveryField();
  TurnState b = EveryField();
  for (int i = 0; i < 50; ++i) {
    a.by_task.emplace("x" + std::to_string(i), TurnId("t"));
    b.by_task.emplace("x" + std::to_string(49 - i), TurnId("t"));
  }
  b.by_task.rehash(1024);
  EXPECT_EQ(json::serialize(TurnStateToJson(a)), json::serialize(TurnStateToJson(b)));
}

TEST(TurnStateCodec, UnreadableStatesAreCorruptionNamingTheField) {
  const json::object good = TurnStateToJson(EveryField());
  auto expect_corrupt = [&](json::object o, std::string_view names) {
    Result<TurnState> read = TurnStateFromJson(o);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().code(), ErrorCode::kCorruption);
    EXPECT_NE(read.status().message().find(names), std::string::npos) << read.status().message();
  };
  EXPECT_EQ(TurnStateFromJson(json::value(3)).status().code(), ErrorCode::kCorruption);
  json::object o = good;
  o.erase("nextOrder");
  expect_corrupt(o, "nextOrder is missing");
  o = good;
  o["open"].as_array()[0].as_object()["phase"] = "sleeping";
  expect_corrupt(o, "open[0]: phase names no known value");
  o = good;
  o["queue"].as_array()[0].as_object()["attachments"] = json::array{1};
  expect_corrupt(o, "queue[0]: attachments");
  o = good;
  o["byCall"] = json::object{{"k1", 7}};
  expect_corrupt(o, "byCall must map names to turn ids");
  o = good;
  o["foreground"] = "turn_9";
  expect_corrupt(o, "foreground names no open run");
  o = good;
  o["open"].as_array()[0].as_object()["order"] = -1;
  expect_corrupt(o, "order must be an unsigned integer");
}

}  // namespace
}  // namespace agentstream::turn
