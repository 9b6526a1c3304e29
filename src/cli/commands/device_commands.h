// `agentstream pair` and `agentstream devices ...`: pairing a phone and managing paired devices
// through the daemon's HTTP API (docs/cli.md, docs/remote.md "Pairing a phone").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cli/commands/commands.h"
#include "core/status.h"

namespace agentstream::cli {

struct PairOptions {
  std::string name = "device";
  std::string expires = "10m";  // a duration: 90s, 10m, 2h (10 s to 24 h)
  std::string public_url;       // print the link at this base URL instead of the daemon's
  bool no_qr = false;           // the link as text only
};

// "90s", "10m", "2h", "1500ms" as milliseconds; kInvalidArgument for anything else.
Result<std::int64_t> ParseDuration(std::string_view text);

// `text` as a QR code (libqrencode, error correction M) drawn with Unicode half blocks, two
// module rows per line, light modules as blocks (for a dark terminal; a light one shows it
// inverted, which phone cameras read too), with a quiet zone of `quiet` modules.
Result<std::string> RenderQr(std::string_view text, int quiet = 2);

int Pair(const ClientContext& context, const PairOptions& options);
int ListDevices(const ClientContext& context);
int RenameDevice(const ClientContext& context, const std::string& id, const std::string& name);
int RevokeDevice(const ClientContext& context, const std::string& id);

}  // namespace agentstream::cli
