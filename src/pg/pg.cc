#include "pg/pg.h"

#include <libpq-fe.h>
#include <poll.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentstream::pg {

Rows::Rows(pg_result* result) : result_(result) {}
Rows::Rows(Rows&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
Rows& Rows::operator=(Rows&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) PQclear(result_);
    result_ = std::exchange(other.result_, nullptr);
  }
  return *this;
}
Rows::~Rows() {
  if (result_ != nullptr) PQclear(result_);
}

int Rows::size() const { return result_ != nullptr ? PQntuples(result_) : 0; }
bool Rows::IsNull(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }
std::string Rows::Text(int row, int column) const {
  return std::string(PQgetvalue(result_, row, column),
                     static_cast<std::size_t>(PQgetlength(result_, row, column)));
}
std::int64_t Rows::Int(int row, int column) const {
  const char* value = PQgetvalue(result_, row, column);
  if (PQfformat(result_, column) == 0) return std::strtoll(value, nullptr, 10);
  // Binary: a bigint, integer or smallint in network byte order.
  const int length = PQgetlength(result_, row, column);
  std::uint64_t bits = 0;
  for (int i = 0; i < length && i < 8; ++i)
    bits = (bits << 8) | static_cast<unsigned char>(value[i]);
  switch (length) {
    case 2:
      return static_cast<std::int16_t>(bits);
    case 4:
      return static_cast<std::int32_t>(bits);
    default:
      return static_cast<std::int64_t>(bits);
  }
}
std::string Rows::Bytes(int row, int column) const {
  if (PQfformat(result_, column) != 0) return Text(row, column);  // binary: the bytes as they are
  std::size_t length = 0;
  unsigned char* raw = PQunescapeBytea(
      reinterpret_cast<const unsigned char*>(PQgetvalue(result_, row, column)), &length);
  if (raw == nullptr) return {};
  std::string out(reinterpret_cast<const char*>(raw), length);
  PQfreemem(raw);
  return out;
}
std::int64_t Rows::Affected() const {
  const char* n = result_ != nullptr ? PQcmdTuples(result_) : "";
  return *n != '\0' ? std::strtoll(n, nullptr, 10) : 0;
}

namespace {

// libpq's message without the newline it ends with.
std::string Message(const char* text) {
  std::string why = text != nullptr ? text : "";
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  return why;
}

}  // namespace

Result<Conn> Conn::Open(const std::string& conninfo) {
  // The defaults of kConnectionDefaults come first and the conninfo last: libpq keeps the last
  // value of a keyword, so whatever the conninfo sets wins (expand_dbname turns it into its
  // keywords). PGCONNECT_TIMEOUT, when set, stands for connect_timeout.
  std::vector<const char*> keywords;
  std::vector<const char*> values;
  for (const auto& [keyword, value] : kConnectionDefaults) {
    if (keyword == std::string_view("connect_timeout") && std::getenv("PGCONNECT_TIMEOUT"))
      continue;
    keywords.push_back(keyword);
    values.push_back(value);
  }
  keywords.push_back("dbname");
  values.push_back(conninfo.c_str());
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  pg_conn* conn = PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/1);
  if (conn == nullptr) return Error(ErrorCode::kUnavailable, "PostgreSQL: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string why = Message(PQerrorMessage(conn));
    PQfinish(conn);
    return Error(ErrorCode::kUnavailable, "cannot connect to PostgreSQL: " + why);
  }
  // The server's notices ("drop cascades to ...") are not errors; libpq would print them.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return Conn(conn);
}

std::string Conn::Setting(const char* keyword) const {
  if (conn_ == nullptr) return {};
  PQconninfoOption* options = PQconninfo(conn_);
  if (options == nullptr) return {};
  std::string value;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (std::string_view(o->keyword) == keyword && o->val != nullptr) value = o->val;
  }
  PQconninfoFree(options);
  return value;
}

Conn::Conn(Conn&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)),
      prepared_(std::exchange(other.prepared_, {})),
      names_(other.names_) {}
Conn& Conn::operator=(Conn&& other) noexcept {
  if (this != &other) {
    if (conn_ != nullptr) PQfinish(conn_);
    conn_ = std::exchange(other.conn_, nullptr);
    prepared_ = std::exchange(other.prepared_, {});
    names_ = other.names_;
  }
  return *this;
}
Conn::~Conn() {
  if (conn_ != nullptr) PQfinish(conn_);
}

bool Conn::Broken() const { return conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK; }

int Conn::BackendPid() const { return conn_ != nullptr ? PQbackendPID(conn_) : 0; }
int Conn::Socket() const { return conn_ != nullptr ? PQsocket(conn_) : -1; }

