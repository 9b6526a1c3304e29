#include "log/log.h"

#include <spdlog/formatter.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <array>
#include <memory>
#include <utility>

#include "log/line_format.h"

namespace agentstream::log {

namespace {

spdlog::level::level_enum SpdLevel(Level level) {
  static constexpr std::array<spdlog::level::level_enum, 6> kLevels = {
      spdlog::level::trace, spdlog::level::debug, spdlog::level::info,
      spdlog::level::warn,  spdlog::level::err,   spdlog::level::off};
  return kLevels[static_cast<std::size_t>(level)];
}

Level FromSpd(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return Level::kTrace;
    case spdlog::level::debug:
      return Level::kDebug;
    case spdlog::level::info:
      return Level::kInfo;
    case spdlog::level::warn:
      return Level::kWarn;
    case spdlog::level::err:
    case spdlog::level::critical:
      return Level::kError;
    default:
      return Level::kOff;
  }
}

// Adds the time and level spdlog stamped to the body Write formatted (its payload).
class LineFormatter final : public spdlog::formatter {
 public:
  explicit LineFormatter(Format format) : format_(format) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string line = FormatLine(format_, msg.time, FromSpd(msg.level),
                                        std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<LineFormatter>(format_);
  }

 private:
  Format format_;
};

struct State {
  std::shared_ptr<spdlog::logger> logger;
  Format format = Format::kText;
  std::vector<std::string> secrets;
};

State MakeState(const Options& options) {
  spdlog::sink_ptr sink;
  if (options.out != nullptr) {
    sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*options.out, /*force_flush=*/true);
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  }
  sink->set_formatter(std::make_unique<LineFormatter>(options.format));
  State state;
  state.logger = std::make_shared<spdlog::logger>("agentstream", std::move(sink));
  state.logger->set_level(SpdLevel(options.level));
  state.logger->flush_on(spdlog::level::trace);  // every line, as it happens
  state.format = options.format;
  for (const std::string& s : options.secrets)
    if (!s.empty()) state.secrets.push_back(s);
  return state;
}

State& Global() {
  static State state = MakeState(Options{Level::kOff});
  return state;
}

thread_local Scope* innermost = nullptr;

}  // namespace

void Configure(const Options& options) { Global() = MakeState(options); }

bool Enabled(Level level) {
  return level != Level::kOff && Global().logger->should_log(SpdLevel(level));
}

void Write(Level level, std::string_view event, std::span<const Field> fields) {
  if (!Enabled(level)) return;
  const State& state = Global();
  const std::string body = FormatBody(state.format, event, Scope::Current(), fields, state.secrets);
  state.logger->log(SpdLevel(level), spdlog::string_view_t(body.data(), body.size()));
}

void RepeatedFailure::Report(const Status& outcome, Fields fields) {
  if (outcome.ok()) {
    last_error_.clear();
    return;
  }
  if (outcome.message() == last_error_) return;
  last_error_ = outcome.message();
  std::vector<Field> all{{"error", outcome.ToString()}};
  all.insert(all.end(), fields.begin(), fields.end());
  Write(Level::kWarn, event_, all);
}

Scope::Scope(std::vector<Field> fields) : fields_(std::move(fields)), outer_(innermost) {
  innermost = this;
}

Scope::~Scope() { innermost = outer_; }

std::vector<Field> Scope::Current() {
  std::vector<const Scope*> chain;
  for (const Scope* s = innermost; s != nullptr; s = s->outer_) chain.push_back(s);
  std::vector<Field> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    for (const Field& f : (*it)->fields_) {
      auto same =
          std::find_if(out.begin(), out.end(), [&](const Field& o) { return o.key == f.key; });
      if (same != out.end()) {
        same->value = f.value;  // an inner scope's field replaces an outer one's
      } else {
        out.push_back(f);
      }
    }
  }
  return out;
}

std::string Tail(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  constexpr std::string_view kCut = "...";
  if (text.size() <= kMaxValueBytes) return std::string(text);
  std::size_t start = text.size() - (kMaxValueBytes - kCut.size());
  // Forward over continuation bytes: the tail starts on a character.
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  return std::string(kCut) + std::string(text.substr(start));
}

std::optional<Level> ParseLevel(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, Level>, 6> kNames = {{
      {"trace", Level::kTrace},
      {"debug", Level::kDebug},
      {"info", Level::kInfo},
      {"warn", Level::kWarn},
      {"error", Level::kError},
      {"off", Level::kOff},
  }};
  for (const auto& [n, level] : kNames)
    if (n == name) return level;
  return std::nullopt;
}

std::optional<Format> ParseFormat(std::string_view name) {
  if (name == "text") return Format::kText;
  if (name == "json") return Format::kJson;
  return std::nullopt;
}

}  // namespace agentstream::log
