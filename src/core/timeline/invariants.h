// The checker of the turn invariants (docs/timeline.md, "Invariants", same letters) over a
// stored log (one epoch, oldest first). Used by the tests after every scenario and property run,
// and by the `check` command. Pure.
//
//   a. each foreground turn has exactly one user message;
//   b. every turn start has exactly one terminal (completed / canceled / failed), and no terminal
//      lacks a start;
//   c. no event is projected into a turn after that turn's terminal;
//   d. turn ids are distinct, autonomous turns are never mistaken for foreground (no client
//      message id, no user message), and a foreground turn never starts while another turn is
//      open;
//   e. every assistant message in the log, and every message of an expected transcript, appears
//      in the timeline with all of its text (transcript parity).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/ids.h"

namespace agentstream::timeline {

enum class Invariant { kA, kB, kC, kD, kE };
char InvariantLetter(Invariant invariant);  // 'a' .. 'e'

struct Violation {
  Invariant invariant = Invariant::kA;
  Cursor cursor;  // the event that breaks it (for a missing thing: the turn's start, or
                  // the tail for a transcript message absent from the log)
  std::optional<TurnId> turn;
  std::string message;  // for a person
};

// An assistant message the provider's own transcript holds (e.g. Claude's session file).
struct TranscriptMessage {
  MessageId message_id;
  std::string text;  // the full text; compared with the timeline item's merged text
};

struct CheckOptions {
  // A live session may have turns still running at its tail: when true, a start without a
  // terminal is not a violation of (b) if no later turn started after it.
  bool allow_open_turns_at_tail = false;
  std::vector<TranscriptMessage> transcript;  // checked for (e) in addition to the log itself
};

// Every violation, ordered by cursor. Empty when the log satisfies all five invariants.
std::vector<Violation> CheckInvariants(std::span<const Event> events,
                                       const CheckOptions& options = {});

// "b at 1:12 (turn_3): turn started twice"
std::string FormatViolation(const Violation& violation);

}  // namespace agentstream::timeline
