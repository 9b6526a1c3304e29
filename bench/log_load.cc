// log_load: whole-log throughput of the SQLite EventLog (or, with --store, any other backend,
// such as a PostgreSQL server) under concurrent appenders.
//
// For 1, 16 and 64 appenders writing 256-byte events across 100 sessions it measures
//   - pipelined appends: each appender keeps up to --in-flight (64) appends outstanding;
//   - synchronous appends: each appender waits for every acknowledgement;
// and, in the same run, the machine's own fsync rate on the same filesystem, so the synchronous
// figures can be compared with what group commit allows (appenders / fsync latency).
//
//   log_load --dir /tmp/x [--seconds 3] [--durability fsync|os] [--store postgresql://...]
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/event_codec.h"
#include "store/log_factory.h"
#include "store/sqlite/sqlite_log.h"

using namespace agentstream;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kSessions = 100;

// A shared store keeps earlier runs' sessions: each run names its own.
SessionId SessionName(std::uint64_t i) {
  return SessionId("load-" + std::to_string(::getpid()) + "-" + std::to_string(i));
}

NewEvent Event256(std::uint64_t n) {
  std::string text = "event " + std::to_string(n) + " ";
  // {"level":"info","text":"..."} is 27 bytes of frame; fill to 256 bytes of payload.
  text.resize(256 - 27, 'x');
  NewEvent e = MakeNewEvent(Notice{NoticeLevel::kInfo, text});
  return e;
}

// fsyncs per second on `dir`'s filesystem. `append`: each round appends 12 KiB to a growing
// file and fdatasyncs it, as a WAL commit of a few pages does; otherwise each round overwrites
// one 4 KiB block of a small file (the cheapest fsync the disk offers).
double FsyncRate(const std::string& dir, double seconds, bool append) {
  const std::string path = dir + "/fsync-probe";
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return 0;
  static char block[12288] = {};
  const std::size_t size = append ? sizeof block : 4096;
  std::uint64_t n = 0;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    const off_t offset = static_cast<off_t>(append ? n * size : (n % 256) * size);
    if (pwrite(fd, block, size, offset) < 0) break;
    if (fdatasync(fd) != 0) break;
    ++n;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  close(fd);
  std::filesystem::remove(path);
  return n / elapsed;
}

struct RunResult {
  double appends_per_second = 0;
  std::uint64_t failures = 0;
};

