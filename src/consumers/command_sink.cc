// The command sink: one long-running child per consumer, fed one delivery per stdin line, which
// acknowledges each by printing one line (docs/consumers.md). Deliveries to one command are
// sent one at a time; the caller's thread drives the child's event loop while it waits.
#include <boost/json.hpp>
#include <deque>
#include <mutex>

#include "consumers/sinks.h"
#include "process/child_process.h"
#include "process/event_loop.h"

namespace agentstream::consumers {

namespace {

namespace json = boost::json;

constexpr std::size_t kMaxPendingLines = 64;  // stdout lines kept between deliveries
constexpr std::size_t kMaxAckLineBytes = std::size_t{1} << 20;

class CommandSink final : public Sink {
 public:
  explicit CommandSink(SinkSpec spec) : spec_(std::move(spec)) {}

  ~CommandSink() override {
    std::lock_guard lock(mu_);
    child_.reset();  // kills and reaps it
  }

  Result<SinkAck> Send(const Delivery& d, const json::value& prepared) override {
    std::lock_guard lock(mu_);
    if (!child_ || exited_) AS_RETURN_IF_ERROR(Spawn());
    lines_.clear();
    Status written = child_->WriteLine(DeliveryToJson(d));
    if (!written.ok()) {
      Restart();
      return written;
    }
    const bool answered = loop_.RunUntil([&] { return !lines_.empty() || exited_; },
                                         process::Millis(spec_.timeout_ms));
    if (!answered || lines_.empty()) {
      const std::string why = exited_ ? "the command exited: " + exit_.Describe()
                                      : "the command did not acknowledge within " +
                                            std::to_string(spec_.timeout_ms) + " ms";
      Restart();
      return Error(ErrorCode::kUnavailable, why);
    }
    const std::string line = std::move(lines_.front());
    lines_.pop_front();
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    const json::object* o = !ec && v.is_object() ? &v.as_object() : nullptr;
    if (o != nullptr) {
      const json::value* ack = o->if_contains("ack");
      if (ack != nullptr && ack->is_string() && ack->as_string() == d.idempotency_key) {
        SinkAck out;
        if (const json::value* state = o->if_contains("state")) out.state = *state;
        return out;
      }
      const json::value* nack = o->if_contains("nack");
      if (nack != nullptr && nack->is_string() && nack->as_string() == d.idempotency_key) {
        const json::value* error = o->if_contains("error");
        return Error(ErrorCode::kUnavailable,
                     "the command refused the delivery: " + (error != nullptr && error->is_string()
                                                                 ? std::string(error->as_string())
                                                                 : std::string("no reason")));
      }
    }
    // Anything else breaks the protocol: start over with a fresh process.
    Restart();
    return Error(ErrorCode::kUnavailable,
                 "the command answered with an unexpected line: " + line.substr(0, 200));
  }

 private:
  Status Spawn() {
    child_.reset();
    exited_ = false;
    lines_.clear();
    process::SpawnOptions options;
    options.argv = spec_.argv;
    options.max_line_bytes = kMaxAckLineBytes;
    process::ProcessHandlers handlers;
    handlers.on_stdout = [this](process::Frame frame) {
      if (lines_.size() < kMaxPendingLines) lines_.push_back(std::move(frame.text));
    };
    handlers.on_exit = [this](process::ExitInfo info) {
      exit_ = std::move(info);
      exited_ = true;
    };
    AS_ASSIGN_OR_RETURN(child_, process::ChildProcess::Spawn(loop_, options, std::move(handlers)));
    return Status::Ok();
  }

  void Restart() {
    child_.reset();
    exited_ = false;
    lines_.clear();
  }

  const SinkSpec spec_;
  std::mutex mu_;  // one delivery at a time; guards everything below and drives loop_
  process::EventLoop loop_;
  std::unique_ptr<process::ChildProcess> child_;
  std::deque<std::string> lines_;
  bool exited_ = false;
  process::ExitInfo exit_;
};

}  // namespace

std::unique_ptr<Sink> MakeCommandSink(const SinkSpec& spec) {
  return std::make_unique<CommandSink>(spec);
}

}  // namespace agentstream::consumers
