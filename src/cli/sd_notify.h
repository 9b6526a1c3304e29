// Readiness notification to a service manager (the sd_notify(3) protocol) without libsystemd. A
// unit of Type=notify starts the daemon with $NOTIFY_SOCKET naming a Unix datagram socket; the
// daemon sends it "READY=1" once it serves, so that `systemctl start` returns only then, and
// "STOPPING=1" when it begins to stop.
#pragma once

#include <string_view>

#include "core/status.h"

namespace agentstream::cli {

// Sends `state` ("READY=1", "STOPPING=1", ...: newline-separated VAR=VALUE assignments) as one
// datagram to $NOTIFY_SOCKET: a socket path ("/run/...") or an abstract name ("@name"). Ok, and
// nothing sent, when the variable is unset or empty. kInvalidArgument for an address of another
// form (vsock addresses are not supported); kUnavailable when the datagram cannot be sent.
Status Notify(std::string_view state);

}  // namespace agentstream::cli
