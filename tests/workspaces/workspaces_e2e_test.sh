#!/usr/bin/env bash
# Agents in git worktrees of their own (docs/workspaces.md), against a real daemon on SQLite and
# a real git repository made here: two scripted agents get worktrees of one repository on their
# own branches; files are edited in each; git actions from the CLI (commit, a fast-forward merge
# into the checked-out main, a conflicting merge that changes nothing, a push to a bare remote,
# discard); each agent's diff (text/x-diff and JSON) equals what
# `git diff BASE` (plus the untracked file) says; a fork gets its own worktree from the parent's
# branch as it is now; the daemon is restarted and finds every worktree again, one deleted by
# hand reported missing, one removed on request reported removed; closing keeps a worktree, removal refuses uncommitted changes unless
# forced; and bad input (a cwd outside a repository, an existing branch, a base that does not
# exist, a branch name git refuses, a path with "..", git missing from PATH) is a 4xx that
# creates nothing.
#   workspaces_e2e_test.sh AGENTSTREAM_BINARY
set -u
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
bin=$1
dir=$E2E_DIR
unset AGENTSTREAM_TOKEN
command -v git >/dev/null || skip "git is not installed"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t

repo=$dir/repo
git init -q -b main "$repo" || fail "git init"
mkdir -p "$repo/src"
printf 'one\ntwo\nthree\n' >"$repo/src/shared.txt"
printf 'hello\n' >"$repo/README.md"
git -C "$repo" add -A && git -C "$repo" commit -q -m first || fail "first commit"
head=$(git -C "$repo" rev-parse HEAD)

start_daemon serve
contract_proxy api serve  # every answer checked against docs/openapi.yaml (tests/lib/e2e.sh)
export AGENTSTREAM_URL=$api_url
worktrees=$(daemon_data serve)/worktrees

# http METHOD PATH [BODY]: prints the body, then the status on a last line.
http() {
  curl -s -X "$1" "$api_url$2" -H 'content-type: application/json' ${3:+--data "$3"} \
    -w '\n%{http_code}'
}
status_of() { tail -n 1 <<<"$1"; }
body_of() { sed '$d' <<<"$1"; }
json_field() { grep -o "\"$1\":\"[^\"]*\"" | head -n 1 | cut -d'"' -f4; }

# ---- two agents, each in a worktree of the same repository ----
a=$("$bin" agents new --provider scripted --cwd "$repo/src" --worktree) || fail "agents new --worktree"
b=$("$bin" agents new --provider scripted --cwd "$repo" --worktree feature/b --base main) ||
  fail "agents new --worktree feature/b"
[ -d "$worktrees/$a" ] || fail "no worktree for $a under $worktrees"
[ -d "$worktrees/$b" ] || fail "no worktree for $b"
[ "$(git -C "$worktrees/$a" rev-parse --abbrev-ref HEAD)" = "agentstream/$a" ] || fail "a's branch"
[ "$(git -C "$worktrees/$b" rev-parse --abbrev-ref HEAD)" = "feature/b" ] || fail "b's branch"
"$bin" agents show "$a" --json | grep -q "\"cwd\":\"$worktrees/$a\"" || fail "a does not run in its worktree"
"$bin" events "$a" --json >"$dir/a.events" 2>&1 || true
# Every client sees the worktree: it is an event of the session.
curl -s "$api_url/v1/agents/$a/events" >"$dir/a.events"
grep -q '"kind":"workspace.created"' "$dir/a.events" || fail "no workspace.created: $(cat "$dir/a.events")"
grep -q "\"baseCommit\":\"$head\"" "$dir/a.events" || fail "workspace.created lacks the base commit"
grep -q "\"branch\":\"agentstream/$a\"" "$dir/a.events" || fail "workspace.created lacks the branch"
"$bin" send "$a" "hello" --wait >/dev/null || fail "a turn in the worktree"

# Both edit the same file; a adds an untracked file, b commits its change.
printf 'one\nTWO (a)\nthree\n' >"$worktrees/$a/src/shared.txt"
printf 'new\nfile\n' >"$worktrees/$a/added.txt"
printf 'one\ntwo\nthree (b)\n' >"$worktrees/$b/src/shared.txt"
git -C "$worktrees/$b" commit -q -am "b's change" || fail "commit in b's worktree"
[ "$(cat "$repo/src/shared.txt")" = "$(printf 'one\ntwo\nthree')" ] || fail "the main checkout changed"

