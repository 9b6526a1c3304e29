// The one place that picks an EventLog backend from configuration.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "store/event_log.h"

namespace agentstream {

struct StoreConfig {
  // "memory:" for the in-memory log; "sqlite:PATH" or a plain PATH for SQLite;
  // "postgres://..." or "postgresql://..." (a libpq URL) for PostgreSQL.
  std::string url;
  Durability durability = Durability::kFsync;
  LogLimits limits;
  // Connections one search runs on at once (SqliteLogOptions::search_slices); 0: the default.
  std::size_t search_slices = 0;
  // PostgreSQL: writer connections committing side by side
  // (PostgresLogOptions::writer_connections); 0: the default.
  std::size_t writer_connections = 0;
};

// The SQLite file a store URL names ("sqlite:PATH", or a plain PATH); nullopt for "memory:", a
// PostgreSQL URL or any other "SCHEME://" URL.
std::optional<std::string> SqliteStorePath(const std::string& url);

// Opens the configured backend. kInvalidArgument for an unknown scheme; otherwise the backend's
// own open errors.
Result<std::unique_ptr<EventLog>> OpenEventLog(const StoreConfig& config);

}  // namespace agentstream
