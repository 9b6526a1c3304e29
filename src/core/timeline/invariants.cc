#include "core/timeline/invariants.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/timeline/projection.h"

namespace agentstream::timeline {

namespace {

struct TurnRecord {
  TurnOrigin origin = TurnOrigin::kForeground;
  Cursor start;
  std::optional<Cursor> terminal;
  int user_messages = 0;
  std::uint64_t order = 0;
};

class Checker {
 public:
  explicit Checker(const CheckOptions& options) : options_(options) {}

  void Add(const Event& e) {
    tail_ = e.cursor();
    if (const auto* start = std::get_if<TurnStarted>(&e.payload)) return OnStart(e, *start);
    if (!e.turn) return;
    auto it = turns_.find(e.turn->str());
    if (it == turns_.end()) {
      return Flag(Invariant::kB, e, "event of turn " + e.turn->str() + " that never started");
    }
    TurnRecord& t = it->second;
    if (t.terminal) {
      return Flag(Invariant::kC, e,
                  std::string(EventKindName(e.kind())) + " after the turn's terminal");
    }
    const EventKind kind = e.kind();
    if (kind == EventKind::kTurnCompleted || kind == EventKind::kTurnCanceled ||
        kind == EventKind::kTurnFailed) {
      t.terminal = e.cursor();
      if (t.origin == TurnOrigin::kForeground && t.user_messages == 0)
        Flag(Invariant::kA, e, "foreground turn ended without a user message");
      open_.erase(e.turn->str());
    } else if (kind == EventKind::kUserMessage) {
      if (t.origin == TurnOrigin::kAutonomous)
        Flag(Invariant::kD, e, "user message in an autonomous turn");
      else if (++t.user_messages > 1)
        Flag(Invariant::kA, e, "second user message in a foreground turn");
    }
  }

  std::vector<Violation> Finish(std::span<const Event> events) {
    std::uint64_t newest_start = 0;
    for (const auto& [id, t] : turns_) newest_start = std::max(newest_start, t.order);
    for (const auto& [id, t] : turns_) {
      if (t.terminal) continue;
      const bool at_tail = t.order == newest_start || started_after_[id] == 0;
      if (options_.allow_open_turns_at_tail && at_tail) continue;
      out_.push_back({Invariant::kB, t.start, TurnId(id), "turn started without a terminal"});
    }
    CheckParity(events);
    std::stable_sort(out_.begin(), out_.end(),
                     [](const Violation& a, const Violation& b) { return a.cursor < b.cursor; });
    return std::move(out_);
  }

 private:
  void Flag(Invariant inv, const Event& e, std::string message) {
    out_.push_back({inv, e.cursor(), e.turn, std::move(message)});
  }

  void OnStart(const Event& e, const TurnStarted& start) {
    if (!e.turn) return Flag(Invariant::kD, e, "turn start without a turn id");
    const std::string id = e.turn->str();
    if (turns_.count(id)) return Flag(Invariant::kD, e, "turn id started twice");
    if (start.origin == TurnOrigin::kAutonomous && start.client_message_id)
      Flag(Invariant::kD, e, "autonomous turn carries a client message id");
    if (start.origin == TurnOrigin::kForeground && !open_.empty())
      Flag(Invariant::kD, e, "foreground turn started while turn " + *open_.begin() + " is open");
    for (const std::string& other : open_) started_after_[other]++;
    turns_[id] = TurnRecord{start.origin, e.cursor(), std::nullopt, 0, ++order_};
    open_.insert(id);
  }

  // (e): every assistant message of the log and of the transcript is a timeline item holding the
  // concatenation of all its deltas.
  void CheckParity(std::span<const Event> events) {
    std::map<std::string, std::pair<std::string, Cursor>> expected;  // message id -> text, first
    for (const Event& e : events) {
      if (const auto* d = std::get_if<AssistantMessageDelta>(&e.payload)) {
        auto [it, fresh] = expected.try_emplace(d->message_id.str(), "", e.cursor());
        it->second.first += d->text;
      } else if (const auto* s = std::get_if<AssistantMessageStart>(&e.payload)) {
        expected.try_emplace(s->message_id.str(), "", e.cursor());
      }
    }
    std::unordered_map<std::string, const AssistantMessageBody*> shown;
    Projection projection = Project(events);
    for (const ProjectedItem& item : projection.items())
      if (const auto* body = std::get_if<AssistantMessageBody>(&item.body))
        shown[body->message_id.str()] = body;
    for (const auto& [id, text_at] : expected) {
      auto it = shown.find(id);
      if (it == shown.end() || it->second->text != text_at.first)
        out_.push_back({Invariant::kE, text_at.second, std::nullopt,
                        "assistant message " + id + " is missing from the timeline or incomplete"});
    }
    for (const TranscriptMessage& m : options_.transcript) {
      auto it = shown.find(m.message_id.str());
      if (it == shown.end() || it->second->text != m.text)
        out_.push_back({Invariant::kE, tail_, std::nullopt,
                        "transcript message " + m.message_id.str() + " is not in the timeline"});
    }
  }

  const CheckOptions& options_;
  std::map<std::string, TurnRecord> turns_;
  std::set<std::string> open_;
  std::map<std::string, int> started_after_;  // turns started while this one was open
  std::uint64_t order_ = 0;
  Cursor tail_;
  std::vector<Violation> out_;
};

}  // namespace

char InvariantLetter(Invariant invariant) {
  return static_cast<char>('a' + static_cast<int>(invariant));
}

std::vector<Violation> CheckInvariants(std::span<const Event> events, const CheckOptions& options) {
  Checker checker(options);
  for (const Event& e : events) checker.Add(e);
  return checker.Finish(events);
}

std::string FormatViolation(const Violation& v) {
  std::string out(1, InvariantLetter(v.invariant));
  out += " at " + FormatCursor(v.cursor);
  if (v.turn) out += " (" + v.turn->str() + ")";
  return out + ": " + v.message;
}

}  // namespace agentstream::timeline
