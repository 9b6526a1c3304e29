#include "server/cron.h"

#include <boost/date_time/gregorian/gregorian.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <utility>
#include <vector>

#include "core/ascii.h"

namespace agentstream::server {

namespace {

constexpr std::size_t kMaxCronBytes = 256;
constexpr std::size_t kMaxZoneNameBytes = 128;
constexpr std::size_t kMaxZoneFileBytes = std::size_t{1} << 20;
constexpr std::int64_t kCronDaySeconds = 86400;
constexpr std::int64_t kCronHourSeconds = 3600;
constexpr TimestampMs kCronMinuteMs = 60'000;
constexpr TimestampMs kCronTenYearsMs = 3653 * kCronDaySeconds * 1000;
// Days since 1970-01-01 of 1900-01-01 and of 9000-01-01: the span of years read (Boost's calendar
// ends at 9999).
constexpr std::int64_t kCronFirstDay = -25'567;
constexpr std::int64_t kCronEndDay = 2'567'655;

std::int64_t CronFloorDiv(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

bool CronInSpan(std::int64_t seconds) {
  const std::int64_t day = CronFloorDiv(seconds, kCronDaySeconds);
  return day >= kCronFirstDay && day < kCronEndDay;
}

const boost::gregorian::date& CronEpoch() {
  static const boost::gregorian::date kEpoch(1970, 1, 1);
  return kEpoch;
}

std::int64_t CronDayNumber(const boost::gregorian::date& day) { return (day - CronEpoch()).days(); }

// Keeps printable ASCII of text quoted in an error, '?' for other bytes.
std::string CronQuoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out + "\"";
}

// ---- Cron expressions

constexpr std::array<std::string_view, 12> kCronMonthNames = {
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<std::string_view, 7> kCronDayNames = {"sun", "mon", "tue", "wed",
                                                           "thu", "fri", "sat"};

struct CronFieldSpec {
  std::string_view what;  // "hour"
  int low;
  int high;
  int open_end;                             // where `*` and `a/n` end (6 for days of week)
  std::span<const std::string_view> names;  // names[i] is the value low + i
};

constexpr std::array<CronFieldSpec, 5> kCronFields = {{
    {"minute", 0, 59, 59, {}},
    {"hour", 0, 23, 23, {}},
    {"day-of-month", 1, 31, 31, {}},
    {"month", 1, 12, 12, kCronMonthNames},
    {"day-of-week", 0, 7, 6, kCronDayNames},
}};

Status CronBad(const CronFieldSpec& field, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, "the " + std::string(field.what) + " field: " + why);
}

// A whole decimal number of at most six digits.
std::optional<int> CronNumber(std::string_view text) {
  int value = 0;
  if (text.empty() || text.size() > 6) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Result<int> CronValue(std::string_view token, const CronFieldSpec& field) {
  if (!token.empty() && std::isalpha(static_cast<unsigned char>(token.front()))) {
    for (std::size_t i = 0; i < field.names.size(); ++i) {
      if (EqualsIgnoringAsciiCase(token, field.names[i])) return field.low + static_cast<int>(i);
    }
    if (field.names.empty()) return CronBad(field, CronQuoted(token) + " is not a number");
    return CronBad(field, "unknown name " + CronQuoted(token));
  }
  const bool digits = !token.empty() && std::all_of(token.begin(), token.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  if (!digits) return CronBad(field, CronQuoted(token) + " is not a number");
  const std::optional<int> value = CronNumber(token);
  if (!value || *value < field.low || *value > field.high) {
    return CronBad(field, std::string(token) + " is out of range " + std::to_string(field.low) +
                              "-" + std::to_string(field.high));
  }
  return *value;
}

// One list item: `*`, `a`, `a-b`, each with an optional `/n`.
Status CronItem(std::string_view item, const CronFieldSpec& field, std::bitset<64>& bits) {
  if (item.empty()) return CronBad(field, "an empty list item");
  const std::size_t slash = item.find('/');
  const std::string_view range = item.substr(0, slash);
  int step = 1;
  if (slash != std::string_view::npos) {
    const std::string_view step_text = item.substr(slash + 1);
    const std::optional<int> parsed = CronNumber(step_text);
    if (!parsed) return CronBad(field, "the step " + CronQuoted(step_text) + " is not a number");
    if (*parsed == 0) return CronBad(field, "a step of 0");
    step = *parsed;
  }
  int first = field.low;
  int last = field.open_end;
  if (range != "*") {
    const std::size_t dash = range.find('-');
    AS_ASSIGN_OR_RETURN(first, CronValue(range.substr(0, dash), field));
    if (dash != std::string_view::npos) {
      AS_ASSIGN_OR_RETURN(last, CronValue(range.substr(dash + 1), field));
      if (last < first) {
        return CronBad(field, "the range " + CronQuoted(range) + " ends before it starts");
      }
    } else if (slash == std::string_view::npos) {
      last = first;
    }
  }
  for (int v = first; v <= last; v += step) bits.set(static_cast<std::size_t>(v));
  return Status::Ok();
}

template <std::size_t N>
Result<std::bitset<N>> CronField(std::string_view text, const CronFieldSpec& field) {
  std::bitset<64> bits;
  while (true) {
    const std::size_t comma = text.find(',');
    AS_RETURN_IF_ERROR(CronItem(text.substr(0, comma), field, bits));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (N == 7 && bits.test(7)) bits.set(0).reset(7);  // the day of week 7 is Sunday too
  std::bitset<N> out;
  for (std::size_t i = 0; i < N; ++i) out[i] = bits[i];
  return out;
}

bool CronSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::vector<std::string_view> CronWords(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && CronSpace(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !CronSpace(text[i])) ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

// ---- Time zones: the POSIX TZ string (RFC 8536 section 3.3)
//
// Read here rather than by Boost's posix_time_zone, which takes offsets with the opposite sign
// ("CET-1" as UTC-1), an explicit daylight-saving offset as the shift rather than the offset
// (Lord Howe's "<+11>-11"), and refuses what tzdata's footers use: `<+0545>` names, switch times
// outside 0-24 h (Jerusalem's "/26", Nuuk's "/-1", Gaza's "/50") and UTC+14 (Kiritimati).
// Boost's Gregorian calendar counts the days.

// Takes a zone abbreviation: letters, or `<...>` of letters, digits, '+' and '-'.
bool TzTakeName(std::string_view& s) {
  std::size_t n = 0;
  if (!s.empty() && s.front() == '<') {
    const std::size_t close = s.find('>');
    if (close == std::string_view::npos || close < 2) return false;
    const std::string_view inner = s.substr(1, close - 1);
    if (!std::all_of(inner.begin(), inner.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-';
        }))
      return false;
    n = close + 1;
  } else {
    while (n < s.size() && std::isalpha(static_cast<unsigned char>(s[n]))) ++n;
    if (n == 0) return false;
  }
  s.remove_prefix(n);
  return true;
}

// Takes a run of at most `max_digits` digits.
std::optional<int> TzTakeDigits(std::string_view& s, std::size_t max_digits) {
  std::size_t n = 0;
  while (n < s.size() && n < max_digits && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
  if (n == 0) return std::nullopt;
  const std::optional<int> value = CronNumber(s.substr(0, n));
  s.remove_prefix(n);
  return value;
}

// Takes `[+-]h[h[h]][:mm[:ss]]` as signed seconds, hours at most `max_hours`.
std::optional<int> TzTakeTime(std::string_view& s, int max_hours) {
  int sign = 1;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    sign = s.front() == '-' ? -1 : 1;
    s.remove_prefix(1);
  }
  const std::optional<int> hours = TzTakeDigits(s, 3);
  if (!hours || *hours > max_hours) return std::nullopt;
  int seconds = *hours * 3600;
  for (const int unit : {60, 1}) {
    if (s.empty() || s.front() != ':') break;
    s.remove_prefix(1);
    const std::optional<int> part = TzTakeDigits(s, 2);
    if (!part || *part > 59) return std::nullopt;
    seconds += *part * unit;
  }
  return sign * seconds;
}

bool TzTake(std::string_view& s, char c) {
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

}  // namespace

// The zone's current rule: a standard offset and, for a zone with daylight saving, the offset in
// daylight-saving time and the two yearly switches.
struct TimeZone::Rule {
  // A day of the year (`Jn`: 1-365 never counting February 29; `n`: 0-365 counting it;
  // `Mm.w.d`: weekday d of week w (5: the last) of month m) and a local time on it.
  struct Switch {
    char form = 'M';  // 'J', 'n' or 'M'
    int day = 0;      // Jn and n: the day; M: the weekday, 0 Sunday
    int month = 0;
    int week = 0;
    int time_s = 7200;  // local seconds after that day's midnight, -167 to 167 hours
  };
  // The offset in effect at an instant and the next switch.
  struct Span {
    int offset_s = 0;
    std::optional<std::int64_t> next_s;
  };

  int std_offset_s = 0;  // east of UTC
  bool has_dst = false;
  int dst_offset_s = 0;
  Switch start;  // into daylight saving, in standard time
  Switch end;    // out of it, in daylight-saving time

  static std::optional<Switch> TakeSwitch(std::string_view& s);
  static Result<Rule> Parse(std::string_view posix);
  // The instant (seconds since the epoch) of `sw` in `year`, read in `offset_s`.
  static std::int64_t SwitchAt(const Switch& sw, int year, int offset_s);
  Span At(std::int64_t utc_s) const;
};

std::optional<TimeZone::Rule::Switch> TimeZone::Rule::TakeSwitch(std::string_view& s) {
  Switch sw;
  std::optional<int> a, b, c;
  if (TzTake(s, 'M')) {
    sw.form = 'M';
    if (!(a = TzTakeDigits(s, 2)) || !TzTake(s, '.') || !(b = TzTakeDigits(s, 1)) ||
        !TzTake(s, '.') || !(c = TzTakeDigits(s, 1)))
      return std::nullopt;
    if (*a < 1 || *a > 12 || *b < 1 || *b > 5 || *c > 6) return std::nullopt;
    sw.month = *a;
    sw.week = *b;
    sw.day = *c;
  } else {
    sw.form = TzTake(s, 'J') ? 'J' : 'n';
    if (!(a = TzTakeDigits(s, 3)) || *a > 365 || (sw.form == 'J' && *a < 1)) return std::nullopt;
    sw.day = *a;
  }
  if (TzTake(s, '/')) {
    const std::optional<int> time = TzTakeTime(s, 167);
    if (!time) return std::nullopt;
    sw.time_s = *time;
  }
  return sw;
}

// `std offset [dst [offset] ,start[/time],end[/time]]`; an offset counts west of UTC.
Result<TimeZone::Rule> TimeZone::Rule::Parse(std::string_view posix) {
  const Status bad = Error(ErrorCode::kInvalidArgument,
                           "the POSIX time zone rule " + CronQuoted(posix) + " does not parse");
  std::string_view s = posix;
  Rule rule;
  std::optional<int> offset;
  if (!TzTakeName(s) || !(offset = TzTakeTime(s, 24))) return bad;
  rule.std_offset_s = -*offset;
  if (s.empty()) return rule;
  if (!TzTakeName(s)) return bad;
  rule.has_dst = true;
  rule.dst_offset_s = rule.std_offset_s + 3600;
  if (!s.empty() && s.front() != ',') {
    if (!(offset = TzTakeTime(s, 24))) return bad;
    rule.dst_offset_s = -*offset;
  }
  std::optional<Switch> start, end;
  if (!TzTake(s, ',') || !(start = TakeSwitch(s)) || !TzTake(s, ',') || !(end = TakeSwitch(s)) ||
      !s.empty())
    return bad;
  rule.start = *start;
  rule.end = *end;
  return rule;
}

std::int64_t TimeZone::Rule::SwitchAt(const Switch& sw, int year, int offset_s) {
  namespace greg = boost::gregorian;
  const greg::date jan1(static_cast<unsigned short>(year), 1, 1);
  greg::date day = jan1;
  if (sw.form == 'J') {
    const bool leap = greg::gregorian_calendar::is_leap_year(jan1.year());
    day = jan1 + greg::days(sw.day - 1 + ((leap && sw.day >= 60) ? 1 : 0));
  } else if (sw.form == 'n') {
    day = jan1 + greg::days(sw.day);
  } else {  // the first such weekday of the month, w - 1 weeks on, within the month (w 5: last)
    const greg::date first(jan1.year(), static_cast<unsigned short>(sw.month), 1);
    int d = 1 + (sw.day - first.day_of_week() + 7) % 7 + 7 * (sw.week - 1);
    while (d > first.end_of_month().day()) d -= 7;
    day = first + greg::days(d - 1);
  }
  return CronDayNumber(day) * kCronDaySeconds + sw.time_s - offset_s;
}

TimeZone::Rule::Span TimeZone::Rule::At(std::int64_t utc_s) const {
  if (!has_dst || !CronInSpan(utc_s + std_offset_s)) return {std_offset_s, std::nullopt};
  const int year = static_cast<int>(
      (CronEpoch() + boost::gregorian::days(CronFloorDiv(utc_s + std_offset_s, kCronDaySeconds)))
          .year());
  // The switches of the year before to the year after, in order; a switch out and a switch in at
  // one instant leave daylight saving on (a zone in daylight saving all year).
  std::array<std::pair<std::int64_t, bool>, 6> switches;
  for (std::size_t i = 0; i < 3; ++i) {
    const int y = year - 1 + static_cast<int>(i);
    switches[2 * i] = {SwitchAt(start, y, std_offset_s), true};
    switches[2 * i + 1] = {SwitchAt(end, y, dst_offset_s), false};
  }
  std::sort(switches.begin(), switches.end());
  Span span{std_offset_s, std::nullopt};
  for (const auto& [at, into_dst] : switches) {
    if (at > utc_s) {
      span.next_s = at;
      break;
    }
    span.offset_s = into_dst ? dst_offset_s : std_offset_s;
  }
  return span;
}

namespace {

Status TzCheckName(std::string_view name) {
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, "the time zone " + CronQuoted(name) + " " + why);
  };
  if (name.size() > kMaxZoneNameBytes) return bad("is longer than 128 bytes");
  if (!std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' ||
               c == '+' || c == '.';
      }))
    return bad("has a character other than letters, digits, '/', '_', '-' and '+'");
  if (name.find('.') != std::string_view::npos) return bad("has a '.'; zone names have none");
  if (name.front() == '/' || name.back() == '/' || name.find("//") != std::string_view::npos)
    return bad("is not a relative name like Europe/Berlin");
  return Status::Ok();
}

Result<std::string> TzReadFile(const std::filesystem::path& path, const std::string& name) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    return Error(ErrorCode::kNotFound, "no time zone " + CronQuoted(name) + " on this system");
  std::ifstream in(path, std::ios::binary);
  std::string data;
  std::array<char, 16 << 10> buffer;
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
    data.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (data.size() > kMaxZoneFileBytes) {
      return Error(ErrorCode::kInvalidArgument,
                   "the time zone file of " + CronQuoted(name) + " is over 1 MiB");
    }
  }
  if (!in.eof())
    return Error(ErrorCode::kNotFound,
                 "the time zone file of " + CronQuoted(name) + " is unreadable");
  return data;
}

