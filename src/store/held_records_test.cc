// HeldRecords answers a forward read only from a run of records it holds from the read's first
// seq, never across a gap, another session or another epoch.
#include "store/held_records.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace agentstream {
namespace {

// Records `from` through `to` of session `s`, epoch `epoch`, each with a 10-byte payload.
std::shared_ptr<const std::vector<EventRecord>> Records(std::uint64_t from, std::uint64_t to,
                                                        std::uint64_t epoch = 1,
                                                        const std::string& s = "s") {
  auto records = std::make_shared<std::vector<EventRecord>>();
  for (std::uint64_t seq = from; seq <= to; ++seq) {
    EventRecord record;
    record.session = SessionId(s);
    record.epoch = Epoch(epoch);
    record.seq = Seq(seq);
    record.payload = std::string(10, 'x');
    records->push_back(std::move(record));
  }
  return records;
}

ReadRequest From(std::uint64_t from, std::size_t max_items = 100, std::uint64_t epoch = 1) {
  ReadRequest request;
  request.session = SessionId("s");
  request.epoch = Epoch(epoch);
  request.from = Seq(from);
  request.max_items = max_items;
  return request;
}

std::vector<std::uint64_t> Seqs(const std::optional<std::vector<EventRecord>>& records) {
  std::vector<std::uint64_t> out;
  if (records)
    for (const EventRecord& r : *records) out.push_back(r.seq.value());
  return out;
}

TEST(HeldRecords, ConsecutiveRunsAnswerReadsFromAnySeqTheyHold) {
  HeldRecords held;
  EXPECT_FALSE(held.Take(From(1)));
  EXPECT_FALSE(held.last());
  held.Add(Records(5, 7));
  held.Add(Records(8, 9));
  EXPECT_GT(held.bytes(), 0u);
  EXPECT_EQ(held.last(), (Cursor{Epoch(1), Seq(9)}));
  EXPECT_EQ(Seqs(held.Take(From(5))), (std::vector<std::uint64_t>{5, 6, 7, 8, 9}));
  EXPECT_EQ(Seqs(held.Take(From(7, 2))), (std::vector<std::uint64_t>{7, 8}));
  EXPECT_EQ(Seqs(held.Take(From(9))), (std::vector<std::uint64_t>{9}));
  // Before the first held seq or after the last: the log's to answer.
  EXPECT_FALSE(held.Take(From(4)));
  EXPECT_FALSE(held.Take(From(10)));
  // Another epoch, the current epoch unnamed, another session, a backward read.
  EXPECT_FALSE(held.Take(From(5, 100, 2)));
  ReadRequest current = From(5);
  current.epoch.reset();
  EXPECT_FALSE(held.Take(current));
  ReadRequest other = From(5);
  other.session = SessionId("t");
  EXPECT_FALSE(held.Take(other));
  ReadRequest backward = From(9);
  backward.direction = ReadDirection::kBackward;
  EXPECT_FALSE(held.Take(backward));
}

TEST(HeldRecords, AReadStopsAtItsByteBoundButTakesAtLeastOneRecord) {
  HeldRecords held;
  held.Add(Records(1, 5));
  ReadRequest request = From(1);
  request.max_bytes = 25;  // two 10-byte payloads
  EXPECT_EQ(Seqs(held.Take(request)), (std::vector<std::uint64_t>{1, 2}));
  request.max_bytes = 1;
  EXPECT_EQ(Seqs(held.Take(request)), (std::vector<std::uint64_t>{1}));
}

TEST(HeldRecords, ARunThatDoesNotContinueTheHeldOnesReplacesThem) {
  HeldRecords held;
  held.Add(Records(1, 3));
  const std::size_t three = held.bytes();
  held.Add(Records(5, 6));  // a gap: seq 4 was not held
  EXPECT_FALSE(held.Take(From(1)));
  EXPECT_EQ(Seqs(held.Take(From(5))), (std::vector<std::uint64_t>{5, 6}));
  EXPECT_LT(held.bytes(), three);
  held.Add(Records(7, 8, 2));  // another epoch
  EXPECT_FALSE(held.Take(From(5)));
  EXPECT_EQ(Seqs(held.Take(From(7, 100, 2))), (std::vector<std::uint64_t>{7, 8}));
  held.Add(Records(9, 9, 2, "t"));  // another session
  EXPECT_FALSE(held.Take(From(7, 100, 2)));
  HeldRecords later;
  later.Add(Records(10, 11, 2, "t"));
  held.Add(later);  // continues: seq 9 of t, epoch 2 was held
  EXPECT_EQ(held.last(), (Cursor{Epoch(2), Seq(11)}));
  ReadRequest t = From(9, 100, 2);
  t.session = SessionId("t");
  EXPECT_EQ(Seqs(held.Take(t)), (std::vector<std::uint64_t>{9, 10, 11}));
  held.Add(nullptr);
  held.Add(std::make_shared<const std::vector<EventRecord>>());
  EXPECT_GT(held.bytes(), 0u);
}

}  // namespace
}  // namespace agentstream
