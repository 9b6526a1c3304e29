// Random ids: session, turn, client, daemon and wake ids, nonces and process marks.
//
// Every function draws from libsodium's generator (randombytes_buf), so the ids do not repeat
// across processes and restarts, and a RandomHex is fit for a password a child process is given.
// Key material (signing and MAC keys) is drawn as bytes with randombytes_buf where it is used.
// All functions are thread-safe; they never fail (libsodium aborts the process if it cannot
// initialize its generator).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace agentstream::system {

// `digits` lowercase hex digits.
std::string RandomHex(std::size_t digits);

// "<prefix>_<digits lowercase hex digits>", e.g. RandomId("turn") == "turn_0f3a9c1e5b7d2468".
std::string RandomId(std::string_view prefix, std::size_t digits = 16);

// A random (version 4) UUID: "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", x lowercase hex, y one of
// 8, 9, a, b.
std::string RandomUuid();

}  // namespace agentstream::system
