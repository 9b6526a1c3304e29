// Processes a previous run of this daemon left behind. Every process the daemon starts inherits
// the daemon's environment, which carries a marker naming the daemon and its run
// (AGENTSTREAM_DAEMON=ID/RUN); the supervisor (supervisor.h) kills an agent's whole process group
// when the daemon dies, so only a process that left its group (a tool that started a session of
// its own) can survive it, still carrying the marker. A starting daemon kills those.
#pragma once

#include <cstddef>
#include <string>

namespace agentstream::process {

// The environment variable that marks the daemon's processes.
inline constexpr const char* kDaemonMarker = "AGENTSTREAM_DAEMON";

// Kills (SIGKILL) every process of this user whose environment marks it as started by daemon
// `daemon_id` in a run other than `run`, with its process group when it leads one. Returns how
// many it killed. Reads /proc; processes it cannot read are not its own and are left alone.
std::size_t KillLeftovers(const std::string& daemon_id, const std::string& run);

}  // namespace agentstream::process
