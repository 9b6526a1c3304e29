// The daemon's log: one structured line per event, on stderr. A line is an event name
// ("process.exited": the module, a dot, what happened) and key/value fields, written as text
// (`2026-12-01T17:00:00.123Z INFO process.exited pid=123 signal=SIGKILL`) or as one JSON object
// (`{"ts":"...","level":"info","event":"process.exited","pid":123,"signal":"SIGKILL"}`); the
// formats are in line_format.h, the events the daemon logs in docs/operations.md ("Logs").
//
//   log::Info("process.exited", {{"pid", pid}, {"signal", "SIGKILL"}});
//
// What a line may carry: ids, names, counts, codes and error messages. Never a credential, and
// never a prompt's or an agent output's text (not even at debug). Every string value is cut to
// kMaxValueBytes; the secrets given to Configure are masked in every value.
//
// Usable from every layer but src/core (which does no I/O). Lines go through spdlog (one logger,
// its sink writes each whole line with one write under a mutex).
// Threading: Write and the level functions are thread-safe. Configure is not safe while other
// threads log: call it once at start (the composition root, a test's setup).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/status.h"

namespace agentstream::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };
enum class Format { kText, kJson };

// The most bytes of one string value in a line (stderr tails, error messages): longer values are
// cut at a character boundary and marked with a trailing "...".
inline constexpr std::size_t kMaxValueBytes = 2048;

// A field's value: text, a whole number or a boolean. Implicit, so that fields read
// {"pid", pid}.
class Value {
 public:
  // NOLINTBEGIN(google-explicit-constructor)
  Value(std::string text) : value_(std::move(text)) {}
  Value(std::string_view text) : value_(std::string(text)) {}
  Value(const char* text) : value_(std::string(text)) {}
  Value(bool flag) : value_(flag) {}
  template <std::integral T>  // bool takes the constructor above
  Value(T number) : value_(Number(number)) {}
  // NOLINTEND(google-explicit-constructor)

  using Variant = std::variant<std::string, std::int64_t, std::uint64_t, bool>;
  const Variant& get() const { return value_; }

 private:
  template <class T>
  static Variant Number(T n) {
    if constexpr (std::is_signed_v<T>) return static_cast<std::int64_t>(n);
    return static_cast<std::uint64_t>(n);
  }
  Variant value_;
};

// `key` is lower_snake_case; "ts", "level" and "event" are the line's own.
struct Field {
  std::string key;
  Value value;
};
using Fields = std::initializer_list<Field>;

struct Options {
  Level level = Level::kInfo;  // lines below it are dropped
  Format format = Format::kText;
  // Masked ("***") wherever they appear in a value: the bearer token, the store's password.
  // Empty entries are ignored.
  std::vector<std::string> secrets;
  std::ostream* out = nullptr;  // where lines go; null: stderr
};

// Replaces the configuration. Before the first call nothing is logged (level kOff): only a
// program that configures the log (the daemon) writes lines; command-line tools and tests stay
// quiet unless they do.
void Configure(const Options& options);
bool Enabled(Level level);

// Logs `event` with the fields of the Scopes open on this thread, then `fields` (a key of
// `fields` gives a scope's field of that key its value).
void Write(Level level, std::string_view event, std::span<const Field> fields);
inline void Write(Level level, std::string_view event, Fields fields) {
  Write(level, event, std::span<const Field>(fields.begin(), fields.size()));
}
inline void Trace(std::string_view event, Fields fields = {}) {
  Write(Level::kTrace, event, fields);
}
inline void Debug(std::string_view event, Fields fields = {}) {
  Write(Level::kDebug, event, fields);
}
inline void Info(std::string_view event, Fields fields = {}) { Write(Level::kInfo, event, fields); }
inline void Warn(std::string_view event, Fields fields = {}) { Write(Level::kWarn, event, fields); }
inline void Error(std::string_view event, Fields fields = {}) {
  Write(Level::kError, event, fields);
}

// The outcomes of a task that runs again and again (a lease renewal, an index flush): a failure
// is logged at warn as `event` with "error" and `fields`, once per distinct error until the task
// succeeds again, so a store that stays unreachable writes one line, not one a round. One per
// task, used by one thread at a time.
class RepeatedFailure {
 public:
  explicit RepeatedFailure(std::string event) : event_(std::move(event)) {}
  void Report(const Status& outcome, Fields fields = {});

 private:
  std::string event_;
  std::string last_error_;  // empty after a success
};

// Fields added to every line this thread logs while the Scope lives (innermost last), e.g. the
// agent whose provider is being started. A context can be captured (Current) and entered again
// later for work done on the same behalf: a child process's lines and handlers carry the fields
// of the scope it was started in (process/child_process.h). Scopes nest; destroy them in reverse
// order of creation, on the thread that created them.
class Scope {
 public:
  explicit Scope(std::vector<Field> fields);
  Scope(Fields fields) : Scope(std::vector<Field>(fields)) {}
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // The fields of every Scope open on this thread, outermost first; an inner scope's field
  // replaces an outer one's of the same key.
  static std::vector<Field> Current();

 private:
  std::vector<Field> fields_;
  Scope* outer_;
};

// The end of `text` (a process's stderr) without its trailing newlines, within kMaxValueBytes:
// when longer, "..." and the last bytes, from a character boundary on.
std::string Tail(std::string_view text);

// "trace", "debug", "info", "warn", "error", "off"; nullopt for anything else.
std::optional<Level> ParseLevel(std::string_view name);
// "text", "json"; nullopt for anything else.
std::optional<Format> ParseFormat(std::string_view name);

}  // namespace agentstream::log
