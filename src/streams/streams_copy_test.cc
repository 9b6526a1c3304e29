// The streams' part of `store copy` (streams_copy.h), run through the daemon's own factory
// (OpenStreams) on both sides: streams of JSON and bytes, a closed one, one with a TTL, one with
// an expiry, a fork, a deleted one, 1,200 messages in one stream, producers and a pull-wake
// subscription, copied from a first store to a second and on to a SQLite third, for every pair
// of backends (PostgreSQL when AGENTSTREAM_TEST_PG names a server). Each copy reads back equal
// (configuration, every message's offset and bytes, the subscription and its keys); a producer
// retrying its last append after the move is de-duplicated; a rerun writes nothing; a copy cut
// short is finished; a destination stream of other content is refused by name.
#include "streams/streams_copy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "pg/testing/scratch_schema.h"
#include "sqlite/db.h"
#include "streams/streams_factory.h"
#include "streams/subscriptions.h"
#include "testing/temp_dir.h"

namespace agentstream::streams {
namespace {

const std::string kRoot = "/v1/stream/";

// One store's streams: a data directory's journal, or a PostgreSQL schema of the test's own.
struct Place {
  std::string kind;
  StreamsConfig config;
  std::unique_ptr<pg::testing::ScratchSchema> schema;
};

std::unique_ptr<Streams> Open(const Place& place) {
  auto opened = OpenStreams(place.config);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? std::move(*opened) : nullptr;
}

OpResult Append(StreamStore& store, const std::string& path, const std::string& body,
                const std::string& type, std::optional<ProducerArgs> producer = std::nullopt,
                bool close = false) {
  AppendArgs args;
  args.path = kRoot + path;
  args.body = body;
  args.content_type = type;
  args.producer = std::move(producer);
  args.close = close;
  return store.Append(args);
}

void Create(StreamStore& store, const std::string& path, const std::string& type,
            std::optional<std::int64_t> ttl = std::nullopt) {
  CreateArgs args;
  args.path = kRoot + path;
  args.content_type = type;
  args.ttl_seconds = ttl;
  ASSERT_EQ(store.Create(args).code, Code::kCreated) << path;
}

StreamResponse Call(Streams& streams, const std::string& method, const std::string& path,
                    const std::string& body) {
  StreamRequest req;
  req.method = method;
  req.path = kRoot + "__ds/" + path;
  req.body = body;
  StreamResponse response = streams.subscriptions().Handle(req, "http://127.0.0.1:1");
  std::promise<bool> durable;
  streams.store().WhenDurable([&](bool ok) { durable.set_value(ok); });
  EXPECT_TRUE(durable.get_future().get());
  return response;
}

void Fill(Streams& streams) {
  StreamStore& s = streams.store();
  const std::string json = "application/json";
  const std::string bytes = "application/octet-stream";
  Create(s, "json", json);
  for (std::uint64_t seq = 0; seq < 3; ++seq)
    ASSERT_EQ(
        Append(s, "json", R"({"n":)" + std::to_string(seq) + "}", json, ProducerArgs{"p1", 0, seq})
            .code,
        Code::kOk);
  Create(s, "bin", bytes);
  ASSERT_EQ(Append(s, "bin", std::string("\0\xff\x01", 3), bytes, ProducerArgs{"p2", 1, 0}).code,
            Code::kOk);
  ASSERT_EQ(Append(s, "bin", std::string(70000, '\x7f'), bytes, ProducerArgs{"p2", 1, 1}).code,
            Code::kOk);
  Create(s, "closed", "text/plain");
  ASSERT_EQ(Append(s, "closed", "a", "text/plain").code, Code::kOk);
  ASSERT_EQ(Append(s, "closed", "end", "text/plain", ProducerArgs{"p3", 0, 0}, true).code,
            Code::kOk);
  Create(s, "ttl", "text/plain", 3600);
  ASSERT_EQ(Append(s, "ttl", "t", "text/plain").code, Code::kOk);
  CreateArgs expiring;
  expiring.path = kRoot + "expires";
  expiring.content_type = "text/plain";
  expiring.expires_at = "2099-01-01T00:00:00Z";
  expiring.expires_at_ms = 4070908800000;
  ASSERT_EQ(s.Create(expiring).code, Code::kCreated);
  CreateArgs fork;
  fork.path = kRoot + "fork";
  fork.content_type = json;
  fork.forked_from = kRoot + "json";
  fork.fork_offset = s.Read(kRoot + "json", std::nullopt).messages.at(1).offset;
  ASSERT_EQ(s.Create(fork).code, Code::kCreated);
  ASSERT_EQ(Append(s, "fork", R"({"forked":true})", json).code, Code::kOk);
  Create(s, "gone", "text/plain");
  ASSERT_EQ(s.Delete(kRoot + "gone").code, Code::kOk);
  Create(s, "big", "text/plain");
  for (int i = 0; i < 1200; ++i)
    ASSERT_EQ(Append(s, "big", "m" + std::to_string(i), "text/plain").code, Code::kOk);
  Create(s, "wakes", json);
  ASSERT_EQ(
      Call(streams, "PUT", "subscriptions/s1",
           R"({"type":"pull-wake","streams":["json"],"wake_stream":"wakes","description":"d"})")
          .status,
      201);
}

// Every stream as read through the store: its state and every message's offset and bytes, and
// the subscription as the API shows it.
std::string Dump(Streams& streams) {
  StreamStore& s = streams.store();
  std::string out;
  std::vector<std::string> paths = s.Paths(kRoot);
  std::sort(paths.begin(), paths.end());
  for (const std::string& path : paths) {
    const OpResult head = s.Head(path);
    const StreamInfo& i = head.info;
    out += path + " " + std::to_string(static_cast<int>(head.code)) + " " + i.content_type + " " +
           FormatOffset(i.tail) + (i.closed ? " closed" : "") + " ttl " +
           std::to_string(i.ttl_seconds.value_or(-1)) + " exp " + i.expires_at.value_or("") + "\n";
    std::optional<Offset> after;
    for (;;) {
      ReadResult r = s.Read(path, after);
      for (const Message& m : r.messages) {
        // The bytes by their length and hash: equal dumps mean equal bytes.
        out += "  " + FormatOffset(m.offset) + " " + std::to_string(m.data->size()) + " " +
               std::to_string(std::hash<std::string>{}(*m.data)) + "\n";
      }
      if (r.messages.empty() || r.up_to_date) break;
      after = r.messages.back().offset;
    }
  }
  out += Call(streams, "GET", "subscriptions/s1", "").body + "\n" + streams.subscriptions().kid();
  return out;
}

class StreamsCopyTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {
 protected:
  // The streams of a new, empty store of `kind`; nullopt skips.
  std::optional<Place> NewPlace(const std::string& kind) {
    Place place{kind, {}, nullptr};
    if (kind == "sqlite") {
      const std::string data = dir_.File(std::to_string(places_++));
      std::filesystem::create_directories(data);
      place.config = StreamsConfigFor("sqlite:" + data + "/agentstream.db", data);
      return place;
    }
    const auto server = pg::testing::ScratchSchema::Server();
    if (!server || server->find("://") == std::string::npos) return std::nullopt;
    auto schema = pg::testing::ScratchSchema::Create(*server, "scopy");
    EXPECT_TRUE(schema.ok()) << schema.status().ToString();
    if (!schema.ok()) return std::nullopt;
    EXPECT_TRUE((*schema)->admin().ExecScript("CREATE SCHEMA " + (*schema)->name()).ok());
    const std::string url = *server + (server->find('?') == std::string::npos ? "?" : "&") +
                            "options=-csearch_path%3D" + (*schema)->name();
    place.config = StreamsConfigFor(url, dir_.path());
    place.schema = std::move(*schema);
    return place;
  }

