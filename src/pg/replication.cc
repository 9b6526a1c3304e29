#include "pg/replication.h"

#include <algorithm>

namespace agentstream::pg {

Result<ReplicationState> ReadReplication(Conn& conn) {
  ReplicationState state;
  AS_ASSIGN_OR_RETURN(Rows settings, conn.Exec("SELECT current_setting('synchronous_commit'), "
                                               "current_setting('synchronous_standby_names')"));
  if (settings.size() == 1) {
    state.synchronous_commit = settings.Text(0, 0);
    state.synchronous_standby_names = settings.Text(0, 1);
  }
  AS_ASSIGN_OR_RETURN(Rows standbys, conn.Exec("SELECT coalesce(application_name, ''), "
                                               "coalesce(sync_state, '') FROM pg_stat_replication "
                                               "ORDER BY 1"));
  for (int i = 0; i < standbys.size(); ++i)
    state.standbys.push_back(Standby{standbys.Text(i, 0), standbys.Text(i, 1)});
  return state;
}

ReplicationVerdict JudgeReplication(const ReplicationState& state) {
  using Level = ReplicationVerdict::Level;
  const std::string& commit = state.synchronous_commit;
  const bool named = !state.synchronous_standby_names.empty();
  const bool readable = std::all_of(state.standbys.begin(), state.standbys.end(),
                                    [](const Standby& s) { return !s.sync_state.empty(); });
  const bool sync_connected = std::any_of(
      state.standbys.begin(), state.standbys.end(),
      [](const Standby& s) { return s.sync_state == "sync" || s.sync_state == "quorum"; });
  if (commit == "off" || commit == "local") {
    return {Level::kWarn, "local_commit",
            "synchronous_commit is " + commit +
                ": an acknowledged append can be lost when the server fails" +
                (commit == "off" ? " or crashes" : " over to a standby")};
  }
  if (named && state.standbys.empty()) {
    return {Level::kWarn, "no_sync_standby",
            "synchronous_standby_names is set but no standby is connected: every commit waits "
            "until one is"};
  }
  if (named && readable && !sync_connected) {
    return {Level::kWarn, "no_sync_standby",
            "no connected standby matches synchronous_standby_names: every commit waits until "
            "one does"};
  }
  if (named) {
    return {Level::kInfo, "synchronous",
            "a synchronous standby (" + state.synchronous_standby_names + ", synchronous_commit " +
                commit + "): nothing acknowledged is lost when it is promoted"};
  }
  if (!state.standbys.empty()) {
    return {Level::kWarn, "asynchronous",
            std::to_string(state.standbys.size()) +
                " standby(s) replicate asynchronously: the last acknowledged appends can be lost "
                "when one is promoted (set synchronous_standby_names)"};
  }
  return {Level::kInfo, "single",
          "no standby: the store is down while its server is, and nothing acknowledged is lost "
          "unless the server's disk is"};
}

}  // namespace agentstream::pg