bool Conn::SpokeWhileIdle() const {
  if (conn_ == nullptr) return false;
  pollfd fd{PQsocket(conn_), POLLIN, 0};
  return ::poll(&fd, 1, 0) > 0;
}

bool Conn::Receive(std::vector<Notification>& out) {
  if (conn_ == nullptr || PQconsumeInput(conn_) == 0) return false;
  while (PGnotify* n = PQnotifies(conn_)) {
    out.push_back(Notification{n->relname, n->extra, n->be_pid});
    PQfreemem(n);
  }
  return PQstatus(conn_) == CONNECTION_OK;
}

namespace {

Status Failed(pg_conn* conn, pg_result* result) {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string why =
      Message(result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn));
  if (PQstatus(conn) != CONNECTION_OK)
    return Error(ErrorCode::kUnavailable, "the PostgreSQL connection is gone: " + why);
  // A unique violation, or a transaction the server aborted for another's sake (a deadlock, a
  // serialization failure): another writer got there first.
  if (state != nullptr &&
      (std::string_view(state) == "23505" || std::string_view(state) == "40P01" ||
       std::string_view(state) == "40001"))
    return Error(ErrorCode::kConflict, "PostgreSQL: " + why);
  return Error(ErrorCode::kIoError, "PostgreSQL: " + why);
}

// A statement's parameters as libpq takes them; they point into the Params.
struct Wire {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

Result<Wire> ToWire(const std::vector<Param>& params) {
  Wire wire;
  wire.values.reserve(params.size());
  for (const Param& p : params) {
    // A text parameter travels NUL-terminated: one holding a NUL would be cut short silently.
    if (p.value && !p.binary && p.value->find('\0') != std::string::npos)
      return Error(ErrorCode::kInvalidArgument, "PostgreSQL text cannot hold a NUL byte");
    wire.values.push_back(p.value ? p.value->data() : nullptr);
    wire.lengths.push_back(p.value ? static_cast<int>(p.value->size()) : 0);
    wire.formats.push_back(p.binary ? 1 : 0);
  }
  return wire;
}

// A prepared statement the server can no longer run: its result type changed with the schema
// ("cached plan must not change result type", 0A000), or it is gone (26000). It is prepared
// again, under a new name, the next time.
bool StaleStatement(pg_result* result) {
  const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  return state != nullptr &&
         (std::string_view(state) == "0A000" || std::string_view(state) == "26000");
}

// Sends `statements` into the connection's pipeline: a `reuse` one not yet prepared on it (in
// `prepared`, or earlier in this pipeline) right after its preparation, under the next of
// `names`, which `preparing` gets for it. False when libpq could not send.
bool Send(pg_conn* conn, std::span<const Statement> statements, const std::vector<Wire>& wires,
          const std::map<std::string, std::string>& prepared, std::uint64_t& names,
          std::vector<std::string>& preparing) {
  std::map<std::string_view, std::string_view> named(prepared.begin(), prepared.end());
  for (std::size_t i = 0; i < statements.size(); ++i) {
    const Statement& s = statements[i];
    const int count = static_cast<int>(s.params.size());
    const Wire& w = wires[i];
    if (!s.reuse) {
      if (PQsendQueryParams(conn, s.sql.c_str(), count, nullptr, w.values.data(), w.lengths.data(),
                            w.formats.data(), s.binary ? 1 : 0) != 1)
        return false;
      continue;
    }
    auto it = named.find(s.sql);
    if (it == named.end()) {
      preparing[i] = "agentstream_" + std::to_string(names++);
      if (PQsendPrepare(conn, preparing[i].c_str(), s.sql.c_str(), count, nullptr) != 1)
        return false;
      it = named.emplace(s.sql, preparing[i]).first;
    }
    const std::string name(it->second);
    if (PQsendQueryPrepared(conn, name.c_str(), count, w.values.data(), w.lengths.data(),
                            w.formats.data(), s.binary ? 1 : 0) != 1)
      return false;
  }
  return true;
}

bool Succeeded(pg_result* result) {
  const ExecStatusType status = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

// The answer of one statement: its rows, or why it failed (the result is freed).
Result<Rows> Answer(pg_conn* conn, pg_result* result) {
  if (Succeeded(result)) return Rows(result);
  if (result != nullptr && PQresultStatus(result) == PGRES_PIPELINE_ABORTED) {
    PQclear(result);
    return Error(ErrorCode::kIoError,
                 "PostgreSQL did not run the statement: an earlier one of its pipeline failed");
  }
  Status failed = Failed(conn, result);
  if (result != nullptr) PQclear(result);
  return failed;
}

}  // namespace

Result<Rows> Conn::Exec(std::string_view sql, const std::vector<Param>& params) {
  return ExecOnce(sql, params, /*binary=*/false);
}

Result<Rows> Conn::Exec(const Statement& statement) {
  if (!statement.reuse) return ExecOnce(statement.sql, statement.params, statement.binary);
  return std::move(ExecPipeline({&statement, 1}).front());
}

Result<Rows> Conn::ExecOnce(std::string_view sql, const std::vector<Param>& params, bool binary) {
  if (conn_ == nullptr) return Error(ErrorCode::kUnavailable, "no PostgreSQL connection");
  AS_ASSIGN_OR_RETURN(Wire wire, ToWire(params));
  const std::string text(sql);
  return Answer(conn_, PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), nullptr,
                                    wire.values.data(), wire.lengths.data(), wire.formats.data(),
                                    binary ? 1 : 0));
}