// The POSIX TZ string of a TZif file of version 2 or later: its last line, between the last two
// newlines (RFC 8536 section 3.3; the string itself holds no newline).
Result<std::string_view> TzFooter(std::string_view data, const std::string& name) {
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument,
                 "the time zone file of " + CronQuoted(name) + " " + why);
  };
  if (!data.starts_with("TZif")) return bad("is not a TZif file");
  if (data.size() < 5 || data[4] < '2') return bad("is of TZif version 1, without a POSIX rule");
  const std::size_t open = data.size() >= 2 ? data.rfind('\n', data.size() - 2) : data.npos;
  if (data.back() != '\n' || open == std::string_view::npos)
    return bad("ends without a POSIX rule");
  const std::string_view footer = data.substr(open + 1, data.size() - open - 2);
  if (footer.empty()) return bad("has an empty POSIX rule");
  return footer;
}

bool CronDayMatches(const CronExpression& cron, int day, int weekday) {
  const bool by_month = cron.days_of_month[static_cast<std::size_t>(day)];
  const bool by_week = cron.days_of_week[static_cast<std::size_t>(weekday)];
  if (cron.any_day_of_month || cron.any_day_of_week) return by_month && by_week;
  return by_month || by_week;
}

// A local time, seconds since the epoch as if the zone were UTC, in calendar fields.
struct CronLocal {
  std::int64_t day_number;  // days since 1970-01-01
  int year, month, day, weekday, days_in_month;
  int second_of_day;
};

