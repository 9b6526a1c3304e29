// The streams journal's storage: messages in append order, deleted streams purged in the
// background without reusing their ids, the exclusive lock, and the conversion of databases
// written with messages keyed by stream and offset.
#include <unistd.h>

#include <gtest/gtest.h>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "sqlite/db.h"
#include "streams/memory_stream_store.h"
#include "streams/stream_journal.h"

namespace agentstream::streams {
namespace {

class JournalFileTest : public ::testing::Test {
 protected:
  void TearDown() override {
    std::filesystem::remove(path_);
    std::filesystem::remove(path_ + "-wal");
  }

  std::unique_ptr<MemoryStreamStore> Open() {
    auto store = MemoryStreamStore::Open(path_, StreamLimits{});
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  static void Durable(StreamStore& store) {
    std::promise<bool> done;
    store.WhenDurable([&](bool ok) { done.set_value(ok); });
    ASSERT_TRUE(done.get_future().get());
  }

  static void Create(StreamStore& store, const std::string& path, const std::string& body) {
    CreateArgs args;
    args.path = path;
    args.content_type = "text/plain";
    args.body = body;
    ASSERT_EQ(store.Create(args).code, Code::kCreated);
  }

  static void Append(StreamStore& store, const std::string& path, const std::string& body) {
    AppendArgs args;
    args.path = path;
    args.body = body;
    args.content_type = "text/plain";
    ASSERT_EQ(store.Append(args).code, Code::kOk);
  }

  static std::string Contents(StreamStore& store, const std::string& path) {
    std::string text;
    for (const Message& m : store.Read(path, std::nullopt).messages) text += *m.data;
    return text;
  }

  // Runs `sql` on the closed database file and returns the first column of its first row.
  std::string Query(const std::string& sql) {
    Result<sqlite::Db> db = sqlite::Db::Open(path_, {.create = true});
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return "";
    Result<sqlite::Stmt> stmt = db->Prepare(sql);
    EXPECT_TRUE(stmt.ok()) << sql << ": " << stmt.status().ToString();
    if (!stmt.ok()) return "";
    const Result<bool> row = stmt->Step();
    return row.ok() && *row ? stmt->Text(0) : "";
  }

  const std::string path_ = (std::filesystem::temp_directory_path() /
                             ("journal_test_" + std::to_string(::getpid()) + ".db"))
                                .string();
};

TEST_F(JournalFileTest, InterleavedAppendsReloadInStreamOrder) {
  {
    auto store = Open();
    Create(*store, "/a", "a0");
    Create(*store, "/b", "b0");
    for (int i = 1; i <= 50; ++i) {
      Append(*store, "/a", "a" + std::to_string(i));
      Append(*store, "/b", "b" + std::to_string(i));
    }
    Durable(*store);
  }
  auto store = Open();
  std::string a = "a0";
  std::string b = "b0";
  for (int i = 1; i <= 50; ++i) {
    a += "a" + std::to_string(i);
    b += "b" + std::to_string(i);
  }
  EXPECT_EQ(Contents(*store, "/a"), a);
  EXPECT_EQ(Contents(*store, "/b"), b);
}

TEST_F(JournalFileTest, ADeletedStreamsMessagesArePurgedAndItsPathReusable) {
  {
    auto store = Open();
    Create(*store, "/gone", "x");
    for (int i = 0; i < 100; ++i) Append(*store, "/gone", "y");
    Create(*store, "/kept", "k");
    Durable(*store);
    ASSERT_EQ(store->Delete("/gone").code, Code::kOk);
    Durable(*store);  // the deletion
    Durable(*store);  // a later batch: the purge step of the idle writer ran before it
    Create(*store, "/gone", "new");
    Durable(*store);
  }
  EXPECT_EQ(Query("SELECT COUNT(*) FROM ds_messages"), "2");  // "k" and "new"
  EXPECT_EQ(Query("SELECT COUNT(*) FROM ds_dead"), "0");
  auto store = Open();
  EXPECT_EQ(Contents(*store, "/gone"), "new");
  EXPECT_EQ(Contents(*store, "/kept"), "k");
}

TEST_F(JournalFileTest, APurgeLongerThanOneWindowFinishesWithoutFurtherWrites) {
  auto journal = StreamJournal::Open(path_, 65536);
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  const StreamJournal* raw = journal->get();
  {
    MemoryStreamStore store(StreamLimits{}, std::move(*journal));
    Create(store, "/big", "0");
    for (int i = 0; i < 10000; ++i) Append(store, "/big", "x");  // about 2.5 purge windows
    Create(store, "/small", "s");
    Durable(store);
    ASSERT_EQ(store.Delete("/big").code, Code::kOk);
    Durable(store);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (raw->purging() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(raw->purging()) << "the purge stalled with no write to carry it";
  }
  EXPECT_EQ(Query("SELECT COUNT(*) FROM ds_messages"), "1");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM ds_dead"), "0");
}

TEST_F(JournalFileTest, AnUnfinishedPurgeResumesAndItsIdsAreNotReused) {
  {
    auto store = Open();
    Create(*store, "/a", "a");  // id 1
    Durable(*store);
  }
  // As if the daemon stopped while stream 2 was deleted but not yet purged.
  Query("INSERT INTO ds_dead(stream_id) VALUES(2)");
  Query("INSERT INTO ds_messages(stream_id, offset, data) VALUES(2, 'x', 'orphan')");
  {
    auto store = Open();
    Create(*store, "/c", "c");  // must not take id 2
    Durable(*store);
    Durable(*store);
    EXPECT_EQ(Contents(*store, "/c"), "c");
  }
  EXPECT_EQ(Query("SELECT COUNT(*) FROM ds_messages WHERE stream_id=2"), "0");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM ds_dead"), "0");
  auto store = Open();
  EXPECT_EQ(Contents(*store, "/c"), "c");
  EXPECT_EQ(Contents(*store, "/a"), "a");
}

TEST_F(JournalFileTest, MessagesKeyedByStreamAndOffsetAreConverted) {
  StreamMeta meta;
  meta.id = 7;
  meta.path = "/old";
  meta.content_type = "text/plain";
  {
    Result<sqlite::Db> db = sqlite::Db::Open(path_, {.create = true});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    const std::string sql =
        "CREATE TABLE ds_streams(id INTEGER PRIMARY KEY, meta TEXT NOT NULL);"
        "CREATE TABLE ds_messages(stream_id INTEGER NOT NULL, offset TEXT NOT NULL,"
        " data BLOB NOT NULL, PRIMARY KEY(stream_id, offset)) WITHOUT ROWID;"
        "INSERT INTO ds_streams VALUES(7, '" +
        EncodeMeta(meta) + "');" + "INSERT INTO ds_messages VALUES(7, '" +
        FormatOffset(Advance(Offset{}, 2)) + "', 'o1');" + "INSERT INTO ds_messages VALUES(7, '" +
        FormatOffset(Advance(Advance(Offset{}, 2), 2)) + "', 'o2');";
    const Status made = db->Exec(sql);
    ASSERT_TRUE(made.ok()) << made.ToString();
  }
  {
    auto store = Open();
    EXPECT_EQ(Contents(*store, "/old"), "o1o2");
    Append(*store, "/old", "o3");
    Durable(*store);
  }
  EXPECT_EQ(Query("SELECT sql LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE name='ds_messages'"),
            "0");
  auto store = Open();
  EXPECT_EQ(Contents(*store, "/old"), "o1o2o3");
}

TEST(JournalTest, StreamsSurviveReopen) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("streams_test_" + std::to_string(::getpid()) + ".db"))
                               .string();
  std::filesystem::remove(path);
  {
    auto store = MemoryStreamStore::Open(path, StreamLimits{});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    CreateArgs args;
    args.path = "/d";
    args.content_type = "application/json";
    args.body = R"([{"a":1}])";
    ASSERT_EQ((*store)->Create(args).code, Code::kCreated);
    AppendArgs append;
    append.path = "/d";
    append.body = "2";
    append.producer = ProducerArgs{"w", 3, 0};
    ASSERT_EQ((*store)->Append(append).code, Code::kOk);
    std::promise<bool> durable;
    (*store)->WhenDurable([&](bool ok) { durable.set_value(ok); });
    EXPECT_TRUE(durable.get_future().get());
  }
  auto store = MemoryStreamStore::Open(path, StreamLimits{});
  ASSERT_TRUE(store.ok());
  ReadResult r = (*store)->Read("/d", std::nullopt);
  ASSERT_EQ(r.messages.size(), 2U);
  EXPECT_EQ(*r.messages[1].data, "2,");
  AppendArgs retry;
  retry.path = "/d";
  retry.body = "2";
  retry.producer = ProducerArgs{"w", 3, 0};
  EXPECT_EQ((*store)->Append(retry).code, Code::kDuplicate);  // producer state survived
  store->reset();
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

TEST(JournalTest, ASecondStoreOnTheSameDatabaseIsRefused) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("streams_excl_" + std::to_string(::getpid()) + ".db"))
                               .string();
  std::filesystem::remove(path);
  {
    auto first = MemoryStreamStore::Open(path, StreamLimits{});
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    auto second = MemoryStreamStore::Open(path, StreamLimits{});
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().ToString().find("another daemon"), std::string::npos)
        << second.status().ToString();
  }
  auto reopened = MemoryStreamStore::Open(path, StreamLimits{});  // the lock went with the first
  EXPECT_TRUE(reopened.ok()) << reopened.status().ToString();
  reopened->reset();
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
}

}  // namespace
}  // namespace agentstream::streams
