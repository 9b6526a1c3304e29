#include "store/record_batch.h"

#include <cstring>
#include <string>

namespace agentstream::store_internal {

namespace {

template <class T>
void Put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

// Reads fixed-size values and byte strings from a batch, refusing to read past its end.
class Cursor {
 public:
  explicit Cursor(std::string_view data) : data_(data) {}
  template <class T>
  bool Get(T& value) {
    if (data_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(&value, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Bytes(std::uint32_t n, std::string& out) {
    if (data_.size() - pos_ < n) return false;
    out.assign(data_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool Skip(std::uint32_t n) {
    if (data_.size() - pos_ < n) return false;
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == data_.size(); }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

}  // namespace

void EncodeRecord(const StoredRow& row, std::string& out) {
  const EventRecord& r = row.record;
  EncodeRecord(r.time, r.kind, r.format, r.turn, r.payload, row.checksum, out);
}

void EncodeRecord(TimestampMs time, std::uint16_t kind, std::uint32_t format,
                  const std::optional<TurnId>& turn, std::string_view payload,
                  std::uint64_t checksum, std::string& out) {
  Put<std::uint32_t>(out, format);
  Put<std::int64_t>(out, time);
  Put<std::uint16_t>(out, kind);
  Put<std::uint8_t>(out, turn ? 1 : 0);
  if (turn) {
    Put<std::uint32_t>(out, static_cast<std::uint32_t>(turn->str().size()));
    out += turn->str();
  }
  Put<std::uint32_t>(out, static_cast<std::uint32_t>(payload.size()));
  out += payload;
  Put<std::uint64_t>(out, checksum);
}

Status DecodeBatch(std::string_view data, std::uint32_t format, Seq first, Seq last, Seq lo, Seq hi,
                   std::vector<StoredRow>& out) {
  const auto damaged = [&](const char* what) {
    return Error(ErrorCode::kCorruption, "stored record batch " + std::to_string(first.value()) +
                                             "-" + std::to_string(last.value()) +
                                             " is damaged: " + what);
  };
  if (format > kRecordBatchFormat) {
    return Error(ErrorCode::kUnsupportedVersion,
                 "stored record batch has format " + std::to_string(format) +
                     ", newer than this build (" + std::to_string(kRecordBatchFormat) + ")");
  }
  if (format == 0 || last < first) return damaged("bad header");
  Cursor in(data);
  for (Seq seq = first; seq <= last; seq = seq.next()) {
    const bool wanted = seq >= lo && seq <= hi;
    StoredRow row;
    EventRecord& r = row.record;
    std::uint8_t has_turn = 0;
    std::uint32_t length = 0;
    if (!in.Get(r.format) || !in.Get(r.time) || !in.Get(r.kind) || !in.Get(has_turn))
      return damaged("truncated record");
    if (has_turn > 1) return damaged("bad turn flag");
    if (has_turn) {
      std::string turn;
      if (!in.Get(length) || !in.Bytes(length, turn)) return damaged("truncated turn id");
      r.turn = TurnId(std::move(turn));
    }
    if (!in.Get(length)) return damaged("truncated payload length");
    if (wanted) {
      if (!in.Bytes(length, r.payload)) return damaged("truncated payload");
    } else if (!in.Skip(length)) {
      return damaged("truncated payload");
    }
    if (!in.Get(row.checksum)) return damaged("truncated checksum");
    if (wanted) {
      r.seq = seq;
      out.push_back(std::move(row));
    }
    if (seq > hi) break;
  }
  if (hi >= last && !in.done()) return damaged("trailing bytes");
  return Status::Ok();
}

}  // namespace agentstream::store_internal