CronLocal CronLocalOf(std::int64_t local_s) {
  CronLocal local{};
  local.day_number = CronFloorDiv(local_s, kCronDaySeconds);
  local.second_of_day = static_cast<int>(local_s - local.day_number * kCronDaySeconds);
  const boost::gregorian::date date = CronEpoch() + boost::gregorian::days(local.day_number);
  const auto ymd = date.year_month_day();
  local.year = ymd.year;
  local.month = ymd.month;
  local.day = ymd.day;
  local.weekday = date.day_of_week();
  local.days_in_month = date.end_of_month().day();
  return local;
}

// The first matching month's first day after `local`'s month, as local seconds.
std::int64_t CronNextMonth(const CronExpression& cron, const CronLocal& local) {
  int year = local.year;
  int month = local.month;
  do {
    if (++month > 12) month = 1, ++year;
  } while (!cron.months[static_cast<std::size_t>(month)]);
  const boost::gregorian::date first(static_cast<unsigned short>(year),
                                     static_cast<unsigned short>(month), 1);
  return CronDayNumber(first) * kCronDaySeconds;
}

// Nullopt when `cron` matches the local time `local_s`; else the next local time at which it may,
// skipping only local times at which it does not.
std::optional<std::int64_t> CronSkip(const CronExpression& cron, std::int64_t local_s) {
  const CronLocal local = CronLocalOf(local_s);
  const std::int64_t midnight = local.day_number * kCronDaySeconds;
  if (!cron.months[static_cast<std::size_t>(local.month)]) return CronNextMonth(cron, local);
  if (!CronDayMatches(cron, local.day, local.weekday)) {
    for (int d = local.day + 1; d <= local.days_in_month; ++d) {
      if (CronDayMatches(cron, d, (local.weekday + d - local.day) % 7))
        return midnight + (d - local.day) * kCronDaySeconds;
    }
    return CronNextMonth(cron, local);
  }
  const int hour = local.second_of_day / 3600;
  if (!cron.hours[static_cast<std::size_t>(hour)]) {
    for (int h = hour + 1; h < 24; ++h) {
      if (cron.hours[static_cast<std::size_t>(h)]) return midnight + h * kCronHourSeconds;
    }
    return midnight + kCronDaySeconds;
  }
  const std::int64_t hour_start = midnight + hour * kCronHourSeconds;
  const int minute = local.second_of_day % 3600 / 60;
  if (cron.minutes[static_cast<std::size_t>(minute)]) return std::nullopt;
  for (int m = minute + 1; m < 60; ++m) {
    if (cron.minutes[static_cast<std::size_t>(m)]) return hour_start + m * std::int64_t{60};
  }
  return hour_start + kCronHourSeconds;
}