const Result<Rows>* FirstFailure(std::span<const Result<Rows>> answers) {
  for (const Result<Rows>& answer : answers)
    if (!answer.ok()) return &answer;
  return nullptr;
}

std::vector<Result<Rows>> Conn::ExecPipeline(std::span<const Statement> statements) {
  std::vector<Result<Rows>> answers;
  answers.reserve(statements.size());
  auto fail_rest = [&](const Status& why) {
    while (answers.size() < statements.size()) answers.emplace_back(why);
    return std::move(answers);
  };
  if (conn_ == nullptr)
    return fail_rest(Error(ErrorCode::kUnavailable, "no PostgreSQL connection"));
  // Every statement is checked before any is sent, so that a bad one sends nothing.
  std::vector<Wire> wires;
  wires.reserve(statements.size());
  for (const Statement& s : statements) {
    Result<Wire> wire = ToWire(s.params);
    if (!wire.ok()) return fail_rest(wire.status());
    wires.push_back(std::move(*wire));
  }
  if (PQenterPipelineMode(conn_) == 0) return fail_rest(Failed(conn_, nullptr));
  // The names of the `reuse` statements this pipeline prepares (empty: none for that statement).
  std::vector<std::string> preparing(statements.size());
  bool sent =
      Send(conn_, statements, wires, prepared_, names_, preparing) && PQpipelineSync(conn_) == 1;
  // Each answer is one result followed by a null (a preparation's, then its statement's); then
  // the sync's result.
  auto next = [&]() -> pg_result* {
    pg_result* result = PQgetResult(conn_);
    if (result != nullptr)
      while (pg_result* extra = PQgetResult(conn_)) PQclear(extra);
    return result;
  };
  for (std::size_t i = 0; sent && i < statements.size(); ++i) {
    std::optional<Result<Rows>> prepare_failed;
    if (!preparing[i].empty()) {
      pg_result* prepared = next();
      if (prepared == nullptr) break;
      Result<Rows> answer = Answer(conn_, prepared);
      // Prepared statements are not transactional: this one stays if its transaction rolls back.
      if (answer.ok()) prepared_.emplace(statements[i].sql, preparing[i]);
      if (!answer.ok()) prepare_failed = std::move(answer);
    }
    pg_result* result = next();
    if (result == nullptr) break;
    if (statements[i].reuse && StaleStatement(result)) prepared_.erase(statements[i].sql);
    Result<Rows> answer = Answer(conn_, result);
    answers.push_back(prepare_failed ? std::move(*prepare_failed) : std::move(answer));
    if (PQstatus(conn_) != CONNECTION_OK) break;
  }
  if (answers.size() == statements.size()) {
    pg_result* sync = PQgetResult(conn_);
    const bool synced = sync != nullptr && PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
    if (sync != nullptr) PQclear(sync);
    if (synced && PQexitPipelineMode(conn_) == 1) return answers;
  }
  // The connection broke, or its answers did not add up: it is not used again.
  const Status gone = Error(ErrorCode::kUnavailable,
                            "the PostgreSQL connection is gone: " + Message(PQerrorMessage(conn_)));
  PQfinish(conn_);
  conn_ = nullptr;
  prepared_.clear();
  return fail_rest(gone);
}

Status Conn::ExecScript(std::string_view sql) {
  if (conn_ == nullptr) return Error(ErrorCode::kUnavailable, "no PostgreSQL connection");
  const std::string text(sql);
  pg_result* result = PQexec(conn_, text.c_str());
  Status out = Succeeded(result) ? Status::Ok() : Failed(conn_, result);
  if (result != nullptr) PQclear(result);
  return out;
}

}  // namespace agentstream::pg
