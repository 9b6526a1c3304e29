// In-process figures of the SQLite EventLog:
//   - the time to read a 100-event page from a session of 1,000,000 events against one of 1,000
//     (forward from a random seq, and the tail page backward);
//   - the bytes of memory per open idle session (the writer's session cache).
// With AGENTSTREAM_BENCH_PG (a postgresql:// URL) the page reads are of the PostgreSQL log
// instead, in a schema of the run's own, dropped at exit:
//   AGENTSTREAM_BENCH_PG=postgresql://... log_bench --benchmark_filter=Read
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "core/event_codec.h"
#include "pg/pg.h"
#include "store/postgres/postgres_log.h"
#include "store/sqlite/sqlite_log.h"

using namespace agentstream;

// tcmalloc's (gperftools/malloc_extension_c.h), declared weak: null when the program is not
// linked with it (HeapInUse).
extern "C" int MallocExtension_GetNumericProperty(const char* property, std::size_t* value)
    __attribute__((weak));

namespace {

const std::string kDir = "/tmp/agentstream-log-bench";

NewEvent Event256(std::uint64_t n) {
  std::string text = "event " + std::to_string(n) + " ";
  text.resize(256 - 27, 'x');
  return MakeNewEvent(Notice{NoticeLevel::kInfo, text});
}

// The PostgreSQL server of AGENTSTREAM_BENCH_PG, or null.
const char* BenchServer() { return std::getenv("AGENTSTREAM_BENCH_PG"); }

// The schema of this run on that server, dropped when the process ends.
const std::string& BenchSchema() {
  static const std::string schema = "log_bench_" + std::to_string(::getpid());
  static const struct Dropper {
    ~Dropper() {
      if (Result<pg::Conn> conn = pg::Conn::Open(BenchServer()); conn.ok())
        (void)conn->ExecScript("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  } dropper;
  return schema;
}

Result<std::unique_ptr<EventLog>> OpenBenchLog() {
  if (BenchServer() != nullptr) {
    PostgresLogOptions options;
    options.conninfo = BenchServer();
    options.schema = BenchSchema();
    options.durability = Durability::kOs;
    return OpenPostgresEventLog(options);
  }
  std::filesystem::remove_all(kDir);
  std::filesystem::create_directories(kDir);
  SqliteLogOptions options;
  options.path = kDir + "/bench.db";
  options.durability = Durability::kOs;  // setup speed only; reads do not depend on it
  return OpenSqliteEventLog(options);
}

// One log holding a small and a large session, built once per process.
EventLog& SharedLog() {
  static std::unique_ptr<EventLog> log = [] {
    auto opened = OpenBenchLog();
    if (!opened.ok()) std::abort();
    std::unique_ptr<EventLog> l = std::move(opened).value();
    for (auto [name, count] : {std::pair{"small", 1000}, std::pair{"large", 1000000}}) {
      if (!l->CreateSession(SessionId(name), SessionMeta{"scripted", "/bench"}, {}).ok())
        std::abort();
      std::atomic<int> pending{0};
      for (int done = 0; done < count;) {
        AppendRequest request;
        request.session = SessionId(name);
        for (int i = 0; i < 1000 && done < count; ++i, ++done)
          request.events.push_back(Event256(done));
        while (pending.load() > 64) std::this_thread::yield();
        ++pending;
        l->AppendAsync(std::move(request), [&](Result<AppendResult> r) {
          if (!r.ok()) std::abort();
          --pending;
        });
      }
      while (pending.load() > 0) std::this_thread::yield();
    }
    return l;
  }();
  return *log;
}

void BM_ReadPageForward(benchmark::State& state) {
  EventLog& log = SharedLog();
  const std::uint64_t events = static_cast<std::uint64_t>(state.range(0));
  const SessionId session(events == 1000 ? "small" : "large");
  std::mt19937_64 rng(42);
  for (auto _ : state) {
    const Seq from(rng() % (events - 100) + 1);
    auto page =
        log.Read(ReadRequest{session, std::nullopt, ReadDirection::kForward, from, 100, 1 << 20});
    if (!page.ok() || page->events.size() != 100) state.SkipWithError("short page");
    benchmark::DoNotOptimize(page);
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_ReadPageForward)->Arg(1000)->Arg(1000000)->Unit(benchmark::kMicrosecond);

void BM_ReadTailPage(benchmark::State& state) {
  EventLog& log = SharedLog();
  const SessionId session(state.range(0) == 1000 ? "small" : "large");
  for (auto _ : state) {
    auto page = log.Read(
        ReadRequest{session, std::nullopt, ReadDirection::kBackward, Seq(0), 100, 1 << 20});
    if (!page.ok() || page->events.size() != 100) state.SkipWithError("short page");
    benchmark::DoNotOptimize(page);
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_ReadTailPage)->Arg(1000)->Arg(1000000)->Unit(benchmark::kMicrosecond);

// The bytes the program's allocator has handed out and not had back: tcmalloc's own count when
// the program is linked with it (the C library's mallinfo2 then sees none of them), else
// mallinfo2's.
std::size_t HeapInUse() {
  std::size_t bytes = 0;
  if (MallocExtension_GetNumericProperty != nullptr &&
      MallocExtension_GetNumericProperty("generic.current_allocated_bytes", &bytes) != 0)
    return bytes;
  return mallinfo2().uordblks;
}

// Heap bytes per open idle session, not counting SQLite's own (bounded) page cache.
void BM_IdleSessionMemory(benchmark::State& state) {
  const int sessions = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const std::string dir = kDir + "-idle";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    SqliteLogOptions options;
    options.path = dir + "/idle.db";
    options.durability = Durability::kOs;
    auto opened = OpenSqliteEventLog(options);
    if (!opened.ok()) std::abort();
    EventLog& log = **opened;
    auto measure = [] {
      sqlite3_int64 sqlite_now = 0, sqlite_peak = 0;
      sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &sqlite_now, &sqlite_peak, 0);
      return static_cast<double>(HeapInUse()) - static_cast<double>(sqlite_now);
    };
    const double before = measure();
    for (int i = 0; i < sessions; ++i) {
      const SessionId id("idle-" + std::to_string(i));
      if (!log.CreateSession(id, SessionMeta{"claude", "/home/user/project", "a title"},
                             {Event256(i)})
               .ok())
        std::abort();
    }
    const double after = measure();
    state.counters["bytes_per_session"] = (after - before) / sessions;
  }
}
BENCHMARK(BM_IdleSessionMemory)->Arg(20000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
