#include "store/record_batch.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace agentstream::store_internal {
namespace {

StoredRow Row(std::uint64_t seq, std::string payload, std::optional<TurnId> turn) {
  StoredRow row;
  row.record.seq = Seq(seq);
  row.record.time = 1700000000000 + static_cast<std::int64_t>(seq);
  row.record.kind = static_cast<std::uint16_t>(EventKind::kNotice);
  row.record.turn = std::move(turn);
  row.record.payload = std::move(payload);
  row.checksum = RecordChecksum(row.record);
  return row;
}

std::string Encode(const std::vector<StoredRow>& rows) {
  std::string data;
  for (const auto& row : rows) EncodeRecord(row, data);
  return data;
}

TEST(RecordBatchTest, DecodesTheRequestedRange) {
  std::vector<StoredRow> rows = {Row(5, "{\"a\":1}", TurnId("t")), Row(6, "{}", std::nullopt),
                                 Row(7, "{\"b\":2}", std::nullopt)};
  const std::string data = Encode(rows);
  std::vector<StoredRow> out;
  ASSERT_TRUE(DecodeBatch(data, kRecordBatchFormat, Seq(5), Seq(7), Seq(6), Seq(7), out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].record.seq, Seq(6));
  EXPECT_EQ(out[1].record.payload, "{\"b\":2}");
  EXPECT_TRUE(VerifyRow(out[1]).ok());
}

TEST(RecordBatchTest, RefusesANewerFramingAndAWrongCount) {
  const std::string data = Encode({Row(1, "{}", std::nullopt)});
  std::vector<StoredRow> out;
  EXPECT_EQ(DecodeBatch(data, kRecordBatchFormat + 1, Seq(1), Seq(1), Seq(1), Seq(1), out).code(),
            ErrorCode::kUnsupportedVersion);
  EXPECT_EQ(DecodeBatch(data, kRecordBatchFormat, Seq(1), Seq(2), Seq(1), Seq(2), out).code(),
            ErrorCode::kCorruption);
  EXPECT_EQ(DecodeBatch(data + "x", kRecordBatchFormat, Seq(1), Seq(1), Seq(1), Seq(1), out).code(),
            ErrorCode::kCorruption);
}

// Any bytes at all: decoding returns rows or an error, and never reads out of bounds.
RC_GTEST_PROP(RecordBatchProperty, ArbitraryBytesNeverCrash, (const std::string& bytes)) {
  std::vector<StoredRow> out;
  const auto count = *rc::gen::inRange<std::uint64_t>(1, 8);
  Status status =
      DecodeBatch(bytes, kRecordBatchFormat, Seq(1), Seq(count), Seq(1), Seq(count), out);
  if (status.ok()) RC_ASSERT(out.size() == count);
}

// One damaged byte anywhere in a batch is always reported, by the framing or a checksum.
RC_GTEST_PROP(RecordBatchProperty, AFlippedByteIsDetected, ()) {
  const auto count = *rc::gen::inRange<std::uint64_t>(1, 6);
  std::vector<StoredRow> rows;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto text = *rc::gen::container<std::string>(rc::gen::inRange('a', 'z'));
    const bool with_turn = *rc::gen::arbitrary<bool>();
    rows.push_back(Row(i + 1, "{\"t\":\"" + text + "\"}",
                       with_turn ? std::optional<TurnId>(TurnId("turn")) : std::nullopt));
  }
  std::string data = Encode(rows);
  const auto at = *rc::gen::inRange<std::size_t>(0, data.size());
  const auto flip = *rc::gen::inRange<int>(1, 256);
  data[at] = static_cast<char>(data[at] ^ flip);
  std::vector<StoredRow> out;
  Status status =
      DecodeBatch(data, kRecordBatchFormat, Seq(1), Seq(count), Seq(1), Seq(count), out);
  bool detected = !status.ok();
  for (const auto& row : out) detected = detected || !VerifyRow(row).ok();
  RC_ASSERT(detected);
}

}  // namespace
}  // namespace agentstream::store_internal
