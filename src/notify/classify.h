// What is notified: from the committed events of one session, the notifications they call for
// (docs/notifications.md, "Kinds"). Pure: no I/O, no clock; the caller keeps a Track per
// (device, session) between calls (the notification sink stores it as its adapter state, so it
// survives restarts with the consumer's position).
#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/event_codec.h"
#include "core/ids.h"

namespace agentstream::notify {

enum class Kind { kPermission, kTurnFailed, kTurnFinished, kAutonomousFinished, kQueueWaiting };
inline constexpr Kind kAllKinds[] = {Kind::kPermission, Kind::kTurnFailed, Kind::kTurnFinished,
                                     Kind::kAutonomousFinished, Kind::kQueueWaiting};

// "permission", "turnFailed", "turnFinished", "autonomousFinished", "queueWaiting".
std::string_view KindName(Kind kind);
std::optional<Kind> KindFromName(std::string_view name);

// The relevant text a Track keeps per turn or prompt: enough for a 120-character preview.
inline constexpr std::size_t kMaxTrackedTextBytes = 480;
// Turns open at once and prompts waiting that a Track follows (a session's queue holds at most
// 64 prompts; more open turns than this are forgotten, oldest first).
inline constexpr std::size_t kMaxTrackedTurns = 16;
inline constexpr std::size_t kMaxTrackedPrompts = 64;

// What one session's notifications depend on across deliveries.
struct Track {
  struct OpenTurn {
    TimestampMs started_ms = 0;
    bool foreground = true;  // started by a person's prompt (turn.started origin "foreground")
    std::string prompt;      // the turn's user.message text, cut to kMaxTrackedTextBytes
    friend bool operator==(const OpenTurn&, const OpenTurn&) = default;
  };
  std::map<std::string, OpenTurn> open;  // by turn id
  // The prompts waiting on the queue (prompt.queued, neither started nor canceled), oldest
  // first: client message id and text.
  std::vector<std::pair<std::string, std::string>> queued;
  friend bool operator==(const Track&, const Track&) = default;
};

// The Track as JSON and back (the sink's adapter state). A value this code did not write (null,
// another shape) reads as an empty Track.
boost::json::value TrackToJson(const Track& track);
Track TrackFromJson(const boost::json::value& v);

// One notification the events call for, before the device's settings and routing.
struct Candidate {
  Kind kind = Kind::kPermission;
  Cursor cursor;             // the event that calls for it
  std::int64_t ran_ms = -1;  // turnFinished, autonomousFinished: how long the turn ran
  std::size_t waiting = 0;   // queueWaiting: prompts waiting
  // For a preview only: the permission's title, the failure's message, the finished turn's
  // prompt, the first waiting prompt. Not bounded here (ComposeNotification cuts it).
  std::string text;
  friend bool operator==(const Candidate&, const Candidate&) = default;
};

// The event kind names Classify reads: the notification consumers' filter.
std::vector<std::string> ClassifiedEventKinds();

// Feeds one delivery's `events` (log order; other kinds and events that do not decode are
// skipped) through `track` and returns the notifications they call for, in log order:
// - permission.requested: kPermission;
// - turn.failed: kTurnFailed;
// - turn.completed of a turn whose turn.started the track saw: kTurnFinished for a foreground
//   turn, kAutonomousFinished for any other origin (a turn started before the track began is
//   not notified: its origin and length are unknown);
// - kQueueWaiting once at the end of a delivery holding a fatal `error` event (the agent cannot go
//   on until its runtime is started again, e.g. `runtime_start_failed`), when then no turn is
//   open and prompts wait on the queue. A queue held at the end of a turn is not enough: the
//   daemon runs it itself (a new runtime after the process exited, recovery after a restart);
//   docs/notifications.md, "Kinds".
// turn.canceled closes a turn without a notification: a person stopped it.
std::vector<Candidate> Classify(Track& track, const std::vector<EventRecord>& events);

}  // namespace agentstream::notify
