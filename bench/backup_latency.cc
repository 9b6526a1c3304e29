// backup_latency: what `agentstream store backup` costs a running SQLite store (docs/benchmarks.md,
// "Backups"). Fills a store to --mb MiB (once; a later run reuses it), then, with --appenders
// threads each making synchronous one-event appends (fsync durability, as the daemon appends),
// measures each append's latency for the length of one backup with no backup running, then
// while a backup runs (BackupSqliteStore, the function behind `store backup`, on a thread and
// connections of its own), and prints the backup's time with p50/p99 of both.
//
//   backup_latency --dir DIR [--mb 256] [--appenders 64] [--pages-per-step 1024] [--rounds 3]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/event_codec.h"
#include "store/log_factory.h"
#include "store/sqlite/sqlite_backup.h"
#include "store/sqlite/sqlite_log.h"

using namespace agentstream;
using Clock = std::chrono::steady_clock;

namespace {

NewEvent Event(std::size_t bytes, std::uint64_t n) {
  std::string text = "event " + std::to_string(n) + " ";
  text.resize(bytes, 'x');
  return MakeNewEvent(Notice{NoticeLevel::kInfo, text});
}

// Appends 4 KiB events in batches to sessions fill-0, fill-1, ... until the file holds `mb` MiB.
bool Fill(const std::string& path, std::uint64_t mb) {
  auto log = OpenSqliteEventLog(SqliteLogOptions{.path = path, .durability = Durability::kOs});
  if (!log.ok()) return false;
  std::uint64_t n = 0;
  for (int s = 0; std::filesystem::file_size(path) < (mb << 20); ++s) {
    const SessionId id("fill-" + std::to_string(s));
    if (!(*log)->CreateSession(id, SessionMeta{"scripted", "/w", id.str()}, {}).ok()) return false;
    for (int b = 0; b < 64; ++b) {
      AppendRequest request;
      request.session = id;
      for (int i = 0; i < 32; ++i) request.events.push_back(Event(4000, n++));
      if (!(*log)->Append(std::move(request)).ok()) return false;
    }
  }
  return true;
}

struct Latencies {
  std::mutex mu;  // guards micros
  std::vector<double> micros;
};

// `appenders` threads appending one event at a time until `stop`; a latency is kept while
// `measure` is set.
std::vector<std::thread> StartAppenders(EventLog& log, int appenders, const std::atomic<bool>& stop,
                                        const std::atomic<bool>& measure, Latencies& out) {
  std::vector<std::thread> threads;
  for (int a = 0; a < appenders; ++a) {
    threads.emplace_back([&, a] {
      const SessionId id("load-" + std::to_string(a));
      (void)log.CreateSession(id, SessionMeta{"scripted", "/w", id.str()}, {});
      std::vector<double> mine;
      for (std::uint64_t n = 0; !stop.load(); ++n) {
        AppendRequest request;
        request.session = id;
        request.events = {Event(256, n)};
        const auto start = Clock::now();
        if (!log.Append(std::move(request)).ok()) std::abort();
        if (measure.load())
          mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
      std::lock_guard lock(out.mu);
      out.micros.insert(out.micros.end(), mine.begin(), mine.end());
    });
  }
  return threads;
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// One round: the appenders run `seconds` unmeasured warm-up, then are measured either for
// `idle_seconds` (no backup) or for the length of one backup. Returns the backup's seconds.
double Round(EventLog& log, const std::string& store, const std::string& backup, int appenders,
             int pages, double idle_seconds, Latencies& out) {
  std::atomic<bool> stop{false}, measure{false};
  auto threads = StartAppenders(log, appenders, stop, measure, out);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  measure = true;
  const auto start = Clock::now();
  double seconds = 0;
  if (idle_seconds > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_seconds));
  } else {
    std::filesystem::remove(backup);
    auto report = BackupSqliteStore(store, backup, {.pages_per_step = pages});
    if (!report.ok()) {
      std::fprintf(stderr, "backup: %s\n", report.status().ToString().c_str());
      std::abort();
    }
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  measure = false;
  stop = true;
  for (auto& t : threads) t.join();
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"backup_latency: backup time and append latency during a backup"};
  std::string dir;
  std::uint64_t mb = 256;
  int appenders = 64, pages = SqliteBackupOptions{}.pages_per_step, rounds = 3;
  app.add_option("--dir", dir, "directory of the store and its backup")->required();
  app.add_option("--mb", mb, "size of the store");
  app.add_option("--appenders", appenders, "synchronous appender threads");
  app.add_option("--pages-per-step", pages, "pages per backup step");
  app.add_option("--rounds", rounds, "backups (each with an idle round of its length)");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);
  const std::string store = dir + "/store.db", backup = dir + "/backup.db";
  if (!std::filesystem::exists(store) && !Fill(store, mb)) {
    std::fprintf(stderr, "cannot fill %s\n", store.c_str());
    return 1;
  }
  auto log = OpenSqliteEventLog(SqliteLogOptions{.path = store});
  if (!log.ok()) return 1;
  std::printf("store %.0f MiB, %d appenders, %d pages per step\n",
              static_cast<double>(std::filesystem::file_size(store)) / (1 << 20), appenders, pages);
  for (int r = 0; r < rounds; ++r) {
    Latencies during, idle;
    const double seconds = Round(**log, store, backup, appenders, pages, 0, during);
    Round(**log, store, backup, appenders, pages, seconds, idle);
    const double mib = static_cast<double>(std::filesystem::file_size(backup)) / (1 << 20);
    std::printf(
        "backup %.0f MiB in %.2f s | appends without: %zu, p50 %.2f ms, p99 %.2f ms | during: "
        "%zu, p50 %.2f ms, p99 %.2f ms\n",
        mib, seconds, idle.micros.size(), Percentile(idle.micros, 0.5) / 1000,
        Percentile(idle.micros, 0.99) / 1000, during.micros.size(),
        Percentile(during.micros, 0.5) / 1000, Percentile(during.micros, 0.99) / 1000);
  }
  std::filesystem::remove(backup);
  return 0;
}