TimestampMs CronCeilToMinute(TimestampMs ms) {
  return -CronFloorDiv(-ms, kCronMinuteMs) * kCronMinuteMs;
}

}  // namespace

Result<CronExpression> ParseCron(std::string_view text) {
  if (text.size() > kMaxCronBytes)
    return Error(ErrorCode::kInvalidArgument, "a cron expression is at most 256 bytes");
  const std::vector<std::string_view> words = CronWords(text);
  if (words.size() != 5) {
    return Error(ErrorCode::kInvalidArgument,
                 "a cron expression has five fields (minute, hour, day of month, month, day of "
                 "week), not " +
                     std::to_string(words.size()));
  }
  CronExpression cron;
  AS_ASSIGN_OR_RETURN(cron.minutes, CronField<60>(words[0], kCronFields[0]));
  AS_ASSIGN_OR_RETURN(cron.hours, CronField<24>(words[1], kCronFields[1]));
  AS_ASSIGN_OR_RETURN(cron.days_of_month, CronField<32>(words[2], kCronFields[2]));
  AS_ASSIGN_OR_RETURN(cron.months, CronField<13>(words[3], kCronFields[3]));
  AS_ASSIGN_OR_RETURN(cron.days_of_week, CronField<7>(words[4], kCronFields[4]));
  cron.any_day_of_month = words[2].front() == '*';
  cron.any_day_of_week = words[4].front() == '*';
  cron.text.assign(words.front().data(), words.back().data() + words.back().size());
  return cron;
}