  void SetUp() override {
    auto a = NewPlace(GetParam().first);
    auto b = NewPlace(GetParam().second);
    auto c = NewPlace("sqlite");
    if (!a || !b || !c) GTEST_SKIP() << "AGENTSTREAM_TEST_PG names no PostgreSQL server";
    a_ = std::move(*a);
    b_ = std::move(*b);
    c_ = std::move(*c);
    auto streams = Open(a_);
    ASSERT_TRUE(streams);
    Fill(*streams);
    want_ = Dump(*streams);
  }

  static Result<StreamsCopyReport> Copy(const Place& from, const Place& to) {
    StreamsCopy copy(from.config, to.config, {});
    AS_RETURN_IF_ERROR(copy.Check());
    return copy.Copy();
  }

  std::string DumpOf(const Place& place) {
    auto streams = Open(place);
    return streams ? Dump(*streams) : "";
  }

  // Runs `sqlite` on a journal's database, or `postgres` (with S. for the schema) on a schema.
  static void Sql(Place& place, const std::string& sqlite, std::string postgres) {
    if (place.kind == "sqlite") {
      auto db = sqlite::Db::Open(place.config.streams_db, {});
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      const Status done = db->Exec(sqlite);
      ASSERT_TRUE(done.ok()) << done.ToString();
      return;
    }
    for (std::size_t at = postgres.find("S."); at != std::string::npos;
         at = postgres.find("S.", at))
      postgres.replace(at, 1, place.schema->name());
    const Status done = place.schema->admin().ExecScript(postgres);
    ASSERT_TRUE(done.ok()) << done.ToString();
  }

