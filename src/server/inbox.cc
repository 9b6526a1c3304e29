#include "server/inbox.h"

#include <sodium.h>
#include <sys/stat.h>

#include <array>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "consumers/signature.h"

namespace agentstream::server {

namespace {

constexpr std::size_t kKeyBytes = 32;

std::string Hex(const unsigned char* bytes, std::size_t n) {
  std::string out(n * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), bytes, n);
  out.pop_back();
  return out;
}

bool EqualConstantTime(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

Result<std::string> LoadOrCreateInboxKey(const std::string& path) {
  if (sodium_init() < 0) return Error(ErrorCode::kInternal, "libsodium failed to initialize");
  std::array<unsigned char, kKeyBytes> bytes{};
  if (path.empty()) {
    randombytes_buf(bytes.data(), bytes.size());
    return Hex(bytes.data(), bytes.size());
  }
  std::ifstream in(path);
  if (in) {
    std::string key;
    std::getline(in, key);
    if (key.size() != kKeyBytes * 2 ||
        key.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return Error(ErrorCode::kCorruption,
                   path + " does not hold an inbox key (64 lowercase hex characters)");
    }
    return key;
  }
  randombytes_buf(bytes.data(), bytes.size());
  const std::string key = Hex(bytes.data(), bytes.size());
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    if (!out) return Error(ErrorCode::kIoError, "cannot create " + temp);
    ::chmod(temp.c_str(), 0600);
    out << key << "\n";
    out.flush();
    if (!out) return Error(ErrorCode::kIoError, "cannot write " + temp);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0)
    return Error(ErrorCode::kIoError, "cannot rename " + temp + " to " + path);
  return key;
}

Inbox::Inbox(runtime::AgentManager& agents, std::string key)
    : agents_(agents), key_(std::move(key)) {}

std::string Inbox::TokenFor(const SessionId& session) const {
  return consumers::HmacSha256Hex(key_, "inbox/" + session.str());
}

void Inbox::Accept(const SessionId& parent, std::string_view timestamp, std::string_view signature,
                   std::string_view body, std::function<void(Result<InboxResult>)> done,
                   std::chrono::system_clock::time_point now) {
  if (timestamp.empty() || signature.empty()) {
    return done(Error(ErrorCode::kUnauthenticated,
                      "an inbox delivery needs X-Agentstream-Timestamp and "
                      "X-Agentstream-Signature"));
  }
  std::int64_t seconds = 0;
  const auto [end, ec] =
      std::from_chars(timestamp.data(), timestamp.data() + timestamp.size(), seconds);
  if (ec != std::errc() || end != timestamp.data() + timestamp.size()) {
    return done(Error(ErrorCode::kUnauthenticated, "X-Agentstream-Timestamp is not a number"));
  }
  const std::int64_t skew =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count() - seconds;
  if (skew > kInboxClockSkew.count() || -skew > kInboxClockSkew.count()) {
    return done(
        Error(ErrorCode::kUnauthenticated, "the delivery's timestamp is " + std::to_string(skew) +
                                               " s away from this daemon's clock (limit " +
                                               std::to_string(kInboxClockSkew.count()) + " s)"));
  }
  if (!EqualConstantTime(signature,
                         consumers::WebhookSignature(TokenFor(parent), timestamp, body))) {
    return done(Error(ErrorCode::kUnauthenticated,
                      "the signature does not match this session's inbox token"));
  }
  Result<consumers::Delivery> delivery = consumers::DeliveryFromJson(body);
  if (!delivery.ok()) return done(delivery.status());
  Append(parent, *delivery, std::move(done));
}

void Inbox::Append(const SessionId& parent, const consumers::Delivery& delivery,
                   std::function<void(Result<InboxResult>)> done) {
  if (delivery.session == parent) {
    return done(Error(ErrorCode::kInvalidArgument,
                      "a session cannot deliver into its own inbox (" + parent.str() + ")"));
  }
  Result<std::vector<NewEvent>> events = consumers::SubagentEventsFor(delivery);
  if (!events.ok()) return done(events.status());
  if (events->empty()) {
    return done(Error(ErrorCode::kInvalidArgument, "the delivery holds no events"));
  }
  const std::size_t count = events->size();
  ProducerStamp stamp{consumers::ParentProducerId(delivery.consumer, delivery.session),
                      delivery.epoch.value(), delivery.ordinal};
  agents_.AppendForeign(parent, std::move(*events), std::move(stamp),
                        [done = std::move(done), count](Result<AppendResult> appended) {
                          if (!appended.ok()) return done(appended.status());
                          InboxResult result;
                          result.duplicate = appended->duplicate;
                          result.appended = appended->duplicate ? 0 : count;
                          result.cursor = Cursor{appended->epoch, appended->last_seq};
                          done(result);
                        });
}

}  // namespace agentstream::server
