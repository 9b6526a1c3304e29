#include "log/line_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <ctime>

#include "core/utf8.h"

namespace agentstream::log {

namespace {

constexpr std::string_view kCut = "...";
constexpr std::string_view kMask = "***";

// Valid UTF-8, secrets masked, at most kMaxValueBytes plus the cut mark.
std::string Clean(const std::string& text, std::span<const std::string> secrets) {
  std::string out = text;
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (std::size_t at = out.find(secret); at != std::string::npos;
         at = out.find(secret, at + kMask.size()))
      out.replace(at, secret.size(), kMask);
  }
  BoundedText bounded = BoundUtf8(out, kMaxValueBytes);
  if (bounded.truncated) bounded.text += kCut;
  return std::move(bounded.text);
}

bool IsBare(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("-_.:/@+,").find(c) != std::string_view::npos;
  });
}

std::string Quoted(std::string_view text) {
  return boost::json::serialize(boost::json::string(text));
}

void AppendValue(Format format, const Value& value, std::span<const std::string> secrets,
                 std::string* out) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          const std::string text = Clean(v, secrets);
          *out += format == Format::kText && IsBare(text) ? text : Quoted(text);
        } else if constexpr (std::is_same_v<T, bool>) {
          *out += v ? "true" : "false";
        } else {
          *out += fmt::to_string(v);
        }
      },
      value.get());
}

void AppendField(Format format, const Field& field, std::span<const std::string> secrets,
                 std::string* out) {
  if (format == Format::kText) {
    *out += ' ';
    *out += field.key;
    *out += '=';
  } else {
    *out += ',';
    *out += Quoted(field.key);
    *out += ':';
  }
  AppendValue(format, field.value, secrets, out);
}

}  // namespace

std::string FormatBody(Format format, std::string_view event, std::span<const Field> scope,
                       std::span<const Field> fields, std::span<const std::string> secrets) {
  std::string out = format == Format::kText ? std::string(event) : "\"event\":" + Quoted(event);
  const auto find = [](std::span<const Field> in, const std::string& key) {
    return std::find_if(in.begin(), in.end(), [&](const Field& f) { return f.key == key; });
  };
  for (const Field& f : scope) {
    auto own = find(fields, f.key);
    AppendField(format, own != fields.end() ? *own : f, secrets, &out);
  }
  for (const Field& f : fields)
    if (find(scope, f.key) == scope.end()) AppendField(format, f, secrets, &out);
  return out;
}

std::string_view LevelName(Level level, Format format) {
  const bool text = format == Format::kText;
  switch (level) {
    case Level::kTrace:
      return text ? "TRACE" : "trace";
    case Level::kDebug:
      return text ? "DEBUG" : "debug";
    case Level::kInfo:
      return text ? "INFO" : "info";
    case Level::kWarn:
      return text ? "WARN" : "warn";
    case Level::kError:
      return text ? "ERROR" : "error";
    case Level::kOff:
      break;
  }
  return text ? "OFF" : "off";
}

std::string FormatLine(Format format, std::chrono::system_clock::time_point time, Level level,
                       std::string_view body) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch());
  const std::time_t seconds = static_cast<std::time_t>(ms.count() / 1000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  const std::string ts =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                  utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ms.count() % 1000);
  if (format == Format::kText) return fmt::format("{} {} {}\n", ts, LevelName(level, format), body);
  return fmt::format("{{\"ts\":\"{}\",\"level\":\"{}\",{}}}\n", ts, LevelName(level, format), body);
}

}  // namespace agentstream::log
