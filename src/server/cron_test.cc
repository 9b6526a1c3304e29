// Cron expressions and time zones (server/cron.h): the parser's fields and errors, tick sequences
// in UTC and across daylight-saving switches in real zones (Europe/Berlin, America/New_York,
// Asia/Kolkata, Asia/Kathmandu), POSIX rules of unusual forms in TZif files written to a TZDIR of
// our own, every zone of this system against the C library, and NextCronTick against a
// minute-by-minute search.
#include "server/cron.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace agentstream::server {
namespace {

namespace chrono = std::chrono;
namespace fs = std::filesystem;

constexpr TimestampMs kCronTestMinute = 60'000;
constexpr TimestampMs kCronTestHour = 60 * kCronTestMinute;
constexpr TimestampMs kCronTestDay = 24 * kCronTestHour;

TimestampMs CronAt(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0) {
  const chrono::sys_days day{chrono::year{y} / chrono::month{mo} / chrono::day{d}};
  return chrono::duration_cast<chrono::milliseconds>(day.time_since_epoch()).count() +
         h * kCronTestHour + mi * kCronTestMinute + s * TimestampMs{1000};
}

// "2027-03-28T00:30Z" (seconds shown only when not zero).
std::string CronIso(TimestampMs ms) {
  const chrono::sys_time<chrono::milliseconds> t{chrono::milliseconds{ms}};
  const chrono::sys_days day = chrono::floor<chrono::days>(t);
  const chrono::year_month_day ymd{day};
  const chrono::hh_mm_ss time{t - day};
  char text[40];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()));
  std::string out = text;
  if (time.seconds().count() != 0 || time.subseconds().count() != 0)
    out += ":" + std::to_string(time.seconds().count());
  return out + "Z";
}

CronExpression ParsedCron(std::string_view text) {
  Result<CronExpression> parsed = ParseCron(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
  return parsed.ok() ? *parsed : CronExpression{};
}

TimeZone LoadedZone(std::string_view name) {
  Result<TimeZone> zone = TimeZone::Load(name);
  EXPECT_TRUE(zone.ok()) << name << ": " << zone.status().ToString();
  return zone.ok() ? *zone : TimeZone::Utc();
}

// The next `n` ticks after `after_ms`, each after the one before.
std::vector<std::string> CronTicks(std::string_view cron, const TimeZone& zone,
                                   TimestampMs after_ms, int n) {
  const CronExpression expression = ParsedCron(cron);
  std::vector<std::string> ticks;
  for (int i = 0; i < n; ++i) {
    const std::optional<TimestampMs> tick = NextCronTick(expression, zone, after_ms);
    if (!tick) break;
    ticks.push_back(CronIso(*tick));
    after_ms = *tick;
  }
  return ticks;
}

std::string CronErrorOf(std::string_view text) {
  Result<CronExpression> parsed = ParseCron(text);
  EXPECT_FALSE(parsed.ok()) << text;
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument) << text;
  return parsed.status().message();
}

std::vector<int> CronBits(const auto& bits) {
  std::vector<int> out;
  for (std::size_t i = 0; i < bits.size(); ++i)
    if (bits[i]) out.push_back(static_cast<int>(i));
  return out;
}

bool HaveZoneinfo() { return fs::exists("/usr/share/zoneinfo/Europe/Berlin"); }