"$bin" diff "$a" >"$dir/a.diff" || fail "diff a"
{ git -C "$worktrees/$a" diff --full-index "$head"
  (cd "$worktrees/$a" && git diff --no-index --full-index -- /dev/null added.txt); } >"$dir/a.expected"
cmp -s "$dir/a.diff" "$dir/a.expected" || fail "a's diff is not git's: $(diff "$dir/a.expected" "$dir/a.diff")"
git -C "$worktrees/$a" status --porcelain | grep -q '^?? added.txt' || fail "the diff changed a's index"
curl -s -H 'accept: text/x-diff' "$api_url/v1/agents/$b/diff" >"$dir/b.diff"
git -C "$worktrees/$b" diff --full-index "$head" >"$dir/b.expected"
cmp -s "$dir/b.diff" "$dir/b.expected" || fail "b's diff is not git's: $(cat "$dir/b.diff")"
[ -s "$dir/b.diff" ] || fail "b's committed change is not in its diff"
curl -s "$api_url/v1/agents/$b/diff?against=feature/b" -H 'accept: text/x-diff' >"$dir/b.self"
[ ! -s "$dir/b.self" ] || fail "b against its own branch is not empty: $(cat "$dir/b.self")"

"$bin" diff "$a" --json >"$dir/a.json" || fail "diff --json"
grep -q '"path":"src/shared.txt","status":"modified"' "$dir/a.json" || fail "JSON diff lacks shared.txt: $(cat "$dir/a.json")"
grep -q '"path":"added.txt","status":"added"' "$dir/a.json" || fail "JSON diff lacks the untracked file"
grep -q '"additions":3,"deletions":1' "$dir/a.json" || fail "JSON diff totals: $(cat "$dir/a.json")"
grep -q '"truncated":false' "$dir/a.json" || fail "JSON diff truncated"
grep -q '"+TWO (a)"' "$dir/a.json" || fail "JSON diff lacks the hunk line"
small=$(curl -s -D "$dir/small.headers" "$api_url/v1/agents/$a/diff?maxBytes=1024")
grep -q '"truncated":false' <<<"$small" || fail "a small diff is within 1024 bytes: $small"
r=$(http GET "/v1/agents/$a/diff?maxBytes=10")
[ "$(status_of "$r")" = 400 ] || fail "maxBytes=10 is refused: $r"
r=$(http GET "/v1/agents/$a/diff?against=no-such-ref")
[ "$(status_of "$r")" = 400 ] || fail "against a missing ref: $r"

# ---- a fork: its own worktree, from the parent's branch as it is now ----
cursor=$("$bin" agents show "$b" --json | json_field cursor)
f=$("$bin" fork "$b" --at "$cursor") || fail "fork b"
[ -d "$worktrees/$f" ] || fail "the fork has no worktree"
[ "$(git -C "$worktrees/$f" rev-parse HEAD)" = "$(git -C "$worktrees/$b" rev-parse HEAD)" ] ||
  fail "the fork does not start at b's branch as it is now"
[ "$(git -C "$worktrees/$f" rev-parse --abbrev-ref HEAD)" = "agentstream/$f" ] || fail "the fork's branch"
curl -s "$api_url/v1/agents/$f/events" | grep -q "\"base\":\"feature/b\"" || fail "the fork's workspace.created"
"$bin" agents show "$f" --json | grep -q "\"cwd\":\"$worktrees/$f\"" || fail "the fork does not run in its worktree"
"$bin" diff "$f" >"$dir/f.diff" || fail "diff of the fork"
[ ! -s "$dir/f.diff" ] || fail "a fresh fork has changes: $(cat "$dir/f.diff")"

# ---- restart: the worktrees come from the log; one deleted by hand is missing ----
kill_daemon serve
rm -rf "$worktrees/$f"
start_daemon serve
export AGENTSTREAM_URL=$api_url
"$bin" worktrees >"$dir/worktrees.txt" || fail "worktrees"
grep -Eq "^$a +present +open +agentstream/$a" "$dir/worktrees.txt" || fail "worktrees lacks a: $(cat "$dir/worktrees.txt")"
grep -Eq "^$b +present +open +feature/b" "$dir/worktrees.txt" || fail "worktrees lacks b"
grep -Eq "^$f +missing" "$dir/worktrees.txt" || fail "the deleted worktree is not missing: $(cat "$dir/worktrees.txt")"
"$bin" diff "$a" >"$dir/a.again" || fail "diff after the restart"
cmp -s "$dir/a.again" "$dir/a.expected" || fail "a's diff changed across the restart"
r=$(http GET "/v1/agents/$f/diff")
[ "$(status_of "$r")" = 404 ] || fail "a missing worktree's diff is a 404: $r"
grep -q "is missing" <<<"$r" || fail "the 404 says the worktree is missing: $r"

