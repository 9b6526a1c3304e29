#include "store/log_factory.h"

#include "store/memory_log.h"
#include "store/postgres/postgres_log.h"
#include "store/sqlite/sqlite_log.h"

namespace agentstream {

std::optional<std::string> SqliteStorePath(const std::string& url) {
  if (url == "memory:") return std::nullopt;
  std::string path = url.rfind("sqlite:", 0) == 0 ? url.substr(7) : url;
  if (path.empty() || path.find("://") != std::string::npos) return std::nullopt;
  return path;
}

Result<std::unique_ptr<EventLog>> OpenEventLog(const StoreConfig& config) {
  const std::string& url = config.url;
  if (url == "memory:")
    return std::unique_ptr<EventLog>(std::make_unique<MemoryEventLog>(config.limits));
  if (url.rfind("postgres://", 0) == 0 || url.rfind("postgresql://", 0) == 0) {
    PostgresLogOptions options;
    options.conninfo = url;
    options.durability = config.durability;
    options.limits = config.limits;
    options.search_slices = config.search_slices;
    if (config.writer_connections > 0) options.writer_connections = config.writer_connections;
    return OpenPostgresEventLog(std::move(options));
  }
  std::optional<std::string> path = SqliteStorePath(url);
  if (!path) return Error(ErrorCode::kInvalidArgument, "unknown store URL '" + url + "'");
  SqliteLogOptions options;
  options.path = *path;
  options.durability = config.durability;
  options.limits = config.limits;
  options.search_slices = config.search_slices;
  return OpenSqliteEventLog(std::move(options));
}

}  // namespace agentstream