  test_support::TempDir dir_{"streams-copy"};
  int places_ = 0;
  Place a_, b_, c_;
  std::string want_;
};

TEST_P(StreamsCopyTest, ARoundTripReadsTheSameAndARerunWritesNothing) {
  auto first = Copy(a_, b_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->streams, 8);  // "gone" is not copied
  EXPECT_EQ(first->streams_copied, 8);
  EXPECT_EQ(first->messages, 3 + 2 + 2 + 1 + 1 + 1200);
  EXPECT_EQ(first->messages_copied, first->messages);
  EXPECT_EQ(first->subscriptions, 1);
  EXPECT_EQ(first->subscriptions_copied, 1);
  EXPECT_TRUE(first->keys_copied);
  ASSERT_EQ(first->digests.size(), 8u);
  EXPECT_EQ(first->digests[0].path, kRoot + "json");
  EXPECT_EQ(first->digests[0].sha256.size(), 64u);
  auto second = Copy(b_, c_);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  for (std::size_t i = 0; i < first->digests.size(); ++i) {
    EXPECT_EQ(second->digests[i].sha256, first->digests[i].sha256) << first->digests[i].path;
    EXPECT_EQ(second->digests[i].tail, first->digests[i].tail);
  }
  EXPECT_EQ(DumpOf(b_), want_);
  EXPECT_EQ(DumpOf(c_), want_);

  auto again = Copy(a_, b_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->streams_copied, 0);
  EXPECT_EQ(again->messages_copied, 0);
  EXPECT_EQ(again->subscriptions_copied, 0);
  EXPECT_FALSE(again->keys_copied);
  EXPECT_EQ(again->digests[1].sha256, first->digests[1].sha256);

  // A producer retrying its last append after the move is de-duplicated on every copy.
  for (Place* place : {&b_, &c_}) {
    auto streams = Open(*place);
    ASSERT_TRUE(streams);
    StreamStore& s = streams->store();
    EXPECT_EQ(Append(s, "json", R"({"n":2})", "application/json", ProducerArgs{"p1", 0, 2}).code,
              Code::kDuplicate);
    EXPECT_EQ(Append(s, "bin", "x", "application/octet-stream", ProducerArgs{"p2", 1, 1}).code,
              Code::kDuplicate);
    EXPECT_EQ(Append(s, "closed", "end", "text/plain", ProducerArgs{"p3", 0, 0}, true).code,
              Code::kDuplicate);
    EXPECT_EQ(Append(s, "closed", "more", "text/plain").code, Code::kClosed);
    EXPECT_EQ(Append(s, "json", R"({"n":3})", "application/json", ProducerArgs{"p1", 0, 3}).code,
              Code::kOk);
  }
}

TEST_P(StreamsCopyTest, ACopyCutShortIsFinishedByTheNextRun) {
  ASSERT_TRUE(Copy(a_, b_).ok());
  // As a kill leaves it: "big" with 300 of its messages, "ttl" not created yet.
  Sql(b_,
      "DELETE FROM ds_messages WHERE stream_id = (SELECT id FROM ds_streams WHERE "
      "json_extract(meta, '$.path') = '/v1/stream/big') AND seq > (SELECT min(seq) + 299 FROM "
      "ds_messages WHERE stream_id = (SELECT id FROM ds_streams WHERE json_extract(meta, "
      "'$.path') = '/v1/stream/big'));"
      "DELETE FROM ds_messages WHERE stream_id = (SELECT id FROM ds_streams WHERE "
      "json_extract(meta, '$.path') = '/v1/stream/ttl');"
      "DELETE FROM ds_streams WHERE json_extract(meta, '$.path') = '/v1/stream/ttl';",
      "DELETE FROM S.ds_messages m USING S.ds_streams s WHERE s.id = m.stream_id AND s.path = "
      "'/v1/stream/big' AND (m.read_seq, m.byte_pos) > (SELECT read_seq, byte_pos FROM "
      "S.ds_messages WHERE stream_id = s.id ORDER BY 1, 2 OFFSET 299 LIMIT 1);"
      "UPDATE S.ds_streams s SET (tail_read_seq, tail_byte_pos) = (SELECT read_seq, byte_pos "
      "FROM S.ds_messages m WHERE m.stream_id = s.id ORDER BY 1 DESC, 2 DESC LIMIT 1) WHERE "
      "s.path = '/v1/stream/big';"
      "DELETE FROM S.ds_messages WHERE stream_id = (SELECT id FROM S.ds_streams WHERE path = "
      "'/v1/stream/ttl');"
      "DELETE FROM S.ds_streams WHERE path = '/v1/stream/ttl';");
  auto rerun = Copy(a_, b_);
  ASSERT_TRUE(rerun.ok()) << rerun.status().ToString();
  EXPECT_EQ(rerun->streams_copied, 2);
  EXPECT_EQ(rerun->messages_copied, 900 + 1);
  EXPECT_EQ(DumpOf(b_), want_);
}

TEST_P(StreamsCopyTest, ADestinationStreamOfOtherContentIsRefusedByName) {
  ASSERT_TRUE(Copy(a_, b_).ok());
  {
    auto streams = Open(b_);
    ASSERT_TRUE(streams);
    ASSERT_EQ(Append(streams->store(), "closed", "x", "text/plain").code, Code::kClosed);
    ASSERT_EQ(Append(streams->store(), "ttl", "only here", "text/plain").code, Code::kOk);
  }
  const std::string before = DumpOf(b_);
  auto refused = Copy(a_, b_);
  ASSERT_EQ(refused.status().code(), ErrorCode::kConflict) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("/v1/stream/ttl"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(DumpOf(b_), before);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, StreamsCopyTest,
    ::testing::Values(std::pair{"sqlite", "sqlite"}, std::pair{"sqlite", "postgres"},
                      std::pair{"postgres", "sqlite"}, std::pair{"postgres", "postgres"}),
    [](const auto& info) { return info.param.first + "_to_" + info.param.second; });

}  // namespace
}  // namespace agentstream::streams