# ---- git actions from the CLI: commit, merge (a conflict changes nothing), push, discard ----
remote=$dir/remote.git
git init -q --bare "$remote" && git -C "$repo" remote add origin "$remote" || fail "a bare remote"
c=$("$bin" agents new --provider scripted --cwd "$repo" --worktree feature/c) || fail "agents new c"
printf 'one\ntwo\nthree (c)\n' >"$worktrees/$c/src/shared.txt"
out=$("$bin" git commit "$c" -m "c's change") || fail "git commit: $out"
grep -Eq "^commit committed [0-9a-f]{12}: c's change$" <<<"$out" || fail "git commit said: $out"
[ "$(git -C "$repo" log -1 --format=%an feature/c)" = agentstream ] ||
  fail "the commit's author is not agentstream's (the test's GIT_AUTHOR_NAME must not reach git)"
out=$("$bin" git merge "$c") || fail "git merge: $out"
grep -Eq "^merge fast-forward [0-9a-f]{12} into main$" <<<"$out" || fail "git merge said: $out"
[ "$(cat "$repo/src/shared.txt")" = "$(printf 'one\ntwo\nthree (c)')" ] || fail "main's checkout did not move"
# b's committed change is to the same line: its merge conflicts, exits 1 and changes nothing.
main_before=$(git -C "$repo" rev-parse main)
out=$("$bin" git merge "$b")
code=$?
[ "$code" = 1 ] || fail "a conflicting merge exits 1 (got $code): $out"
grep -q "^merge conflict into main" <<<"$out" || fail "git merge of b said: $out"
grep -q "^  src/shared.txt$" <<<"$out" || fail "the conflict does not name src/shared.txt: $out"
[ "$(git -C "$repo" rev-parse main)" = "$main_before" ] || fail "a conflicting merge moved main"
[ -z "$(git -C "$repo" status --porcelain)" ] || fail "a conflicting merge left changes in the checkout"
out=$("$bin" git push "$c") || fail "git push: $out"
grep -Eq "^push pushed [0-9a-f]{12} to origin$" <<<"$out" || fail "git push said: $out"
[ "$(git -C "$remote" rev-parse feature/c)" = "$(git -C "$repo" rev-parse feature/c)" ] ||
  fail "the remote lacks feature/c"
printf 'scratch\n' >"$worktrees/$c/scratch.txt"
out=$("$bin" git discard "$c") || fail "git discard: $out"
[ ! -e "$worktrees/$c/scratch.txt" ] || fail "discard kept scratch.txt"
"$bin" git discard "$c" >/dev/null 2>&1 && fail "a second discard found something to discard"
"$bin" git push "$c" --remote nowhere >/dev/null 2>&1 && fail "a push to an unknown remote succeeded"
[ "$(curl -s "$api_url/v1/agents/$c/events" | grep -o '"kind":"workspace.action"' | wc -l)" = 4 ] ||
  fail "c's log does not record its four actions"
curl -s "$api_url/v1/agents/$b/events" | grep -q '"outcome":"conflict"' || fail "b's log lacks the conflict"
"$bin" agents rm "$c" --remove-worktree >/dev/null || fail "removing c's worktree"