// Each appender is a thread that keeps up to `in_flight` appends outstanding. Acknowledgements
// only count down; the appender sleeps only when its window is full, as a provider pump that
// hands events to the log and moves on would, until half of it is acknowledged (a condition
// variable: a wake-up per half window rather than per append, and no spinning, since the
// harness's CPU is the store's loss on two cores).
RunResult Run(EventLog& log, int appenders, int in_flight, double seconds) {
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> done{0}, failures{0};
  std::vector<SessionId> sessions;
  for (int s = 0; s < kSessions; ++s) sessions.push_back(SessionName(s));
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int a = 0; a < appenders; ++a) {
    threads.emplace_back([&, a] {
      std::mutex mu;
      std::condition_variable window;
      int outstanding = 0;  // guarded by mu
      std::uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        {
          std::unique_lock lock(mu);
          if (outstanding >= in_flight)
            window.wait(lock, [&] { return outstanding <= in_flight / 2; });
          ++outstanding;
        }
        AppendRequest request;
        request.session = sessions[(a + n * appenders) % kSessions];
        request.events.push_back(Event256(n++));
        log.AppendAsync(std::move(request), [&](Result<AppendResult> r) {
          if (r.ok())
            done.fetch_add(1, std::memory_order_relaxed);
          else
            failures.fetch_add(1, std::memory_order_relaxed);
          std::lock_guard lock(mu);
          --outstanding;
          if (outstanding == in_flight / 2 || outstanding == 0) window.notify_one();
        });
      }
      std::unique_lock lock(mu);
      window.wait(lock, [&] { return outstanding == 0; });
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const std::uint64_t counted = done.load();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  stop = true;
  for (auto& t : threads) t.join();
  return RunResult{counted / elapsed, failures.load()};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"log_load: EventLog append throughput"};
  std::string dir = "/tmp/agentstream-load";
  double seconds = 3;
  std::string durability = "fsync";
  int in_flight = 64;
  app.add_option("--dir", dir, "directory for the database (on the filesystem to measure)");
  app.add_option("--seconds", seconds, "duration of each measurement");
  app.add_option("--durability", durability, "fsync or os")->check(CLI::IsMember({"fsync", "os"}));
  app.add_option("--in-flight", in_flight, "appends each pipelined appender keeps outstanding");
  std::string only;
  app.add_option("--only", only, "run one configuration, e.g. pipelined:64");
  int linger = 200;
  bool serial = false;
  app.add_flag("--serial-syncs", serial,
               "sync inside COMMIT (SqliteLogOptions::overlap_syncs=false)");
  app.add_option("--linger-us", linger, "SqliteLogOptions::commit_linger_micros");
  std::string store;
  app.add_option("--store", store,
                 "a store URL (postgresql://...) instead of SQLite in --dir; the fsync rate is "
                 "still that of --dir's filesystem");
  std::size_t writers = 0;
  app.add_option("--writers", writers,
                 "with --store postgresql://...: writer connections (0: the log's default)");
  CLI11_PARSE(app, argc, argv);

  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  SqliteLogOptions options;
  options.path = dir + "/load.db";
  options.durability = durability == "fsync" ? Durability::kFsync : Durability::kOs;
  options.commit_linger_micros = linger;
  options.overlap_syncs = !serial;
  auto opened = store.empty() ? OpenSqliteEventLog(options)
                              : OpenEventLog(StoreConfig{.url = store,
                                                         .durability = options.durability,
                                                         .limits = options.limits,
                                                         .writer_connections = writers});
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  EventLog& log = **opened;
  for (int s = 0; s < kSessions; ++s) {
    auto created = log.CreateSession(SessionName(static_cast<std::uint64_t>(s)),
                                     SessionMeta{"scripted", "/load"}, {});
    if (!created.ok()) return 1;
  }
  const double overwrite_rate = FsyncRate(dir, seconds / 2, false);
  const double fsync_rate = FsyncRate(dir, seconds / 2, true);
  std::printf("durability=%s sessions=%d payload=256B seconds=%.1f\n", durability.c_str(),
              kSessions, seconds);
  std::printf(
      "machine fsync rate: %.0f/s appending 12 KiB (latency %.3f ms), %.0f/s overwriting 4 KiB\n",
      fsync_rate, 1000.0 / fsync_rate, overwrite_rate);
  std::printf("group bound = appenders x in-flight x appending fsync rate\n\n");
  std::printf("%-12s %9s %14s %16s %8s %10s %10s %9s\n", "mode", "appenders", "appends/s",
              "group bound/s", "ratio", "per commit", "commit ms", "sync ms");
  for (const char* mode : {"pipelined", "synchronous"}) {
    const bool pipelined = std::string(mode) == "pipelined";
    for (int appenders : {1, 16, 64}) {
      if (!only.empty() && only != std::string(mode) + ":" + std::to_string(appenders)) continue;
      const LogStats before = log.Stats();
      RunResult r = Run(log, appenders, pipelined ? in_flight : 1, seconds);
      const LogStats after = log.Stats();
      const double commits = static_cast<double>(after.commits - before.commits);
      // With one fsync per commit, a commit can acknowledge every append outstanding when it began.
      const double bound = fsync_rate * appenders * (pipelined ? in_flight : 1);
      std::printf("%-12s %9d %14.0f %16.0f %7.0f%% %10.1f %10.3f %9.3f%s\n", mode, appenders,
                  r.appends_per_second, bound, 100.0 * r.appends_per_second / bound,
                  (after.appends - before.appends) / commits,
                  (after.commit_micros - before.commit_micros) / commits / 1000.0,
                  (after.sync_micros - before.sync_micros) / commits / 1000.0,
                  r.failures ? "  FAILURES" : "");
      std::fflush(stdout);
    }
  }
  return 0;
}
