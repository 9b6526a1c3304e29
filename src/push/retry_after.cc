// RetryAfterMs (sender.h): the Retry-After header of RFC 9110 section 10.2.3, as delay-seconds or
// an HTTP date in any of its three forms (section 5.6.7).
#include <algorithm>
#include <array>
#include <charconv>
#include <ctime>
#include <optional>
#include <vector>

#include "push/sender.h"

namespace agentstream::push {
namespace {

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kDays = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> kLongDays = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

std::optional<int> Number(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

template <std::size_t N>
bool Among(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT" or "Sun Nov  6 08:49:37
// 1994" as Unix seconds; nullopt for anything else.
std::optional<std::int64_t> ParseHttpDate(std::string_view text) {
  std::vector<std::string_view> tokens;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t end = text.find_first_of(" ,-", i);
    const std::string_view token = text.substr(i, end - i);
    if (!token.empty()) tokens.push_back(token);
    if (end == std::string_view::npos) break;
    i = end + 1;
  }
  std::tm tm{};
  int month = -1;
  std::vector<int> numbers;
  bool time = false;
  for (const std::string_view token : tokens) {
    if (const auto* m = std::find(kMonths.begin(), kMonths.end(), token); m != kMonths.end()) {
      month = static_cast<int>(m - kMonths.begin());
    } else if (token.size() == 8 && token[2] == ':' && token[5] == ':') {
      const auto h = Number(token.substr(0, 2));
      const auto mi = Number(token.substr(3, 2));
      const auto s = Number(token.substr(6, 2));
      if (!h || !mi || !s || *h > 23 || *mi > 59 || *s > 60) return std::nullopt;
      tm.tm_hour = *h;
      tm.tm_min = *mi;
      tm.tm_sec = *s;
      time = true;
    } else if (auto n = Number(token)) {
      numbers.push_back(*n);
    } else if (token != "GMT" && !Among(kDays, token) && !Among(kLongDays, token)) {
      return std::nullopt;
    }
  }
  if (month < 0 || !time || numbers.size() != 2) return std::nullopt;
  int day = numbers[0];
  int year = numbers[1];
  if (year < 100) year += year < 70 ? 2000 : 1900;  // RFC 850's two-digit years
  if (day < 1 || day > 31 || year < 1970 || year > 9999) return std::nullopt;
  tm.tm_mday = day;
  tm.tm_mon = month;
  tm.tm_year = year - 1900;
  return static_cast<std::int64_t>(timegm(&tm));
}

}  // namespace

std::int64_t RetryAfterMs(std::string_view value, std::int64_t now_unix_ms) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) return 0;
  std::int64_t delay_ms = 0;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    delay_ms = value.size() > 7 ? kMaxRetryAfterMs  // more than 115 days: the cap
                                : std::int64_t{*Number(value)} * 1000;
  } else if (std::optional<std::int64_t> at_s = ParseHttpDate(value)) {
    delay_ms = *at_s * 1000 - now_unix_ms;
  }
  return std::clamp<std::int64_t>(delay_ms, 0, kMaxRetryAfterMs);
}

}  // namespace agentstream::push
