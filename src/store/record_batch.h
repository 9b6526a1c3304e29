// Internal to the store module: the record batch, the unit in which durable backends store
// events. A batch holds consecutive events of one (session, epoch), as appended in one commit, so
// a commit of N events of one session writes one row, not N. Layout (little-endian), per record:
//
//   u32 format | i64 time | u16 kind | u8 has_turn | [u32 turn_len | turn] | u32 payload_len |
//   payload | u64 checksum
//
// The seq of record i is first_seq + i. The checksum is RecordChecksum() of the record; decoding
// checks only the framing (lengths, count); VerifyRow() checks each record.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "store/log_state.h"

namespace agentstream::store_internal {

// The batch framing version stored beside each batch.
inline constexpr std::uint32_t kRecordBatchFormat = 1;

// Appends the encoding of `row` (its checksum as given) to `out`.
void EncodeRecord(const StoredRow& row, std::string& out);
// The same, from the parts of a record.
void EncodeRecord(TimestampMs time, std::uint16_t kind, std::uint32_t format,
                  const std::optional<TurnId>& turn, std::string_view payload,
                  std::uint64_t checksum, std::string& out);

// Decodes the records of a batch holding seqs [first, last] and appends those with seqs in
// [lo, hi] to `out`, in seq order. kCorruption when the framing is damaged or the count does not
// match; kUnsupportedVersion when `format` is newer than kRecordBatchFormat.
Status DecodeBatch(std::string_view data, std::uint32_t format, Seq first, Seq last, Seq lo, Seq hi,
                   std::vector<StoredRow>& out);

}  // namespace agentstream::store_internal
