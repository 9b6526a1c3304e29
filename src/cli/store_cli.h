// `agentstream store backup --to FILE` and `store restore --from FILE [--force]`: a copy of the
// SQLite store taken while a daemon runs on it, and the store made again from such a copy
// (docs/cli.md; docs/operations.md, "Backups"). The store is the one every offline command uses
// (--store, else the data directory's agentstream.db, either from the configuration file). The
// work is store/sqlite/sqlite_backup.h's; this file parses and reports. A PostgreSQL store is
// backed up with PostgreSQL's own tools, which the refusal names.
//
// `store copy [--from URL] --to URL [--from-data DIR] [--to-data DIR] [--merge] [--json]` moves
// a whole store between SQLite and PostgreSQL, either way (docs/operations.md, "Moving from SQLite
// to PostgreSQL"); the work is store/copy/store_copy.h's, and streams/streams_copy.h's for the
// generic streams, which it runs as a CopyPart. --from defaults to the configured store. Progress
// goes to stderr: a line rewritten in place on a terminal, JSON lines with --json.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace
class App;
}  // namespace CLI

namespace agentstream::cli {

class StoreCommands {
 public:
  // Registers `store` on `app`, which must outlive this object and be parsed before Run().
  explicit StoreCommands(CLI::App& app);
  ~StoreCommands();
  StoreCommands(const StoreCommands&) = delete;
  StoreCommands& operator=(const StoreCommands&) = delete;

  // Runs the `store` command that was parsed on the store `store_url` and returns its exit
  // code: 0 done; 2 refused with nothing changed (a store that is not SQLite, a missing,
  // unreadable, foreign, corrupt or newer backup, an existing backup file, a destination in use
  // or holding sessions without --force; for a copy: a store in use, a newer schema, other
  // sessions without --merge, sessions that differ); 1 reading or writing failed (a full disk
  // among them; nothing changed either, or for a copy: what was committed is whole and a rerun
  // finishes it). nullopt for another command. `data_dir` is the data directory (`--data`),
  // where the configured store's generic streams are.
  std::optional<int> Run(const std::string& store_url, const std::string& data_dir) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace agentstream::cli
