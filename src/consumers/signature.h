// The webhook signature scheme of deliveries (docs/consumers.md), shared by the webhook sink that
// signs and the session inbox that verifies (server/inbox.h).
#pragma once

#include <string>
#include <string_view>

namespace agentstream::consumers {

// hex(HMAC-SHA256(key, message)), lowercase.
std::string HmacSha256Hex(std::string_view key, std::string_view message);

// "v1=" + hex HMAC-SHA256(secret, timestamp + "." + body): the X-Agentstream-Signature header.
std::string WebhookSignature(std::string_view secret, std::string_view timestamp,
                             std::string_view body);

}  // namespace agentstream::consumers
