// `agentstream mcp`: a Model Context Protocol server on stdin/stdout in front of a running daemon,
// so that a coding agent (claude, codex, gemini, any MCP client) drives the daemon's agents with
// tools (mcp_tools.h, docs/mcp.md). The daemon stays the owner of every agent: each tool is a
// call of its HTTP API, so every other client sees what the tools do.
//
// Nothing a client does by mistake (malformed JSON, an unknown method or tool, a bad argument, an
// oversize line, not reading its pipe) changes anything stored: a bad message is answered with a
// JSON-RPC error, a bad argument with a tool error before any daemon call, and a client that does
// not read is disconnected once its output exceeds the channel's bounds.
//
// Threading: RunMcpServer owns the calling thread for the connection's life (an Asio loop holding
// the protocol state) plus `worker_threads` threads that run tool calls (each blocks on the
// daemon; a waiting agent_send holds one for its wait).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "client/transport.h"
#include "jsonrpc/stdio_channel.h"

namespace agentstream::mcp_server {

struct McpServerOptions {
  client::TransportOptions http;  // the daemon's --url and --token, time limits
  std::string version = "0.0.0";  // serverInfo.version
  int in_fd = 0, out_fd = 1;      // the client's pipes
  // One input message (8 MiB), the output queue (16 MiB), a client that reads nothing (30 s).
  jsonrpc::ChannelLimits limits;
  std::size_t worker_threads = 8;  // tool calls run at once; more wait their turn
  // Daemon calls other than agent_interrupt (idempotent: creates and prompts carry client ids)
  // are retried this long while the daemon is unreachable (a restart); an interrupt fails at once.
  std::chrono::milliseconds retry_for{30000};
  std::string calling_agent;  // ToolEnv::calling_agent
};

// Serves one MCP client until its input ends (returns 0) or the connection fails: a read or
// write error, or a client that does not read its output (returns 1; the reason goes to stderr).
int RunMcpServer(const McpServerOptions& options);

}  // namespace agentstream::mcp_server
