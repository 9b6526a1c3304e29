// Internal to `store copy` (store_copy.h): the store's small tables (consumers and their
// positions, paired devices, pairing codes, presence, schedules and their firings, shared
// secrets), upserted by primary key.
#pragma once

#include <cstdint>

#include "store/copy/copy_conn.h"

namespace agentstream::store_copy {

struct TablesReport {
  std::int64_t rows = 0;          // rows upserted at the destination
  std::int64_t secrets_left = 0;  // shared secrets a destination without `secrets` cannot keep
};

// Upserts every row of the small tables of `from` into `to`, kCopyTablePage rows per
// transaction: a row of the same key at the destination takes the source's values. A table the
// source lacks is skipped. kIoError when reading or writing fails.
Result<TablesReport> CopyTables(CopyConn& from, CopyConn& to);

}  // namespace agentstream::store_copy