# ---- close: kept by default; removal refuses uncommitted changes unless forced ----
"$bin" agents rm "$b" >/dev/null || fail "close b"
[ -d "$worktrees/$b" ] || fail "closing removed b's worktree"
"$bin" worktrees | grep -Eq "^$b +present +closed" || fail "b is not listed closed"
r=$(http DELETE "/v1/agents/$a?removeWorktree=true")
[ "$(status_of "$r")" = 409 ] || fail "removing a dirty worktree is a 409: $r"
grep -q "uncommitted changes" <<<"$r" || fail "the 409 names the uncommitted changes: $r"
[ -f "$worktrees/$a/added.txt" ] || fail "a refused removal touched the worktree"
"$bin" agents show "$a" --json | grep -q '"closed":false' || fail "a refused removal closed the agent"
"$bin" agents rm "$a" --remove-worktree --force >/dev/null || fail "forced removal"
[ ! -e "$worktrees/$a" ] || fail "a's worktree is still there"
git -C "$repo" rev-parse --verify --quiet "refs/heads/agentstream/$a" >/dev/null || fail "a's branch was deleted"
curl -s "$api_url/v1/agents/$a/events" | grep -q '"kind":"workspace.removed"' || fail "no workspace.removed"
"$bin" agents rm "$b" --remove-worktree >/dev/null || fail "removing b's clean worktree"
[ ! -e "$worktrees/$b" ] || fail "b's worktree is still there"
"$bin" worktrees >"$dir/worktrees.txt" || fail "worktrees after the removals"
grep -Eq "^$a +removed +closed" "$dir/worktrees.txt" || fail "a removed worktree is not listed removed: $(cat "$dir/worktrees.txt")"
grep -Eq "^$b +removed +closed" "$dir/worktrees.txt" || fail "b is not listed removed"
grep -Eq "^$f +missing" "$dir/worktrees.txt" || fail "the worktree deleted by hand is no longer missing"
# A restarted daemon tells them apart from the logs alone.
kill_daemon serve
start_daemon serve
export AGENTSTREAM_URL=$api_url
"$bin" worktrees >"$dir/worktrees.txt" || fail "worktrees after a restart"
grep -Eq "^$a +removed +closed" "$dir/worktrees.txt" || fail "a is not removed after a restart: $(cat "$dir/worktrees.txt")"
grep -Eq "^$f +missing" "$dir/worktrees.txt" || fail "f is not missing after a restart"

# ---- bad input: a clear 4xx, nothing created ----
mkdir -p "$dir/plain"
git -C "$repo" branch taken
before=$(ls "$worktrees" | wc -l)
branches=$(git -C "$repo" branch --list | wc -l)
sessions=$("$bin" agents ls --all --json | grep -o '"id":"ses_[^"]*"' | wc -l)
expect_refused() {  # expect_refused STATUS WORDS BODY
  local r
  r=$(http POST /v1/agents "$3")
  [ "$(status_of "$r")" = "$1" ] || fail "expected $1 for $3, got: $r"
  grep -q "$2" <<<"$r" || fail "the error for $3 does not say \"$2\": $r"
}
expect_refused 400 "not in a git repository" "{\"provider\":\"scripted\",\"cwd\":\"$dir/plain\",\"worktree\":{}}"
expect_refused 409 "exists" "{\"provider\":\"scripted\",\"cwd\":\"$repo\",\"worktree\":{\"branch\":\"taken\"}}"
expect_refused 400 "not a commit" "{\"provider\":\"scripted\",\"cwd\":\"$repo\",\"worktree\":{\"base\":\"no-such-base\"}}"
expect_refused 400 "not a valid name" "{\"provider\":\"scripted\",\"cwd\":\"$repo\",\"worktree\":{\"branch\":\"bad..name\"}}"
expect_refused 400 '\.\.' "{\"provider\":\"scripted\",\"cwd\":\"$repo/src/..\",\"worktree\":true}"
expect_refused 400 "worktree must be" "{\"provider\":\"scripted\",\"cwd\":\"$repo\",\"worktree\":3}"
expect_refused 400 "unknown provider" "{\"provider\":\"nope\",\"cwd\":\"$repo\",\"worktree\":{}}"
[ "$(ls "$worktrees" | wc -l)" = "$before" ] || fail "a refused create left a worktree: $(ls "$worktrees")"
[ "$(git -C "$repo" branch --list | wc -l)" = "$branches" ] || fail "a refused create left a branch"
[ "$("$bin" agents ls --all --json | grep -o '"id":"ses_[^"]*"' | wc -l)" = "$sessions" ] ||
  fail "a refused create left an agent"

# git missing from the daemon's PATH (only the daemon's: the test's own commands keep theirs).
kill_daemon serve
printf '#!/bin/sh\nPATH=/nonexistent exec "%s" "$@"\n' "$bin" >"$dir/agentstream-without-git"
chmod +x "$dir/agentstream-without-git"
E2E_BIN=$dir/agentstream-without-git
start_daemon serve
export AGENTSTREAM_URL=$api_url
expect_refused 400 "cannot run git" "{\"provider\":\"scripted\",\"cwd\":\"$repo\",\"worktree\":{}}"
[ "$(ls "$worktrees" | wc -l)" = "$before" ] || fail "a create without git left a worktree"
echo "PASS"