TEST(CronParse, RangesListsStepsAndNames) {
  const CronExpression c = ParsedCron("*/15 0-5,10 1-31/10 jan,MAR-May sun-Tue");
  EXPECT_EQ(CronBits(c.minutes), (std::vector<int>{0, 15, 30, 45}));
  EXPECT_EQ(CronBits(c.hours), (std::vector<int>{0, 1, 2, 3, 4, 5, 10}));
  EXPECT_EQ(CronBits(c.days_of_month), (std::vector<int>{1, 11, 21, 31}));
  EXPECT_EQ(CronBits(c.months), (std::vector<int>{1, 3, 4, 5}));
  EXPECT_EQ(CronBits(c.days_of_week), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(c.text, "*/15 0-5,10 1-31/10 jan,MAR-May sun-Tue");

  EXPECT_EQ(CronBits(ParsedCron("5/15 * * * *").minutes), (std::vector<int>{5, 20, 35, 50}));
  EXPECT_EQ(CronBits(ParsedCron("10-50/20 * * * *").minutes), (std::vector<int>{10, 30, 50}));
  EXPECT_EQ(CronBits(ParsedCron("0 0 * * 7").days_of_week), (std::vector<int>{0}));
  EXPECT_EQ(CronBits(ParsedCron("0 0 * * 5-7").days_of_week), (std::vector<int>{0, 5, 6}));
  EXPECT_EQ(CronBits(ParsedCron("0 0 * * */2").days_of_week), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(CronBits(ParsedCron("0 0 * * 1/2").days_of_week), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(CronBits(ParsedCron("0 0 * DEC *").months), (std::vector<int>{12}));
  EXPECT_EQ(CronBits(ParsedCron("0 0 * * *").days_of_week).size(), 7u);
  EXPECT_EQ(CronBits(ParsedCron("0 0 * * *").days_of_month).size(), 31u);  // 1..31
  EXPECT_EQ(CronBits(ParsedCron("07 05 * * *").minutes), (std::vector<int>{7}));

  // Vixie: a day field that begins with `*` is unrestricted.
  const CronExpression star = ParsedCron("0 0 */2 * 1");
  EXPECT_TRUE(star.any_day_of_month);
  EXPECT_FALSE(star.any_day_of_week);
  EXPECT_FALSE(ParsedCron("0 0 13 * 5").any_day_of_month);
  EXPECT_TRUE(ParsedCron("0 0 * * *").any_day_of_week);
  EXPECT_TRUE(ParsedCron("0 0 1 * *,1").any_day_of_week);

  EXPECT_EQ(ParsedCron(" \t0  9\t* * 1-5 \n").text, "0  9\t* * 1-5");
}

TEST(CronParse, ErrorsNameTheField) {
  EXPECT_EQ(CronErrorOf("0 24 * * *"), "the hour field: 24 is out of range 0-23");
  EXPECT_EQ(CronErrorOf("60 * * * *"), "the minute field: 60 is out of range 0-59");
  EXPECT_EQ(CronErrorOf("* * 0 * *"), "the day-of-month field: 0 is out of range 1-31");
  EXPECT_EQ(CronErrorOf("* * 32 * *"), "the day-of-month field: 32 is out of range 1-31");
  EXPECT_EQ(CronErrorOf("* * * 13 *"), "the month field: 13 is out of range 1-12");
  EXPECT_EQ(CronErrorOf("* * * 0 *"), "the month field: 0 is out of range 1-12");
  EXPECT_EQ(CronErrorOf("* * * * 8"), "the day-of-week field: 8 is out of range 0-7");
  EXPECT_EQ(CronErrorOf("99999999999 * * * *"),
            "the minute field: 99999999999 is out of range 0-59");
  EXPECT_EQ(CronErrorOf("* * * foo *"), "the month field: unknown name \"foo\"");
  EXPECT_EQ(CronErrorOf("* * * jan-mon *"), "the month field: unknown name \"mon\"");
  EXPECT_EQ(CronErrorOf("* * * * mon-foo"), "the day-of-week field: unknown name \"foo\"");
  EXPECT_EQ(CronErrorOf("* mon * * *"), "the hour field: \"mon\" is not a number");
  EXPECT_EQ(CronErrorOf("*/0 * * * *"), "the minute field: a step of 0");
  EXPECT_EQ(CronErrorOf("* */x * * *"), "the hour field: the step \"x\" is not a number");
  EXPECT_EQ(CronErrorOf("* 1/ * * *"), "the hour field: the step \"\" is not a number");
  EXPECT_EQ(CronErrorOf("* * 20-10 * *"),
            "the day-of-month field: the range \"20-10\" ends before it starts");
  EXPECT_EQ(CronErrorOf("* * * * sat-sun"),
            "the day-of-week field: the range \"sat-sun\" ends before it starts");
  EXPECT_EQ(CronErrorOf("1,,2 * * * *"), "the minute field: an empty list item");
  EXPECT_EQ(CronErrorOf("1, * * * *"), "the minute field: an empty list item");
  EXPECT_EQ(CronErrorOf("a * * * *"), "the minute field: \"a\" is not a number");
  EXPECT_EQ(CronErrorOf("\xff\x01 * * * *"), "the minute field: \"??\" is not a number");
  for (const char* garbage : {"1.5 * * * *", "-5 * * * *", "L * * * *", "? * * * *",
                              "1-2-3 * * * *", "*-5 * * * *", "0x1 * * * *"}) {
    EXPECT_NE(CronErrorOf(garbage).find("the minute field: "), std::string::npos) << garbage;
  }
  EXPECT_EQ(CronErrorOf("* * * * mon#2"), "the day-of-week field: unknown name \"mon#2\"");
  EXPECT_EQ(CronErrorOf("* * 15W * *"), "the day-of-month field: \"15W\" is not a number");

  const std::string five =
      "a cron expression has five fields (minute, hour, day of month, "
      "month, day of week), not ";
  EXPECT_EQ(CronErrorOf("* * * * * *"), five + "6");
  EXPECT_EQ(CronErrorOf("* * * *"), five + "4");
  EXPECT_EQ(CronErrorOf(""), five + "0");
  EXPECT_EQ(CronErrorOf(" \t "), five + "0");
  EXPECT_EQ(CronErrorOf("@daily"), five + "1");

  std::string padded = "0 0 * * *";
  padded.resize(256, ' ');
  EXPECT_TRUE(ParseCron(padded).ok());
  padded += ' ';
  EXPECT_EQ(CronErrorOf(padded), "a cron expression is at most 256 bytes");
}

TEST(Cron, EveryFifteenMinutesInUtc) {
  EXPECT_EQ(CronTicks("*/15 * * * *", TimeZone::Utc(), CronAt(2026, 12, 6, 10, 7), 5),
            (std::vector<std::string>{"2026-12-06T10:15Z", "2026-12-06T10:30Z", "2026-12-06T10:45Z",
                                      "2026-12-06T11:00Z", "2026-12-06T11:15Z"}));
  EXPECT_EQ(CronTicks("59 23 31 12 *", TimeZone::Utc(), CronAt(2026, 12, 6), 2),
            (std::vector<std::string>{"2026-12-31T23:59Z", "2027-12-31T23:59Z"}));
}

TEST(Cron, AfterIsExclusive) {
  const CronExpression every = ParsedCron("* * * * *");
  const TimeZone utc = TimeZone::Utc();
  EXPECT_EQ(CronIso(*NextCronTick(every, utc, CronAt(2026, 12, 6, 10, 0))), "2026-12-06T10:01Z");
  EXPECT_EQ(CronIso(*NextCronTick(every, utc, CronAt(2026, 12, 6, 10, 0, 30))),
            "2026-12-06T10:01Z");
  EXPECT_EQ(CronIso(*NextCronTick(every, utc, CronAt(2026, 12, 6, 10, 0) - 1)),
            "2026-12-06T10:00Z");
  const CronExpression nine = ParsedCron("0 9 * * *");
  EXPECT_EQ(CronIso(*NextCronTick(nine, utc, CronAt(2026, 12, 6, 9, 0))), "2026-12-07T09:00Z");
  EXPECT_EQ(CronIso(*NextCronTick(nine, utc, CronAt(2026, 12, 6, 8, 59, 59) + 999)),
            "2026-12-06T09:00Z");
  // Before 1970 too (times are floored, not truncated).
  EXPECT_EQ(CronIso(*NextCronTick(every, utc, CronAt(1969, 12, 31, 23, 59, 30))),
            "1970-01-01T00:00Z");
}

TEST(Cron, TheDayFieldsFollowVixie) {
  const TimeZone utc = TimeZone::Utc();
  // Both restricted: the 13th, and every Friday.
  EXPECT_EQ(CronTicks("0 0 13 * 5", utc, CronAt(2026, 11, 1), 8),
            (std::vector<std::string>{"2026-11-06T00:00Z", "2026-11-13T00:00Z", "2026-11-20T00:00Z",
                                      "2026-11-27T00:00Z", "2026-12-04T00:00Z", "2026-12-11T00:00Z",
                                      "2026-12-13T00:00Z", "2026-12-18T00:00Z"}));
  // The day of month begins with `*`: odd-numbered days that are also Mondays.
  EXPECT_EQ(CronTicks("0 0 */2 * 1", utc, CronAt(2026, 11, 1), 4),
            (std::vector<std::string>{"2026-11-09T00:00Z", "2026-11-23T00:00Z", "2026-12-07T00:00Z",
                                      "2026-12-21T00:00Z"}));
  EXPECT_EQ(CronTicks("0 0 13 * *", utc, CronAt(2026, 11, 1), 2),
            (std::vector<std::string>{"2026-11-13T00:00Z", "2026-12-13T00:00Z"}));
  EXPECT_EQ(CronTicks("0 0 * * fri", utc, CronAt(2026, 11, 1), 2),
            (std::vector<std::string>{"2026-11-06T00:00Z", "2026-11-13T00:00Z"}));
}

TEST(Cron, WeekdaysSkipTheWeekend) {
  // 2026-12-04 is a Friday.
  EXPECT_EQ(
      CronTicks("0 9 * * 1-5", TimeZone::Utc(), CronAt(2026, 12, 4, 9, 0), 3),
      (std::vector<std::string>{"2026-12-07T09:00Z", "2026-12-08T09:00Z", "2026-12-09T09:00Z"}));
  EXPECT_EQ(CronTicks("0 9 * * mon-fri", TimeZone::Utc(), CronAt(2026, 12, 4, 8, 0), 2),
            (std::vector<std::string>{"2026-12-04T09:00Z", "2026-12-07T09:00Z"}));
}

TEST(Cron, NeverAndLeapDays) {
  const TimeZone utc = TimeZone::Utc();
  const auto started = chrono::steady_clock::now();
  EXPECT_EQ(NextCronTick(ParsedCron("0 0 30 2 *"), utc, CronAt(2026, 12, 6)), std::nullopt);
  const auto took = chrono::steady_clock::now() - started;
  EXPECT_LT(took, chrono::milliseconds(20))
      << chrono::duration_cast<chrono::microseconds>(took).count() << " us";
  EXPECT_EQ(NextCronTick(ParsedCron("0 0 31 4,6,9,11 *"), utc, CronAt(2026, 12, 6)), std::nullopt);
  EXPECT_EQ(CronTicks("0 0 29 2 *", utc, CronAt(2026, 12, 6), 2),
            (std::vector<std::string>{"2028-02-29T00:00Z", "2032-02-29T00:00Z"}));
  // 2100 is not a leap year: eight years between February 29ths, within the ten looked at.
  EXPECT_EQ(CronTicks("0 0 29 2 *", utc, CronAt(2096, 3, 1), 1),
            (std::vector<std::string>{"2104-02-29T00:00Z"}));
  EXPECT_EQ(
      CronTicks("0 0 31 * *", utc, CronAt(2027, 1, 31), 3),
      (std::vector<std::string>{"2027-03-31T00:00Z", "2027-05-31T00:00Z", "2027-07-31T00:00Z"}));
}

TEST(Cron, OutsideTheYearsRead) {
  const CronExpression every = ParsedCron("* * * * *");
  EXPECT_EQ(NextCronTick(every, TimeZone::Utc(), CronAt(9000, 1, 1)), std::nullopt);
  EXPECT_EQ(NextCronTick(every, TimeZone::Utc(), CronAt(8999, 12, 31, 23, 59)), std::nullopt);
  EXPECT_EQ(NextCronTick(ParsedCron("0 0 1 1 *"), TimeZone::Utc(), CronAt(8995, 1, 1)),
            CronAt(8996, 1, 1));
  EXPECT_EQ(NextCronTick(every, TimeZone::Utc(), CronAt(1899, 12, 31)), std::nullopt);
  EXPECT_EQ(NextCronTick(every, TimeZone::Utc(), std::numeric_limits<TimestampMs>::max()),
            std::nullopt);
  EXPECT_EQ(NextCronTick(every, TimeZone::Utc(), std::numeric_limits<TimestampMs>::min()),
            std::nullopt);
  EXPECT_EQ(NextCronTick(every, TimeZone::Utc(), CronAt(8999, 12, 31, 23, 58)),
            CronAt(8999, 12, 31, 23, 59));
  EXPECT_EQ(NextCronTick(every, TimeZone::Utc(), CronAt(1900, 1, 1)), CronAt(1900, 1, 1, 0, 1));
}

TEST(TimeZone, UtcByItsNames) {
  for (const char* name : {"UTC", "", "Etc/UTC"}) {
    Result<TimeZone> zone = TimeZone::Load(name);
    ASSERT_TRUE(zone.ok()) << name;
    EXPECT_EQ(zone->name(), "UTC");
    EXPECT_EQ(zone->OffsetSeconds(CronAt(2027, 7, 1)), 0);
    EXPECT_EQ(zone->NextTransition(CronAt(2027, 7, 1)), std::nullopt);
  }
  EXPECT_EQ(TimeZone::Utc().name(), "UTC");
}

TEST(TimeZone, NamesAreChecked) {
  for (const std::string& name : std::vector<std::string>{
           "../etc/passwd", "/etc/passwd", "Europe/../../etc/passwd", "Europe//Berlin",
           "Europe/Berlin/", "Europe/Berlin ", "a\nb", "Europe/./Berlin", std::string(129, 'a')}) {
    Result<TimeZone> zone = TimeZone::Load(name);
    ASSERT_FALSE(zone.ok()) << name;
    EXPECT_EQ(zone.status().code(), ErrorCode::kInvalidArgument) << name;
  }
  EXPECT_NE(TimeZone::Load("/etc/passwd").status().message().find("relative"), std::string::npos);
  if (!HaveZoneinfo()) GTEST_SKIP() << "no tzdata in /usr/share/zoneinfo";
  EXPECT_EQ(TimeZone::Load("Mars/Olympus_Mons").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(TimeZone::Load("Europe").status().code(), ErrorCode::kNotFound);        // a directory
  EXPECT_EQ(LoadedZone("Etc/GMT+5").OffsetSeconds(CronAt(2027, 1, 1)), -5 * 3600);  // POSIX's sign
}

class TimeZoneSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveZoneinfo()) GTEST_SKIP() << "no tzdata in /usr/share/zoneinfo";
  }
};

TEST_F(TimeZoneSystemTest, BerlinOffsetsAndSwitches) {
  const TimeZone berlin = LoadedZone("Europe/Berlin");
  EXPECT_EQ(berlin.name(), "Europe/Berlin");
  EXPECT_EQ(berlin.OffsetSeconds(CronAt(2027, 1, 15)), 3600);
  EXPECT_EQ(berlin.OffsetSeconds(CronAt(2027, 7, 15)), 7200);
  // 2027-03-28 02:00 CET and 2027-10-31 03:00 CEST, both 01:00 UTC.
  EXPECT_EQ(berlin.OffsetSeconds(CronAt(2027, 3, 28, 1) - 1), 3600);
  EXPECT_EQ(berlin.OffsetSeconds(CronAt(2027, 3, 28, 1)), 7200);
  EXPECT_EQ(berlin.OffsetSeconds(CronAt(2027, 10, 31, 1) - 1), 7200);
  EXPECT_EQ(berlin.OffsetSeconds(CronAt(2027, 10, 31, 1)), 3600);
  EXPECT_EQ(CronIso(*berlin.NextTransition(CronAt(2027, 1, 1))), "2027-03-28T01:00Z");
  EXPECT_EQ(CronIso(*berlin.NextTransition(CronAt(2027, 3, 28, 1) - 1)), "2027-03-28T01:00Z");
  EXPECT_EQ(CronIso(*berlin.NextTransition(CronAt(2027, 3, 28, 1))), "2027-10-31T01:00Z");
  EXPECT_EQ(CronIso(*berlin.NextTransition(CronAt(2027, 11, 1))), "2028-03-26T01:00Z");
}

TEST_F(TimeZoneSystemTest, BerlinSkipsTheLostHourAndRepeatsTheDoubledOne) {
  const TimeZone berlin = LoadedZone("Europe/Berlin");
  // 2027-03-28: 02:30 does not happen; the next day's 02:30 CEST is 00:30 UTC.
  EXPECT_EQ(
      CronTicks("30 2 * * *", berlin, CronAt(2027, 3, 26, 12), 3),
      (std::vector<std::string>{"2027-03-27T01:30Z", "2027-03-29T00:30Z", "2027-03-30T00:30Z"}));
  // 2027-10-31: 02:30 happens in CEST and again in CET.
  EXPECT_EQ(CronTicks("30 2 * * *", berlin, CronAt(2027, 10, 29, 12), 4),
            (std::vector<std::string>{"2027-10-30T00:30Z", "2027-10-31T00:30Z", "2027-10-31T01:30Z",
                                      "2027-11-01T01:30Z"}));
  EXPECT_EQ(CronTicks("*/20 2 31 10 *", berlin, CronAt(2027, 10, 30), 7),
            (std::vector<std::string>{"2027-10-31T00:00Z", "2027-10-31T00:20Z", "2027-10-31T00:40Z",
                                      "2027-10-31T01:00Z", "2027-10-31T01:20Z", "2027-10-31T01:40Z",
                                      "2028-10-31T01:00Z"}));
  const auto started = chrono::steady_clock::now();
  EXPECT_EQ(NextCronTick(ParsedCron("0 0 30 2 *"), berlin, CronAt(2026, 12, 6)), std::nullopt);
  const auto took = chrono::steady_clock::now() - started;
  EXPECT_LT(took, chrono::milliseconds(20))
      << chrono::duration_cast<chrono::microseconds>(took).count() << " us";
}

TEST_F(TimeZoneSystemTest, NewYorkNineOClockAcrossBothSwitches) {
  const TimeZone new_york = LoadedZone("America/New_York");
  // 2027: EDT from 2027-03-14, EST again from 2027-11-07.
  EXPECT_EQ(
      CronTicks("0 9 * * *", new_york, CronAt(2027, 3, 12, 15), 3),
      (std::vector<std::string>{"2027-03-13T14:00Z", "2027-03-14T13:00Z", "2027-03-15T13:00Z"}));
  EXPECT_EQ(
      CronTicks("0 9 * * *", new_york, CronAt(2027, 11, 5, 15), 3),
      (std::vector<std::string>{"2027-11-06T13:00Z", "2027-11-07T14:00Z", "2027-11-08T14:00Z"}));
  EXPECT_EQ(new_york.OffsetSeconds(CronAt(2027, 1, 1)), -5 * 3600);
  EXPECT_EQ(new_york.OffsetSeconds(CronAt(2027, 7, 1)), -4 * 3600);
}

TEST_F(TimeZoneSystemTest, HalfAndQuarterHourZones) {
  const TimeZone kolkata = LoadedZone("Asia/Kolkata");  // IST-5:30
  EXPECT_EQ(kolkata.OffsetSeconds(CronAt(2027, 1, 1)), 5 * 3600 + 1800);
  EXPECT_EQ(kolkata.NextTransition(CronAt(2027, 1, 1)), std::nullopt);
  EXPECT_EQ(CronTicks("0 9 * * *", kolkata, CronAt(2027, 1, 1), 2),
            (std::vector<std::string>{"2027-01-01T03:30Z", "2027-01-02T03:30Z"}));
  const TimeZone kathmandu = LoadedZone("Asia/Kathmandu");  // <+0545>-5:45
  EXPECT_EQ(kathmandu.OffsetSeconds(CronAt(2027, 1, 1)), 5 * 3600 + 45 * 60);
  EXPECT_EQ(CronTicks("0 9 * * *", kathmandu, CronAt(2027, 1, 1), 2),
            (std::vector<std::string>{"2027-01-01T03:15Z", "2027-01-02T03:15Z"}));
  EXPECT_EQ(CronTicks("0 0 1 1 *", kathmandu, CronAt(2027, 1, 1), 1),
            (std::vector<std::string>{"2027-12-31T18:15Z"}));
}

// Every zone of this system loads, and its offsets and switches from 2026 to 2031 are the C
// library's (which reads the same files).
TEST_F(TimeZoneSystemTest, EveryZoneAgreesWithTheCLibrary) {
  const char* saved_tz = std::getenv("TZ");
  const std::string saved = saved_tz ? saved_tz : "";
  const auto libc_offset = [](TimestampMs ms) {
    const time_t seconds = static_cast<time_t>(ms / 1000);
    struct tm local {};
    localtime_r(&seconds, &local);
    return static_cast<int>(local.tm_gmtoff);
  };
  const fs::path root = "/usr/share/zoneinfo";
  std::size_t zones = 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = fs::relative(it->path(), root).string();
    if (it->is_directory() && (name == "posix" || name == "right")) it.disable_recursion_pending();
    if (!it->is_regular_file()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    char magic[4] = {};
    if (!in.read(magic, 4) || std::string_view(magic, 4) != "TZif") continue;
    const TimeZone zone = LoadedZone(name);
    ++zones;
    ::setenv("TZ", name.c_str(), 1);
    ::tzset();
    TimestampMs t = CronAt(2026, 1, 1);
    for (int step = 0; step < 40 && t < CronAt(2031, 1, 1); ++step) {
      ASSERT_EQ(zone.OffsetSeconds(t), libc_offset(t)) << name << " at " << CronIso(t);
      const std::optional<TimestampMs> next = zone.NextTransition(t);
      if (!next) {
        ASSERT_EQ(zone.OffsetSeconds(CronAt(2030, 7, 1)), libc_offset(CronAt(2030, 7, 1))) << name;
        break;
      }
      ASSERT_GT(*next, t);
      const TimestampMs middle = t + (*next - t) / 2;
      ASSERT_EQ(zone.OffsetSeconds(middle), libc_offset(middle))
          << name << " at " << CronIso(middle);
      ASSERT_EQ(zone.OffsetSeconds(*next - 1000), libc_offset(*next - 1000))
          << name << " before " << CronIso(*next);
      t = *next;
    }
  }
  saved_tz ? ::setenv("TZ", saved.c_str(), 1) : ::unsetenv("TZ");
  ::tzset();
  EXPECT_GT(zones, 300u);
}

// A TZDIR of our own, with TZif files of chosen POSIX rules.
class TimeZoneFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* saved = std::getenv("TZDIR");
    saved_ = saved ? std::optional<std::string>(saved) : std::nullopt;
    dir_ = fs::temp_directory_path() /
           ("cron_test_tzdir_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "Test");
    ::setenv("TZDIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    saved_ ? ::setenv("TZDIR", saved_->c_str(), 1) : ::unsetenv("TZDIR");
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  void Write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
  // A TZif file of `version` with no transitions, one type and the POSIX rule `footer`.
  static std::string Tzif(const std::string& footer, char version = '2') {
    const auto block = [version] {
      std::string header = std::string("TZif") + version + std::string(15, '\0');
      for (const int count : {0, 0, 0, 0, 1, 4}) {  // isut, isstd, leap, time, type, char
        header += std::string{'\0', '\0', '\0', static_cast<char>(count)};
      }
      return header + std::string(6, '\0') + std::string("UTC\0", 4);
    };
    if (version == '\0') return block();
    return block() + block() + "\n" + footer + "\n";
  }
  Result<TimeZone> LoadRule(const std::string& footer) {
    Write("Test/Rule", Tzif(footer));
    return TimeZone::Load("Test/Rule");
  }
  TimeZone Rule(const std::string& footer) {
    Result<TimeZone> zone = LoadRule(footer);
    EXPECT_TRUE(zone.ok()) << footer << ": " << zone.status().ToString();
    return zone.ok() ? *zone : TimeZone::Utc();
  }
  std::vector<std::string> Switches(const TimeZone& zone, TimestampMs from, int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) {
      const std::optional<TimestampMs> next = zone.NextTransition(from);
      if (!next) break;
      out.push_back(CronIso(*next) + " " + std::to_string(zone.OffsetSeconds(*next)));
      from = *next;
    }
    return out;
  }

  fs::path dir_;
  std::optional<std::string> saved_;
};

TEST_F(TimeZoneFilesTest, FilesThatAreNotZonesAreRefused) {
  const auto refused = [](const std::string& name) {
    Result<TimeZone> zone = TimeZone::Load(name);
    EXPECT_FALSE(zone.ok()) << name;
    EXPECT_EQ(zone.status().code(), ErrorCode::kInvalidArgument) << name;
    return zone.status().message();
  };
  Write("Test/Junk", "this is not a time zone\n");
  EXPECT_NE(refused("Test/Junk").find("not a TZif file"), std::string::npos);
  Write("Test/Version1", Tzif("", '\0'));
  EXPECT_NE(refused("Test/Version1").find("version 1"), std::string::npos);
  Write("Test/Empty", Tzif(""));
  EXPECT_NE(refused("Test/Empty").find("empty POSIX rule"), std::string::npos);
  Write("Test/Cut", Tzif("CET-1").substr(0, Tzif("CET-1").size() - 1));
  EXPECT_NE(refused("Test/Cut").find("without a POSIX rule"), std::string::npos);
  Write("Test/Huge", Tzif("UTC0") + std::string(std::size_t{1} << 20, '\n'));
  EXPECT_NE(refused("Test/Huge").find("over 1 MiB"), std::string::npos);
  Write("Test/Nothing", "");
  EXPECT_NE(refused("Test/Nothing").find("not a TZif file"), std::string::npos);
  for (const char* rule :
       {"garbage", "CET", "-1", "CET-1CEST", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0",
        "CET-1CEST,M3.6.0,M10.5.0", "CET-1CEST,M3.5.7,M10.5.0", "CET-1CEST,M3.5.0,M10.5.0/168",
        "CET-25", "CET-1:60", "<+01-1", "<>-1", "<+0 1>-1", "X0Y,J0,J365", "X0Y,366,1",
        "CET-1CEST,M3.5.0,M10.5.0,", "CET-1 ", "CET-1CEST-2x,M3.5.0,M10.5.0"}) {
    Result<TimeZone> zone = LoadRule(rule);
    EXPECT_FALSE(zone.ok()) << rule;
    EXPECT_EQ(zone.status().code(), ErrorCode::kInvalidArgument) << rule;
  }
  EXPECT_EQ(TimeZone::Load("Europe/Berlin").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(TimeZone::Load("Test").status().code(), ErrorCode::kNotFound);
}

TEST_F(TimeZoneFilesTest, RulesOfEveryForm) {
  // Angle-bracketed names and a whole-year offset east of UTC+12.
  EXPECT_EQ(Rule("<+14>-14").OffsetSeconds(CronAt(2027, 1, 1)), 14 * 3600);
  EXPECT_EQ(Rule("<-12>12").OffsetSeconds(CronAt(2027, 1, 1)), -12 * 3600);
  EXPECT_EQ(Rule("ABC-1:02:03").OffsetSeconds(CronAt(2027, 1, 1)), 3723);
  // The southern hemisphere, a 30-minute daylight saving given as the absolute offset.
  const TimeZone lord_howe = Rule("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0");
  EXPECT_EQ(Switches(lord_howe, CronAt(2027, 1, 1), 3),
            (std::vector<std::string>{"2027-04-03T15:00Z 37800", "2027-10-02T15:30Z 39600",
                                      "2028-04-01T15:00Z 37800"}));
  EXPECT_EQ(lord_howe.OffsetSeconds(CronAt(2027, 1, 1)), 39600);
  // Daylight saving of two hours; a negative one (Dublin's winter "GMT" as its DST).
  EXPECT_EQ(Switches(Rule("<+00>0<+02>-2,M3.5.0/1,M10.5.0/3"), CronAt(2027, 1, 1), 2),
            (std::vector<std::string>{"2027-03-28T01:00Z 7200", "2027-10-31T01:00Z 0"}));
  const TimeZone dublin = Rule("IST-1GMT0,M10.5.0,M3.5.0/1");
  EXPECT_EQ(Switches(dublin, CronAt(2027, 1, 1), 2),
            (std::vector<std::string>{"2027-03-28T01:00Z 3600", "2027-10-31T01:00Z 0"}));
  // Switch times outside 0-24 h: Jerusalem's 26:00, Nuuk's -1:00, Gaza's 50:00.
  EXPECT_EQ(Switches(Rule("IST-2IDT,M3.4.4/26,M10.5.0"), CronAt(2027, 1, 1), 2),
            (std::vector<std::string>{"2027-03-26T00:00Z 10800", "2027-10-30T23:00Z 7200"}));
  EXPECT_EQ(Switches(Rule("<-02>2<-01>,M3.5.0/-1,M10.5.0/0"), CronAt(2027, 1, 1), 2),
            (std::vector<std::string>{"2027-03-28T01:00Z -3600", "2027-10-31T01:00Z -7200"}));
  EXPECT_EQ(Switches(Rule("EET-2EEST,M3.4.4/50,M10.4.4/50"), CronAt(2027, 1, 1), 2),
            (std::vector<std::string>{"2027-03-27T00:00Z 10800", "2027-10-29T23:00Z 7200"}));
  // Julian days: J60 is March 1 every year; 59 is February 29 in a leap year.
  EXPECT_EQ(Switches(Rule("A0B,J60/0,J300/0"), CronAt(2028, 1, 1), 1),
            (std::vector<std::string>{"2028-03-01T00:00Z 3600"}));
  EXPECT_EQ(Switches(Rule("A0B,59/0,300/0"), CronAt(2028, 1, 1), 1),
            (std::vector<std::string>{"2028-02-29T00:00Z 3600"}));
  EXPECT_EQ(Switches(Rule("A0B,59/0,300/0"), CronAt(2027, 1, 1), 1),
            (std::vector<std::string>{"2027-03-01T00:00Z 3600"}));
  // Daylight saving all year (RFC 8536's example): never standard time.
  const TimeZone always = Rule("EST5EDT,0/0,J365/25");
  for (const TimestampMs t :
       {CronAt(2027, 1, 1, 4, 59), CronAt(2027, 1, 1, 5), CronAt(2027, 1, 1, 6), CronAt(2027, 7, 1),
        CronAt(2027, 12, 31, 23)}) {
    EXPECT_EQ(always.OffsetSeconds(t), -4 * 3600) << CronIso(t);
  }
}

TEST_F(TimeZoneFilesTest, CronInAHalfHourDaylightSaving) {
  // Lord Howe, 2027-10-03 02:00 local becomes 02:30: 02:00-02:29 do not happen; on 2028-04-02
  // 01:30-01:59 happen twice.
  const TimeZone lord_howe = Rule("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0");
  EXPECT_EQ(
      CronTicks("15,45 2 * * *", lord_howe, CronAt(2027, 10, 2, 12), 3),
      (std::vector<std::string>{"2027-10-02T15:45Z", "2027-10-03T15:15Z", "2027-10-03T15:45Z"}));
  EXPECT_EQ(CronTicks("45 1 2 4 *", lord_howe, CronAt(2028, 4, 1), 2),
            (std::vector<std::string>{"2028-04-01T14:45Z", "2028-04-01T15:15Z"}));
}

// NextCronTick agrees with a search minute by minute, for random expressions in zones with and
// without daylight saving, from random times near a switch.
RC_GTEST_PROP(CronProperty, MatchesAMinuteByMinuteSearch, ()) {
  if (!HaveZoneinfo()) RC_DISCARD("no tzdata");
  const auto field = [](int low, int high) {
    const int a = *rc::gen::inRange(low, high + 1);
    const int b = *rc::gen::inRange(a, high + 1);
    switch (*rc::gen::inRange(0, 6)) {
      case 0:
        return std::string("*");
      case 1:
        return "*/" + std::to_string(*rc::gen::inRange(1, 8));
      case 2:
        return std::to_string(a);
      case 3:
        return std::to_string(a) + "-" + std::to_string(b);
      case 4:
        return std::to_string(a) + "," + std::to_string(b);
      default:
        return std::to_string(a) + "-" + std::to_string(b) + "/" +
               std::to_string(*rc::gen::inRange(1, 4));
    }
  };
  const std::string text = field(0, 59) + " " + (*rc::gen::inRange(0, 2) ? "*" : field(0, 23)) +
                           " " + (*rc::gen::inRange(0, 2) ? "*" : field(1, 31)) + " * " +
                           (*rc::gen::inRange(0, 2) ? "*" : field(0, 7));
  Result<CronExpression> parsed = ParseCron(text);
  RC_ASSERT(parsed.ok());
  const CronExpression& cron = *parsed;
  const char* names[] = {"UTC",
                         "Europe/Berlin",
                         "America/New_York",
                         "Australia/Lord_Howe",
                         "Antarctica/Troll",
                         "Asia/Kathmandu",
                         "America/Santiago"};
  Result<TimeZone> zone = TimeZone::Load(names[*rc::gen::inRange(0, 7)]);
  RC_ASSERT(zone.ok());
  const TimestampMs base = CronAt(2026, 1, 1) + *rc::gen::inRange(0, 4 * 365) * kCronTestDay;
  const std::optional<TimestampMs> switch_at = zone->NextTransition(base);
  const TimestampMs after = (switch_at ? *switch_at : base) +
                            *rc::gen::inRange(-48 * 3600, 12 * 3600) * TimestampMs{1000} +
                            *rc::gen::inRange(0, 1000);
  const auto matches = [&](TimestampMs t) {
    const TimestampMs local = t + zone->OffsetSeconds(t) * TimestampMs{1000};
    const chrono::sys_time<chrono::milliseconds> time{chrono::milliseconds{local}};
    const chrono::sys_days day = chrono::floor<chrono::days>(time);
    const chrono::year_month_day ymd{day};
    const chrono::hh_mm_ss hms{time - day};
    const bool dom = cron.days_of_month[static_cast<unsigned>(ymd.day())];
    const bool dow = cron.days_of_week[chrono::weekday{day}.c_encoding()];
    const bool day_ok = (cron.any_day_of_month || cron.any_day_of_week) ? dom && dow : dom || dow;
    return cron.months[static_cast<unsigned>(ymd.month())] && day_ok &&
           cron.hours[static_cast<std::size_t>(hms.hours().count())] &&
           cron.minutes[static_cast<std::size_t>(hms.minutes().count())];
  };
  const TimestampMs first = (after / kCronTestMinute + 1) * kCronTestMinute;
  const TimestampMs window_end = first + 3 * kCronTestDay;
  std::optional<TimestampMs> expected;
  for (TimestampMs t = first; t < window_end; t += kCronTestMinute) {
    if (matches(t)) {
      expected = t;
      break;
    }
  }
  const std::optional<TimestampMs> got = NextCronTick(cron, *zone, after);
  if (expected) {
    RC_ASSERT(got.has_value());
    RC_ASSERT(CronIso(*got) == CronIso(*expected));
  } else {
    RC_ASSERT(!got.has_value() || *got >= window_end);
  }
}

}  // namespace
}  // namespace agentstream::server
