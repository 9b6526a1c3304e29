// Reading and checking what a client sent (stream_protocol_internal.h): the query's values, the
// integer and content-type forms of header values, and ISO 8601 times. Pure functions.
#include <algorithm>
#include <cctype>

#include "net/http_url.h"
#include "streams/stream_protocol.h"
#include "streams/stream_protocol_internal.h"

namespace agentstream::streams {

namespace {

constexpr std::uint64_t kMaxSafeInteger = 9007199254740991;  // 2^53 - 1, as clients parse it

std::optional<std::int64_t> DaysFromCivil(int y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era) * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

std::optional<std::string> StreamRequest::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return value;
  return std::nullopt;
}

namespace protocol_internal {

std::vector<std::string> QueryValues(std::string_view query, std::string_view key) {
  std::vector<std::string> values;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (net::PercentDecodeLenient(pair.substr(0, eq)) != key) continue;
    values.push_back(eq == std::string_view::npos ? std::string()
                                                  : net::PercentDecodeLenient(pair.substr(eq + 1)));
  }
  return values;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool CanonicalInteger(std::string_view s) {
  return AllDigits(s) && (s.size() == 1 || s[0] != '0') && s.size() <= 15;
}

std::optional<std::uint64_t> SafeInteger(std::string_view s) {
  if (!AllDigits(s) || s.size() > 16) return std::nullopt;
  const std::uint64_t v = std::stoull(std::string(s));
  if (v > kMaxSafeInteger) return std::nullopt;
  return v;
}

bool ValidContentType(std::string_view ct) {
  // ^[\w-]+/[\w-]+ as other servers check it.
  auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  };
  std::size_t i = 0;
  while (i < ct.size() && word(ct[i])) ++i;
  if (i == 0 || i >= ct.size() || ct[i] != '/') return false;
  return i + 1 < ct.size() && word(ct[i + 1]);
}

}  // namespace protocol_internal

using protocol_internal::AllDigits;

std::optional<std::int64_t> ParseIsoTime(std::string_view s) {
  auto num = [&](std::size_t pos, std::size_t len) -> std::optional<int> {
    if (pos + len > s.size() || !AllDigits(s.substr(pos, len))) return std::nullopt;
    return std::stoi(std::string(s.substr(pos, len)));
  };
  auto year = num(0, 4), month = num(5, 2), day = num(8, 2);
  if (!year || !month || !day || s.size() < 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31) return std::nullopt;
  std::int64_t ms =
      *DaysFromCivil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day)) * 86400000;
  if (s.size() == 10) return ms;
  if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return std::nullopt;
  auto hour = num(11, 2), minute = num(14, 2);
  if (!hour || !minute || s.size() < 16 || s[13] != ':' || *hour > 23 || *minute > 59)
    return std::nullopt;
  ms += (*hour * 3600LL + *minute * 60LL) * 1000;
  std::size_t i = 16;
  if (i < s.size() && s[i] == ':') {
    auto second = num(17, 2);
    if (!second || *second > 60) return std::nullopt;
    ms += *second * 1000LL;
    i = 19;
    if (i < s.size() && s[i] == '.') {
      std::size_t j = i + 1;
      std::int64_t frac = 0;
      int digits = 0;
      while (j < s.size() && s[j] >= '0' && s[j] <= '9') {
        if (digits < 3) frac = frac * 10 + (s[j] - '0'), ++digits;
        ++j;
      }
      if (j == i + 1) return std::nullopt;
      while (digits < 3) frac *= 10, ++digits;
      ms += frac;
      i = j;
    }
  }
  if (i == s.size()) return ms;  // local time: taken as UTC
  if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == s.size()) return ms;
  if ((s[i] == '+' || s[i] == '-') && i + 6 == s.size() && s[i + 3] == ':') {
    auto oh = num(i + 1, 2), om = num(i + 4, 2);
    if (!oh || !om) return std::nullopt;
    const std::int64_t off = (*oh * 60LL + *om) * 60000;
    return s[i] == '+' ? ms - off : ms + off;
  }
  return std::nullopt;
}

}  // namespace agentstream::streams
