#!/usr/bin/env bash
# The search index's FTS5 `detail` option, A/B in one run (docs/benchmarks.md, "Search"): copies
# the documents of a daemon's index (its four tables, schema 9; a data directory made by bench/search_bench.sh's generator
# and indexed by the daemon) into two fresh FTS5 tables, `detail=full` (token positions, schema 6)
# and `detail=column` (none, schema 7 on), then times the same MATCH queries on each table,
# ROUNDS times one table then the other (sqlite3's `.timer`, millisecond resolution), and prints
# each median.
# Usage: bench/fts_detail_ab.sh DATA_DIR [ROUNDS]   (needs the sqlite3 shell: apt-get install sqlite3)
set -euo pipefail
db="${1:?usage: fts_detail_ab.sh DATA_DIR [ROUNDS]}/agentstream.db"
rounds=${2:-15}
copies=$(mktemp -d "${TMPDIR:-/tmp}/agentstream-fts-ab.XXXXXX")
trap 'rm -rf "$copies"' EXIT
for detail in full column; do
  sqlite3 "$copies/$detail.db" <<SQL
ATTACH 'file:$db?mode=ro' AS src;
CREATE VIRTUAL TABLE t USING fts5(body, session, tokenize = 'unicode61 remove_diacritics 2', detail = $detail);
INSERT INTO t(rowid, body, session) SELECT rowid, body, session FROM src.search_documents_0
  UNION ALL SELECT rowid, body, session FROM src.search_documents_1
  UNION ALL SELECT rowid, body, session FROM src.search_documents_2
  UNION ALL SELECT rowid, body, session FROM src.search_documents_3;
SQL
done
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] * 1000 }'; }
for query in '"fixture" AND "ctest"' '"restart" AND "reopen"' '"fixture"' '"123"'; do
  for detail in full column; do
    for _ in $(seq 1 "$rounds"); do
      printf '.timer on\nSELECT count(*) FROM (SELECT rowid FROM t WHERE t MATCH '"'"'body : (%s)'"'"' ORDER BY rowid DESC LIMIT 21);\n' "$query" |
        sqlite3 "$copies/$detail.db" | grep -o 'real [0-9.]*' | cut -d' ' -f2
    done | median | xargs printf '%-26s detail=%-6s median %8.2f ms\n' "$query" "$detail"
  done
done
