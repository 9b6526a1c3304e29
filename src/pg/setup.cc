#include "pg/setup.h"

#include <algorithm>

#include "core/utf8.h"

namespace agentstream::pg {

std::string ServerNowSql() { return "SELECT " + std::string(kServerNowMs); }

std::string QuoteIdentifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string TextArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string IntArray(const std::vector<std::int64_t>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i > 0 ? "," : "") + std::to_string(items[i]);
  return out + "}";
}

bool StorableText(std::string_view text) {
  return text.find('\0') == std::string_view::npos && IsValidUtf8(text);
}

Result<Conn> ConnectTo(const std::string& conninfo, const std::string& application,
                       const std::string& schema) {
  AS_ASSIGN_OR_RETURN(Conn conn, Conn::Open(conninfo));
  AS_RETURN_IF_ERROR(conn.Exec("SELECT set_config('application_name', $1, false)",
                               {schema.empty() ? application : application + ":" + schema})
                         .status());
  if (!schema.empty())
    AS_RETURN_IF_ERROR(conn.ExecScript("SET search_path TO " + QuoteIdentifier(schema)));
  return conn;
}

Status EndTransactionsIdleFor(Conn& conn, std::chrono::milliseconds limit) {
  return conn.ExecScript("SET idle_in_transaction_session_timeout TO " +
                         std::to_string(std::max<std::int64_t>(1, limit.count())));
}

Result<Conn> ReaderPool::Acquire() {
  Conn conn;
  {
    std::unique_lock lock(mu_);
    freed_.wait(lock, [&] { return !idle_.empty() || open_count_ < max_; });
    if (!idle_.empty()) {
      conn = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++open_count_;
    }
  }
  // An idle connection the server ended (a restart, a failover) is replaced rather than failing
  // the read it was taken for.
  if (conn.UsableAfterIdle()) return conn;
  conn = Conn();
  Result<Conn> opened = open_();
  if (!opened.ok()) {
    std::lock_guard lock(mu_);
    --open_count_;
    freed_.notify_one();
  }
  return opened;
}

void ReaderPool::Release(Conn conn) {
  std::lock_guard lock(mu_);
  if (conn.Broken()) {
    --open_count_;
  } else {
    idle_.push_back(std::move(conn));
  }
  freed_.notify_one();
}

namespace {

Status Migrate(Conn& conn, const std::string& schema, const SchemaLayout& layout) {
  AS_RETURN_IF_ERROR(
      conn.Exec("SELECT pg_advisory_xact_lock($1)", {Param(layout.lock_key)}).status());
  if (!schema.empty()) {
    AS_RETURN_IF_ERROR(conn.ExecScript("CREATE SCHEMA IF NOT EXISTS " + QuoteIdentifier(schema)));
    AS_RETURN_IF_ERROR(conn.ExecScript("SET LOCAL search_path TO " + QuoteIdentifier(schema)));
  }
  AS_RETURN_IF_ERROR(conn.ExecScript(layout.scripts.front()));
  AS_ASSIGN_OR_RETURN(Rows found, conn.Exec("SELECT max(version) FROM " + layout.version_table));
  const auto newest = static_cast<std::int64_t>(layout.scripts.size());
  const std::int64_t version = found.size() == 0 || found.IsNull(0, 0) ? 0 : found.Int(0, 0);
  if (version > newest) {
    return Error(ErrorCode::kUnsupportedVersion,
                 layout.what + " schema version " + std::to_string(version) +
                     "; this build reads up to " + std::to_string(newest));
  }
  if (version == newest) return Status::Ok();
  for (std::int64_t v = std::max<std::int64_t>(version, 1); v < newest; ++v)
    AS_RETURN_IF_ERROR(conn.ExecScript(layout.scripts[static_cast<std::size_t>(v)]));
  AS_RETURN_IF_ERROR(conn.ExecScript("DELETE FROM " + layout.version_table));
  return conn.Exec("INSERT INTO " + layout.version_table + "(version) VALUES($1)", {Param(newest)})
      .status();
}

}  // namespace

Status EnsureSchema(Conn& conn, const std::string& schema, const SchemaLayout& layout) {
  AS_RETURN_IF_ERROR(conn.ExecScript("BEGIN"));
  Status migrated = Migrate(conn, schema, layout);
  if (!migrated.ok()) {
    (void)conn.ExecScript("ROLLBACK");
    return migrated;
  }
  return conn.ExecScript("COMMIT");
}

}  // namespace agentstream::pg
