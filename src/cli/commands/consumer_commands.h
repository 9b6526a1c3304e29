// `agentstream consumers ...` and `agentstream inbox`: durable consumers and session inboxes
// through the daemon's HTTP API (docs/consumers.md, docs/cli.md).
#pragma once

#include <string>
#include <vector>

#include "cli/commands/commands.h"

namespace agentstream::cli {

struct NewConsumerOptions {
  std::string id;
  std::string spec_file;  // a JSON spec (POST /v1/consumers body); excludes the sink flags
  // Exactly one sink unless spec_file is given.
  std::string webhook, secret;
  std::vector<std::string> headers;  // "Name: value"
  std::vector<std::string> command;  // argv
  std::string parent;
  std::string jsonl;
  std::vector<std::string> sessions, providers, kinds;
  int max_attempts = 8;
  std::int64_t initial_backoff_ms = 500;
  std::int64_t max_backoff_ms = 60000;
  std::int64_t timeout_ms = 10000;
  bool no_coalesce = false;
  bool from_now = false;
};

int ListConsumers(const ClientContext& context);
int NewConsumer(const ClientContext& context, const NewConsumerOptions& options);
int ShowConsumer(const ClientContext& context, const std::string& id);
int RemoveConsumer(const ClientContext& context, const std::string& id);
// Unparks `session`, or every parked session when empty.
int ResumeConsumer(const ClientContext& context, const std::string& id, const std::string& session);
// Prints the agent's inbox URL and token (what a child on another daemon is configured with).
int ShowInbox(const ClientContext& context, const std::string& agent);

}  // namespace agentstream::cli
