// The versioned codec of session-log events: typed payloads <-> JSON text, the stored record, and
// the JSON envelope used on the wire. Pure functions: no I/O, no clock, thread-safe.
//
// Format version 1 is described in docs/event-log-format.md. Every stored record carries the
// format version it was written with; reading a newer version than kEventFormatVersion is a
// kUnsupportedVersion error, never a crash or a guess.
#pragma once

#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/status.h"

namespace agentstream {

inline constexpr std::uint32_t kEventFormatVersion = 1;

// An event as stored and transported: the envelope plus the payload as JSON text. The payload
// text is exactly what was appended (readers can forward it without re-encoding).
struct EventRecord {
  SessionId session;
  Epoch epoch;
  Seq seq;
  TimestampMs time = 0;
  std::uint16_t kind = 0;  // an EventKind number
  std::optional<TurnId> turn;
  std::uint32_t format = kEventFormatVersion;
  std::string payload;  // a JSON object
  // The ownership generation of the runtime that appended the event (AppendRequest::
  // owner_generation); 0 for an append from outside any runtime. Kept by the store beside the
  // record, not part of the event format.
  std::uint64_t owner_generation = 0;

  Cursor cursor() const { return {epoch, seq}; }
};

// An event to append. The log assigns session, epoch, seq and time.
struct NewEvent {
  EventKind kind = EventKind::kNotice;
  std::optional<TurnId> turn;
  std::string payload;  // a JSON object valid for `kind`
};

// Adds `more` to the totals `sum`: token counts add up, and the costs of the reports that have
// one.
void AddUsage(Usage& sum, const Usage& more);
// The usage events of `events` summed; nullopt when there are none (a payload that does not
// decode is passed over).
std::optional<Usage> UsageIn(const std::vector<NewEvent>& events);

// Encodes a typed payload as a JSON object text.
std::string EncodePayload(const Payload& payload);
// Builds the NewEvent for a typed payload.
NewEvent MakeNewEvent(const Payload& payload, std::optional<TurnId> turn = std::nullopt);

// Decodes payload text of `kind` written with `format`. Errors: kUnsupportedVersion for a format
// newer than this build, kInvalidArgument for an unknown kind, text that is not a JSON object,
// or a field that is missing or of the wrong type (the message names the field).
Result<Payload> DecodePayload(std::uint16_t kind, std::uint32_t format, std::string_view json);

// Checks an event before it is appended: known kind, size within `max_payload_bytes`, payload
// valid for its kind. kTooLarge or kInvalidArgument with a message that names the problem.
Status ValidateNewEvent(const NewEvent& event, std::size_t max_payload_bytes);

// The event `event` becomes once stored at `at` of `session` with commit time `time`, for code
// that keeps a log in memory (tests, replays). Errors as ValidateNewEvent's schema check.
Result<Event> ToEvent(const NewEvent& event, const SessionId& session, Cursor at,
                      TimestampMs time = 0);

// Decodes a stored record. Errors as DecodePayload, except that a payload or kind that does not
// decode is reported as kCorruption (the bytes were accepted once, so the store is damaged).
Result<Event> DecodeRecord(const EventRecord& record);

// The JSON envelope of the wire format:
// {"v":1,"session":"s","epoch":1,"seq":7,"time":1700000000000,"kind":"turn.started",
//  "turn":"t1","payload":{...}}   ("turn" absent when the event belongs to no turn).
boost::json::object EnvelopeToJson(const EventRecord& record);
std::string EncodeEnvelope(const EventRecord& record);
// Parses an envelope. kUnsupportedVersion when "v" is newer than this build; kInvalidArgument
// for anything malformed.
Result<EventRecord> DecodeEnvelope(std::string_view json);

}  // namespace agentstream