Result<TimeZone> TimeZone::Load(std::string_view name) {
  if (name.empty() || name == "UTC" || name == "Etc/UTC") return Utc();
  AS_RETURN_IF_ERROR(TzCheckName(name));
  const char* tzdir = std::getenv("TZDIR");
  const std::filesystem::path dir =
      (tzdir != nullptr && *tzdir != '\0') ? tzdir : "/usr/share/zoneinfo";
  TimeZone zone;
  zone.name_ = std::string(name);
  AS_ASSIGN_OR_RETURN(const std::string data, TzReadFile(dir / zone.name_, zone.name_));
  AS_ASSIGN_OR_RETURN(const std::string_view footer, TzFooter(data, zone.name_));
  AS_ASSIGN_OR_RETURN(Rule rule, Rule::Parse(footer));
  zone.rule_ = std::make_shared<const Rule>(rule);
  return zone;
}

TimeZone TimeZone::Utc() {
  TimeZone zone;
  zone.name_ = "UTC";
  return zone;
}

int TimeZone::OffsetSeconds(TimestampMs utc_ms) const {
  if (rule_ == nullptr) return 0;
  try {
    return rule_->At(CronFloorDiv(utc_ms, 1000)).offset_s;
  } catch (const std::exception&) {  // Boost's calendar; not reached within the span read
    return rule_->std_offset_s;
  }
}

