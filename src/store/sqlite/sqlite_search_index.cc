#include "store/sqlite/sqlite_search_index.h"

#include <algorithm>
#include <string_view>

#include "core/sql_int.h"

namespace agentstream::sqlite {

namespace {

std::uint64_t U64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// Documents one millisecond holds, at most, before they spill into the next one's slots.
constexpr std::int64_t kRowsPerMs = 1 << 16;

// The table of part `part` (search_slices.h): search_documents_0 to _3 (sqlite_schema.cc).
std::string PartTable(std::size_t part) { return "search_documents_" + std::to_string(part); }

// The part a document of millisecond `ms` is stored in: a multiplicative hash, so that
// documents of neighbouring milliseconds (and of every period) spread evenly over the parts. An
// uneven spread (one burst of documents in one millisecond, say) costs speed only: each part
// still answers its own newest hits.
std::size_t PartOfTime(std::int64_t ms) {
  const std::uint64_t mixed = static_cast<std::uint64_t>(ms) * 0x9E3779B97F4A7C15ULL;
  return static_cast<std::size_t>((mixed >> 32) % kSearchPartitions);
}

// An FTS5 string: the text between double quotes, each quote doubled. Words hold no quotes
// (QueryWords splits at punctuation), session ids may.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// The tokens FTS5's tokenizer of the table (the schema's `unicode61 remove_diacritics 2`) makes
// of `text`, folded as the index stores them. The table keeps no token positions
// (detail=column), so FTS5 cannot match a phrase: a query word or session id the tokenizer splits
// is matched as all of its tokens instead, and the exact comparison of a session id is the
// caller's.
Result<std::vector<std::string>> Tokens(Db& db, std::string_view text) {
  fts5_api* api = nullptr;
  AS_ASSIGN_OR_RETURN(auto find, db.Cached("SELECT fts5(?1)"));
  sqlite3_bind_pointer(find->raw(), 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
  AS_RETURN_IF_ERROR(find->Step().status());
  fts5_tokenizer methods{};
  void* context = nullptr;
  if (api == nullptr || api->xFindTokenizer(api, "unicode61", &context, &methods) != SQLITE_OK) {
    return Error(ErrorCode::kInternal, "this SQLite has no FTS5 unicode61 tokenizer");
  }
  const char* args[] = {"remove_diacritics", "2"};
  Fts5Tokenizer* tokenizer = nullptr;
  if (methods.xCreate(context, args, 2, &tokenizer) != SQLITE_OK) {
    return Error(ErrorCode::kInternal, "cannot create the FTS5 unicode61 tokenizer");
  }
  std::vector<std::string> tokens;
  auto add = [](void* out, int /*flags*/, const char* token, int bytes, int /*start*/,
                int /*end*/) {
    static_cast<std::vector<std::string>*>(out)->emplace_back(token, static_cast<size_t>(bytes));
    return SQLITE_OK;
  };
  const int rc = methods.xTokenize(tokenizer, &tokens, FTS5_TOKENIZE_QUERY, text.data(),
                                   static_cast<int>(text.size()), add);
  methods.xDelete(tokenizer);
  if (rc != SQLITE_OK) return Error(ErrorCode::kInternal, "the FTS5 tokenizer failed");
  return tokens;
}

// Every token of every word in the text column, and every token of the session's id when one is
// asked for: the session column is indexed so that a session's hits are found without reading
// every other session's. Empty when a word has no token at all (it can match nothing).
Result<std::string> MatchExpression(Db& db, const SearchQuery& query) {
  std::string words;
  for (const std::string& word : query.words) {
    AS_ASSIGN_OR_RETURN(std::vector<std::string> tokens, Tokens(db, word));
    if (tokens.empty()) return std::string();
    for (const std::string& token : tokens) words += (words.empty() ? "" : " AND ") + Quoted(token);
  }
  std::string match = "body : (" + words + ")";
  if (query.session) {
    AS_ASSIGN_OR_RETURN(std::vector<std::string> tokens, Tokens(db, query.session->str()));
    std::string id;
    for (const std::string& token : tokens) id += (id.empty() ? "" : " AND ") + Quoted(token);
    if (!id.empty()) match += " AND session : (" + id + ")";
  }
  return match;
}

}  // namespace

Result<std::optional<Cursor>> LoadSearchState(Db& db, const SessionId& session) {
  AS_ASSIGN_OR_RETURN(auto s, db.Cached("SELECT epoch, seq FROM search_state WHERE session=?"));
  s->Bind(1, session.str());
  AS_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) return std::optional<Cursor>();
  return std::optional<Cursor>(Cursor{Epoch(U64(s->Int(0))), Seq(U64(s->Int(1)))});
}

Status StoreDocuments(Db& db, const SessionId& session, Cursor next,
                      const std::vector<SearchDocument>& documents) {
  for (const SearchDocument& d : documents) {
    // A document's rowid is its event's time in milliseconds times kRowsPerMs, plus the first
    // free slot of that millisecond: rowid order is time order, whatever order documents come
    // in. Every document of one millisecond is in one table, so the rowids of all the tables
    // are distinct.
    const std::int64_t first = std::max<std::int64_t>(d.time, 0) * kRowsPerMs;
    const std::string table = PartTable(PartOfTime(first / kRowsPerMs));
    AS_ASSIGN_OR_RETURN(auto last, db.Cached("SELECT max(rowid) FROM " + table +
                                             " WHERE rowid >= ? AND rowid < ?"));
    last->Bind(1, first).Bind(2, first + kRowsPerMs);
    AS_ASSIGN_OR_RETURN(bool row, last->Step());
    const std::int64_t rowid = row && !last->IsNull(0) ? last->Int(0) + 1 : first;
    last->Reset();
    AS_ASSIGN_OR_RETURN(auto add, db.Cached("INSERT INTO " + table +
                                            "(rowid, body, session, epoch, seq, kind) "
                                            "VALUES(?, ?, ?, ?, ?, ?)"));
    add->Bind(1, rowid)
        .Bind(2, d.text)
        .Bind(3, session.str())
        .Bind(4, I64(d.cursor.epoch.value()))
        .Bind(5, I64(d.cursor.seq.value()))
        .Bind(6, d.kind);
    AS_RETURN_IF_ERROR(add->Exec());
  }
  AS_ASSIGN_OR_RETURN(auto state, db.Cached("INSERT INTO search_state(session, epoch, seq) "
                                            "VALUES(?, ?, ?) ON CONFLICT(session) DO UPDATE SET "
                                            "epoch=excluded.epoch, seq=excluded.seq"));
  state->Bind(1, session.str()).Bind(2, I64(next.epoch.value())).Bind(3, I64(next.seq.value()));
  return state->Exec();
}

Result<std::vector<store_internal::RankedHit>> FindDocuments(
    Db& db, const SearchQuery& query, const std::vector<std::size_t>& parts) {
  AS_ASSIGN_OR_RETURN(const std::string match, MatchExpression(db, query));
  std::vector<store_internal::RankedHit> hits;
  if (match.empty()) return hits;
  for (const std::size_t part : parts) {
    // Newest first: rowids are in time order (StoreDocuments), and FTS5 walks them backwards
    // without ranking every match, so a common word costs no more than a rare one. The
    // session's tokens narrow the match; the comparison makes it exact ("ses_1_x" has the tokens
    // of "ses_1" too).
    const std::string table = PartTable(part);
    std::string sql = "SELECT session, epoch, seq, rowid, kind, snippet(";
    sql += table;
    sql += ", 0, char(2), char(3), '…', 16) FROM ";
    sql += table;
    sql += " WHERE ";
    sql += table;
    sql += " MATCH ?1";
    if (query.session) sql += " AND session = ?3";
    sql += " ORDER BY rowid DESC LIMIT ?2";
    AS_ASSIGN_OR_RETURN(auto s, db.Cached(sql));
    s->Bind(1, match).Bind(2, I64(query.limit));
    if (query.session) s->Bind(3, query.session->str());
    while (true) {
      AS_ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      const std::int64_t rowid = s->Int(3);
      hits.push_back(store_internal::RankedHit{
          {rowid, static_cast<std::int64_t>(part)},
          SearchHit{SessionId(s->Text(0)), Cursor{Epoch(U64(s->Int(1))), Seq(U64(s->Int(2)))},
                    rowid / kRowsPerMs, s->Text(4), s->Text(5)}});
    }
  }
  return hits;
}

}  // namespace agentstream::sqlite
