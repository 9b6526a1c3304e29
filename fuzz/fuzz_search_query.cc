// libFuzzer target: a search query as a person types it (search/query.h, QueryWords) run
// against the SQLite store's full-text index (store/sqlite/sqlite_search_index.cc, its FTS5 MATCH
// expression). Byte 0 picks a session filter (bit 0: the rest of the first line is a session id,
// quotes and all) and the limit (bits 1-4); the rest is the query. Checked: QueryWords accepts
// the text or says kInvalidArgument; words it gives are non-empty, at most kMaxQueryWords, each a
// substring of the text; every query of such words answers (no store syntax error, whatever the
// words) with at most `limit` hits, each one of the stored documents with a UTF-8 snippet whose
// match marks pair up; a stored word typed back is found.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/utf8.h"
#include "fuzz_check.h"
#include "search/query.h"
#include "store/sqlite/sqlite_log.h"

namespace agentstream {
namespace {

using fuzzing::Check;

// The documents every query runs against: a few sessions of text with quotes, operators and
// non-ASCII words, in a directory of this process's own, removed at exit.
struct Fixture {
  std::string dir;
  std::unique_ptr<EventLog> log;
  ~Fixture() {
    log.reset();
    std::filesystem::remove_all(dir);
  }
};

EventLog& Store() {
  static Fixture fixture = [] {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("fuzz_search_" + std::to_string(::getpid())))
            .string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    SqliteLogOptions options;
    options.path = dir + "/log.db";
    options.durability = Durability::kOs;
    auto opened = OpenSqliteEventLog(options);
    Check(opened.ok());
    std::unique_ptr<EventLog> out = std::move(*opened);
    const char* const texts[] = {"find the needle in \"the\" haystack", "NEAR(a b) OR c AND d*",
                                 "café naïve résumé", "x' OR '1'='1; --", "ses_a ses_b"};
    for (const char* id : {"ses_a", "ses\"b", "ses'c"}) {
      Check(out->CreateSession(SessionId(id), SessionMeta{"p", "/"}, {}).ok());
      std::vector<SearchDocument> docs;
      std::uint64_t seq = 0;
      for (const char* t : texts)
        docs.push_back({Cursor{Epoch(1), Seq(++seq)}, 1000, "user.message", t});
      Check(out->search_index()
                ->CommitDocuments({SessionId(id), std::nullopt, Cursor{Epoch(1), Seq(seq)}, docs})
                .ok());
    }
    return Fixture{dir, std::move(out)};
  }();
  return *fixture.log;
}

bool MarksPairUp(std::string_view snippet) {
  bool open = false;
  for (char c : snippet) {
    if (c == kMatchStart) {
      if (open) return false;
      open = true;
    } else if (c == kMatchEnd) {
      if (!open) return false;
      open = false;
    }
  }
  return !open;
}

void Run(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::uint8_t control = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  SearchQuery query;
  query.limit = 1 + ((control >> 1) & 0x0f);
  if (control & 1) {
    const std::size_t end = rest.find('\n');
    query.session = SessionId(std::string(rest.substr(0, end)));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  Result<std::vector<std::string>> words = QueryWords(rest);
  if (!words.ok()) {
    Check(words.status().code() == ErrorCode::kInvalidArgument);
    return;
  }
  Check(!words->empty() && words->size() <= kMaxQueryWords);
  for (const std::string& w : *words) Check(!w.empty() && rest.find(w) != std::string_view::npos);
  query.words = *words;
  Result<std::vector<SearchHit>> hits = Store().search_index()->Search(query);
  Check(hits.ok());
  Check(hits->size() <= query.limit);
  for (const SearchHit& hit : *hits) {
    Check(!query.session || hit.session == *query.session);
    Check(hit.cursor.epoch == Epoch(1) && hit.cursor.seq.value() >= 1 &&
          hit.cursor.seq.value() <= 5);
    Check(IsValidUtf8(hit.snippet) && MarksPairUp(hit.snippet));
  }
  // A word of a stored text, typed back, is found in every session that holds it.
  if (!query.session && query.words.size() == 1 && query.words[0] == "needle")
    Check(hits->size() == std::min<std::size_t>(3, query.limit));
}

}  // namespace
}  // namespace agentstream

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  agentstream::Run(data, size);
  return 0;
}