std::optional<TimestampMs> TimeZone::NextTransition(TimestampMs utc_ms) const {
  if (rule_ == nullptr) return std::nullopt;
  try {
    const std::optional<std::int64_t> next_s = rule_->At(CronFloorDiv(utc_ms, 1000)).next_s;
    if (!next_s) return std::nullopt;
    return *next_s * 1000;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<TimestampMs> NextCronTick(const CronExpression& cron, const TimeZone& zone,
                                        TimestampMs after_ms) {
  if (!CronInSpan(CronFloorDiv(after_ms, 1000))) return std::nullopt;
  try {
    const TimestampMs horizon =
        std::min(after_ms + kCronTenYearsMs, kCronEndDay * kCronDaySeconds * 1000 - 1);
    TimestampMs t = CronFloorDiv(after_ms, kCronMinuteMs) * kCronMinuteMs + kCronMinuteMs;
    // Until `change` the offset stays `offset_s`, so local time runs on without a jump and a skip
    // over local times that do not match skips no instant that does.
    std::int64_t offset_s = zone.OffsetSeconds(t);
    std::optional<TimestampMs> change = zone.NextTransition(t);
    while (t <= horizon) {
      if (change && t >= *change) {
        offset_s = zone.OffsetSeconds(t);
        change = zone.NextTransition(t);
      }
      const std::optional<std::int64_t> skip_to = CronSkip(cron, t / 1000 + offset_s);
      if (!skip_to) return t;
      t = CronCeilToMinute(std::min((*skip_to - offset_s) * 1000, change.value_or(horizon + 1)));
    }
  } catch (const std::exception&) {  // Boost's calendar; not reached within the span read
  }
  return std::nullopt;
}

}  // namespace agentstream::server
