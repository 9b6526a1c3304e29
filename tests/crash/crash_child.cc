// The child of the crash test: appends to a few sessions of a SQLite log as fast as it can, with
// several appends in flight, and reports every acknowledged append on stdout as
// "SESSION LAST_SEQ\n". The payload of each event is the seq it is expected to receive, so the
// parent can tell a doubled or reordered event from a correct one. Runs until killed.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/event_codec.h"
#include "store/sqlite/sqlite_log.h"

using namespace agentstream;

namespace {

void Report(const std::string& line) {
  // One write per line: the parent may kill us between any two writes, never inside one line
  // shorter than PIPE_BUF.
  (void)!write(STDOUT_FILENO, line.data(), line.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: crash_child DB SESSIONS\n");
    return 2;
  }
  SqliteLogOptions options;
  options.path = argv[1];
  const int sessions = std::atoi(argv[2]);
  auto opened = OpenSqliteEventLog(options);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  EventLog& log = **opened;
  std::vector<std::thread> writers;
  for (int i = 0; i < sessions; ++i) {
    writers.emplace_back([&log, i] {
      const SessionId id("crash-" + std::to_string(i));
      auto created = log.CreateSession(id, SessionMeta{"scripted", "/crash", id.str()}, {});
      if (!created.ok() && created.status().code() != ErrorCode::kAlreadyExists) std::abort();
      auto tail = log.Tail(id);
      if (!tail.ok()) std::abort();
      std::uint64_t next = tail->seq.value() + 1;
      std::atomic<int> in_flight{0};
      while (true) {
        while (in_flight.load() >= 64) std::this_thread::yield();
        ++in_flight;
        AppendRequest request;
        request.session = id;
        request.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, std::to_string(next)}));
        ++next;
        log.AppendAsync(std::move(request), [&in_flight, id](Result<AppendResult> r) {
          if (!r.ok()) std::abort();
          Report(id.str() + " " + std::to_string(r->last_seq.value()) + "\n");
          --in_flight;
        });
      }
    });
  }
  Report("ready\n");
  for (auto& w : writers) w.join();
}
