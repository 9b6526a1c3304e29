// Internal to the store module: how the daemons sharing a PostgreSQL schema hear of each other's
// commits. The writer announces each commit's sessions with NOTIFY inside the commit's
// transaction (heard at COMMIT, never for a rollback); each log LISTENs on a connection of its
// own and tells its commit listeners, so a live reader on one daemon wakes for a commit made by
// another.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "pg/listen_thread.h"
#include "pg/pg.h"
#include "store/commit_listeners.h"
#include "store/postgres/txn.h"

namespace agentstream::pg {

// The channel of `schema` ("agentstream_commits" or "agentstream_commits:SCHEMA").
std::string CommitChannel(const std::string& schema);

// A commit notice as a NOTIFY payload: "EPOCH TAIL SESSION" (the id last, whatever it holds).
std::string EncodeCommitNotice(const std::string& session, Epoch epoch, Seq tail);
std::optional<CommitNotice> DecodeCommitNotice(const std::string& payload);

// The statement that announces the sessions `t` touched on `channel`, in its transaction (sent
// with its COMMIT); none when it touched none. A failure is the batch's.
std::optional<Statement> CommitAnnouncement(const Txn& t, const std::string& channel);

// Hears the commits another connection announced on a channel (a ListenThread), and tells
// `listeners`: a notice from a server process own() recognizes is this log's own commit, which
// the log told its listeners of already. A lost connection is reopened with `listen` every
// second; commits announced meanwhile reach live readers with the session's next commit.
std::unique_ptr<ListenThread> HearCommits(
    Conn listening, std::function<Result<Conn>()> listen, std::function<bool(int pid)> own,
    const std::shared_ptr<store_internal::CommitListeners>& listeners);

}  // namespace agentstream::pg
