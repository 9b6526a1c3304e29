#include "notify/classify.h"

#include <algorithm>
#include <boost/json.hpp>
#include <utility>
#include <variant>

#include "core/utf8.h"

namespace agentstream::notify {

namespace {

namespace json = boost::json;

constexpr std::pair<Kind, std::string_view> kNames[] = {
    {Kind::kPermission, "permission"},     {Kind::kTurnFailed, "turnFailed"},
    {Kind::kTurnFinished, "turnFinished"}, {Kind::kAutonomousFinished, "autonomousFinished"},
    {Kind::kQueueWaiting, "queueWaiting"},
};

std::string Cut(std::string_view text) { return BoundUtf8(text, kMaxTrackedTextBytes).text; }

std::string StringAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

// One event's effect on the track, and the notifications it calls for.
class Classifier {
 public:
  Classifier(Track& track, std::vector<Candidate>& out) : track_(track), out_(out) {}

  void Feed(const Event& e) {
    std::visit([&](const auto& payload) { On(e, payload); }, e.payload);
  }

  // The last fatal error of the delivery (the agent cannot go on until its runtime restarts).
  const std::optional<Cursor>& stalled() const { return stalled_; }

 private:
  template <class T>
  void On(const Event& /*e*/, const T& /*payload*/) {}

  void On(const Event& e, const PermissionRequested& p) {
    Candidate c{Kind::kPermission, e.cursor()};
    c.text = p.title.empty() ? p.tool_name.value_or("") : p.title;
    out_.push_back(std::move(c));
  }

  void On(const Event& e, const PromptQueued& p) {
    auto& queued = track_.queued;
    if (queued.size() >= kMaxTrackedPrompts) queued.erase(queued.begin());
    queued.emplace_back(p.client_message_id, Cut(p.text));
  }

  void On(const Event& /*e*/, const PromptCanceled& p) { Unqueue(p.client_message_id); }

  void On(const Event& e, const TurnStarted& p) {
    if (p.client_message_id) Unqueue(*p.client_message_id);
    if (!e.turn) return;
    auto& open = track_.open;
    if (open.size() >= kMaxTrackedTurns) {
      auto oldest = std::min_element(open.begin(), open.end(), [](const auto& a, const auto& b) {
        return a.second.started_ms < b.second.started_ms;
      });
      open.erase(oldest);
    }
    open[e.turn->str()] = Track::OpenTurn{e.time, p.origin == TurnOrigin::kForeground, ""};
  }

  void On(const Event& e, const UserMessage& p) {
    if (!e.turn) return;
    auto it = track_.open.find(e.turn->str());
    if (it != track_.open.end() && it->second.prompt.empty()) it->second.prompt = Cut(p.text);
  }

  void On(const Event& e, const TurnCompleted& /*p*/) {
    auto turn = Close(e);
    if (!turn) return;
    Candidate c{turn->foreground ? Kind::kTurnFinished : Kind::kAutonomousFinished, e.cursor()};
    c.ran_ms = std::max<std::int64_t>(0, e.time - turn->started_ms);
    c.text = turn->prompt;
    out_.push_back(std::move(c));
  }

  void On(const Event& e, const TurnFailed& p) {
    (void)Close(e);
    Candidate c{Kind::kTurnFailed, e.cursor()};
    c.text = p.message.empty() ? p.code : p.message;
    out_.push_back(std::move(c));
  }

  void On(const Event& e, const TurnCanceled& /*p*/) { (void)Close(e); }

  void On(const Event& e, const ErrorEvent& p) {
    if (p.fatal) stalled_ = e.cursor();
  }

  // Removes the event's turn from the open ones, returning it when it was open.
  std::optional<Track::OpenTurn> Close(const Event& e) {
    if (!e.turn) return std::nullopt;
    auto it = track_.open.find(e.turn->str());
    if (it == track_.open.end()) return std::nullopt;
    Track::OpenTurn turn = std::move(it->second);
    track_.open.erase(it);
    return turn;
  }

  void Unqueue(const std::string& client_message_id) {
    auto& queued = track_.queued;
    std::erase_if(queued, [&](const auto& q) { return q.first == client_message_id; });
  }

  Track& track_;
  std::vector<Candidate>& out_;
  std::optional<Cursor> stalled_;
};

}  // namespace

std::string_view KindName(Kind kind) {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "";
}

std::optional<Kind> KindFromName(std::string_view name) {
  for (const auto& [k, n] : kNames)
    if (n == name) return k;
  return std::nullopt;
}

json::value TrackToJson(const Track& track) {
  json::object open;
  for (const auto& [id, turn] : track.open) {
    open[id] = json::object{
        {"startedMs", turn.started_ms}, {"foreground", turn.foreground}, {"prompt", turn.prompt}};
  }
  json::array queued;
  for (const auto& [id, text] : track.queued)
    queued.push_back(json::array{json::string(id), json::string(text)});
  return json::object{{"open", std::move(open)}, {"queued", std::move(queued)}};
}

Track TrackFromJson(const json::value& v) {
  Track track;
  if (!v.is_object()) return track;
  const json::object& o = v.as_object();
  if (const json::value* open = o.if_contains("open"); open != nullptr && open->is_object()) {
    for (const auto& [id, turn] : open->as_object()) {
      if (!turn.is_object() || track.open.size() >= kMaxTrackedTurns) continue;
      const json::object& t = turn.as_object();
      Track::OpenTurn out;
      if (const json::value* s = t.if_contains("startedMs"); s != nullptr && s->is_int64())
        out.started_ms = s->as_int64();
      if (const json::value* f = t.if_contains("foreground"); f != nullptr && f->is_bool())
        out.foreground = f->as_bool();
      out.prompt = Cut(StringAt(t, "prompt"));
      track.open[std::string(id)] = std::move(out);
    }
  }
  if (const json::value* queued = o.if_contains("queued");
      queued != nullptr && queued->is_array()) {
    for (const json::value& q : queued->as_array()) {
      if (!q.is_array() || q.as_array().size() != 2 || !q.as_array()[0].is_string() ||
          !q.as_array()[1].is_string() || track.queued.size() >= kMaxTrackedPrompts)
        continue;
      track.queued.emplace_back(std::string(q.as_array()[0].as_string()),
                                Cut(q.as_array()[1].as_string()));
    }
  }
  return track;
}

std::vector<std::string> ClassifiedEventKinds() {
  std::vector<std::string> out;
  for (EventKind kind :
       {EventKind::kPermissionRequested, EventKind::kTurnStarted, EventKind::kTurnCompleted,
        EventKind::kTurnFailed, EventKind::kTurnCanceled, EventKind::kUserMessage,
        EventKind::kPromptQueued, EventKind::kPromptCanceled, EventKind::kError})
    out.emplace_back(EventKindName(kind));
  return out;
}

std::vector<Candidate> Classify(Track& track, const std::vector<EventRecord>& events) {
  std::vector<Candidate> out;
  Classifier classifier(track, out);
  for (const EventRecord& record : events) {
    auto event = DecodeRecord(record);
    if (event.ok()) classifier.Feed(*event);
  }
  if (classifier.stalled() && track.open.empty() && !track.queued.empty()) {
    Candidate c{Kind::kQueueWaiting, *classifier.stalled()};
    c.waiting = track.queued.size();
    c.text = track.queued.front().second;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace agentstream::notify
