// The PostgreSQL session log's tables (postgres_log.cc), version by version.
#pragma once

#include "pg/setup.h"

namespace agentstream {

// Scripts for versions 1 to kPostgresSchemaVersion (postgres_log.h).
const pg::SchemaLayout& PostgresLogSchema();

}  // namespace agentstream
