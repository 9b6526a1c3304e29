// Internal to the store module: the SQLite schema of the event log and its setup.
#pragma once

#include "core/status.h"
#include "sqlite/db.h"

namespace agentstream::sqlite {

// Creates the schema in an empty database, or checks the version of an existing one
// (kUnsupportedVersion when newer than this build).
Status EnsureSchema(Db& db);

}  // namespace agentstream::sqlite
