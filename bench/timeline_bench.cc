// Projection throughput (events/s), turn engine throughput, and page latency against history
// size, including a page whose tool call ends at the far end of the history. Results and the
// commands are in docs/benchmarks-timeline.md.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/timeline/pager.h"
#include "core/timeline/projection.h"
#include "core/turn/engine.h"

namespace agentstream {
namespace {

using timeline::BuildPage;
using timeline::PageDirection;
using timeline::PageRequest;
using timeline::Projection;
using timeline::ProjectionIndex;

// A realistic mix: per turn a user message, 40 assistant deltas, a tool call with 5 outputs.
std::vector<Event> MakeHistory(std::size_t n, bool far_tool) {
  std::vector<Event> out;
  out.reserve(n + 2);
  auto add = [&](Payload p) {
    out.push_back(
        Event{SessionId("s"), Epoch(1), Seq(out.size() + 1), 0, TurnId("t"), std::move(p)});
  };
  if (far_tool) add(ToolCallStart{ToolCallId("far"), "Bash"});
  for (std::size_t turn = 0; out.size() < n; ++turn) {
    const std::string id = std::to_string(turn);
    add(UserMessage{MessageId("u" + id), "c" + id, "please do the thing"});
    for (int i = 0; i < 40; ++i)
      add(AssistantMessageDelta{MessageId("m" + id), "some streamed text "});
    add(ToolCallStart{ToolCallId("t" + id), "Bash"});
    for (int i = 0; i < 5; ++i) add(ToolCallOutput{ToolCallId("t" + id), "output line\n"});
    add(ToolCallEnd{ToolCallId("t" + id)});
  }
  if (far_tool)
    add(ToolCallEnd{ToolCallId("far"), ToolCallStatus::kCompleted, std::string("done")});
  return out;
}

class VectorReader final : public timeline::RawEventReader {
 public:
  explicit VectorReader(const std::vector<Event>& events) : events_(events) {}
  Result<std::vector<Event>> ReadRange(Epoch, Seq first, Seq last) override {
    std::vector<Event> out;
    for (std::uint64_t s = first.value(); s <= last.value() && s <= events_.size(); ++s)
      out.push_back(events_[s - 1]);
    return out;
  }

 private:
  const std::vector<Event>& events_;
};

void BM_ProjectionApply(benchmark::State& state) {
  const std::vector<Event> events = MakeHistory(100000, false);
  for (auto _ : state) {
    Projection p;
    for (const Event& e : events) p.Apply(e);
    benchmark::DoNotOptimize(p.items().size());
  }
  state.SetItemsProcessed(state.iterations() * events.size());
}
BENCHMARK(BM_ProjectionApply)->Unit(benchmark::kMillisecond);

void BM_IndexAdd(benchmark::State& state) {
  const std::vector<Event> events = MakeHistory(100000, false);
  for (auto _ : state) {
    ProjectionIndex index;
    for (const Event& e : events) index.Add(e);
    benchmark::DoNotOptimize(index.size());
  }
  state.SetItemsProcessed(state.iterations() * events.size());
}
BENCHMARK(BM_IndexAdd)->Unit(benchmark::kMillisecond);

void BM_EngineDeltas(benchmark::State& state) {
  std::size_t events = 0;
  for (auto _ : state) {
    turn::TurnState s;
    turn::SequentialTurnIds ids;
    s = turn::Advance(std::move(s), turn::Command(turn::SubmitPrompt{"c", "p"}), ids).state;
    for (int i = 0; i < 10000; ++i) {
      turn::Step step = turn::Advance(
          std::move(s), turn::ProviderEvent(turn::ProviderTextDelta{MessageId("m"), "text "}), ids);
      s = std::move(step.state);
      events += step.events.size();
    }
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_EngineDeltas)->Unit(benchmark::kMillisecond);

// Page latency vs history size: tail, before the middle, after the middle, and the oldest page
// whose tool call ends at the tail.
void BM_Page(benchmark::State& state) {
  const std::size_t n = state.range(0);
  const auto direction = static_cast<PageDirection>(state.range(1));
  const std::vector<Event> events = MakeHistory(n, true);
  ProjectionIndex index;
  for (const Event& e : events) index.Add(e);
  VectorReader reader(events);
  PageRequest request;
  request.direction = direction;
  request.max_items = 50;
  if (direction == PageDirection::kBefore)
    request.cursor = Cursor{Epoch(1), Seq(100)};  // oldest page
  if (direction == PageDirection::kAfter) request.cursor = Cursor{Epoch(1), Seq(n / 2)};
  for (auto _ : state) {
    Result<timeline::Page> page = BuildPage(index, reader, request);
    if (!page.ok()) state.SkipWithError(page.status().ToString().c_str());
    benchmark::DoNotOptimize(page->items.size());
  }
}
BENCHMARK(BM_Page)
    ->ArgsProduct({{10000, 100000, 1000000}, {0, 1, 2}})
    ->ArgNames({"history", "dir"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace agentstream

BENCHMARK_MAIN();
