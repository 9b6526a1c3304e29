// Cron expressions and time zones for schedules (docs/automation.md, "Cron expressions").
//
// A cron expression has five fields, minute (0-59), hour (0-23), day of month (1-31), month
// (1-12 or jan-dec) and day of week (0-7 or sun-sat; 0 and 7 are Sunday), each `*`, a number, a
// range `a-b`, a list `a,b-c`, or any of these with a step `/n` (`*/15`, `10-50/20`; `5/15` runs
// from 5 to the field's end). As in Vixie cron, a day-of-month or day-of-week field that begins
// with `*` (`*`, `*/2`) counts as unrestricted: when neither day field begins with `*`, a day
// matching either matches (`0 0 13 * 5`: the 13th and every Friday); otherwise a day must match
// both (`0 0 */2 * 1`: odd-numbered days that are Mondays). Names are case-insensitive. Nothing
// else (no `@daily`, no seconds, no `L`, `W` or `#`).
//
// Times are read in a time zone: "UTC", or an IANA name ("Europe/Berlin") read from the system's
// zoneinfo (the TZDIR environment variable, else /usr/share/zoneinfo). The zone's current rule
// is the POSIX TZ string that ends its TZif file (RFC 8536, with its extensions: `<+0545>`-style
// names, switch times from -167 to 167 hours), its days counted with Boost.DateTime's Gregorian
// calendar, so future ticks follow the zone's daylight-saving rules. A local time that a
// spring-forward skips never matches; one that a fall-back repeats matches twice (once in each
// offset).
//
// Pure but for TimeZone::Load, which reads one file; thread-safe (a TimeZone is immutable once
// loaded).
#pragma once

#include <bitset>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/event.h"
#include "core/status.h"

namespace agentstream::server {

struct CronExpression {
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days_of_month;  // 1..31
  std::bitset<13> months;         // 1..12
  std::bitset<7> days_of_week;    // 0..6, Sunday 0
  bool any_day_of_month = false;  // the field begins with `*` (Vixie's rule, above)
  bool any_day_of_week = false;
  std::string text;  // as given, trimmed
};

// kInvalidArgument naming the field and what is wrong: not five fields, a value out of range, an
// unknown name, a step of 0, a range whose end is before its start, over 256 bytes.
Result<CronExpression> ParseCron(std::string_view text);

class TimeZone {
 public:
  // "UTC" (also "Etc/UTC", "") or an IANA zone name: letters, digits, '/', '_', '-', '+'; no
  // "..". kInvalidArgument for a malformed name, kNotFound for a zone the system does not have,
  // kInvalidArgument for a file that is not TZif (version 2 or later), is over 1 MiB, or has no
  // POSIX rule or one that does not parse. Reads the file once; the TimeZone keeps the rule.
  static Result<TimeZone> Load(std::string_view name);
  static TimeZone Utc();

  const std::string& name() const { return name_; }
  // The offset from UTC, in seconds (east positive: +3600 for Berlin in winter), in effect at
  // `utc_ms` by the zone's current rule (earlier rules, in the TZif file's table, are not read).
  // Outside the years 1900 to 9000 the zone's standard offset.
  int OffsetSeconds(TimestampMs utc_ms) const;
  // The first instant after `utc_ms` at which the zone's rule switches between standard and
  // daylight-saving time, or nullopt for a zone without daylight saving (and outside the years
  // 1900 to 9000). Until then the offset stays OffsetSeconds(utc_ms): NextCronTick skips ahead
  // by local days and hours only up to it.
  std::optional<TimestampMs> NextTransition(TimestampMs utc_ms) const;

 private:
  struct Rule;
  std::string name_;
  std::shared_ptr<const Rule> rule_;  // null for UTC
};

// The first whole minute strictly after `after_ms` at which `cron` matches in `zone` (in ms since
// the epoch, UTC), or nullopt when it does not match within ten years (it never fires:
// `0 0 30 2 *`) and before the year 9000, or `after_ms` is outside the years 1900 to 9000. Skips
// ahead by local months, days and hours: a few dozen steps a year at most.
std::optional<TimestampMs> NextCronTick(const CronExpression& cron, const TimeZone& zone,
                                        TimestampMs after_ms);

}  // namespace agentstream::server
