#include "client/stream_frames.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace agentstream::client {

namespace json = boost::json;

namespace {

Result<json::value> ParseJson(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  json::parse_options options;
  options.allow_invalid_utf8 = true;  // provider text may carry any bytes; the log keeps them
  json::value value = json::parse(text, ec, {}, options);
  if (ec) {
    return Error(ErrorCode::kInvalidArgument,
                 std::string(what) + " is not valid JSON: " + ec.message());
  }
  return value;
}

}  // namespace

Result<std::vector<EventRecord>> DecodeEnvelopeArray(std::string_view text) {
  AS_ASSIGN_OR_RETURN(json::value value, ParseJson(text, "an event frame"));
  const json::array* array = value.if_array();
  if (array == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "an event frame is not a JSON array of envelopes");
  }
  std::vector<EventRecord> records;
  records.reserve(array->size());
  for (const json::value& element : *array) {
    AS_ASSIGN_OR_RETURN(EventRecord record, DecodeEnvelope(json::serialize(element)));
    records.push_back(std::move(record));
  }
  return records;
}

Result<StreamFrame> DecodeStreamFrame(const SseEvent& event) {
  StreamFrame frame;
  if (event.event == "data") {
    AS_ASSIGN_OR_RETURN(frame.events, DecodeEnvelopeArray(event.data));
  } else if (event.event == "control") {
    AS_ASSIGN_OR_RETURN(json::value value, ParseJson(event.data, "a control frame"));
    const json::object* object = value.if_object();
    if (object == nullptr) {
      return Error(ErrorCode::kInvalidArgument, "a control frame is not a JSON object");
    }
    if (const json::value* offset = object->if_contains("streamNextOffset")) {
      if (!offset->is_string()) {
        return Error(ErrorCode::kInvalidArgument, "streamNextOffset is not a string");
      }
      frame.next_offset = std::string(offset->get_string());
    }
    if (const json::value* error = object->if_contains("error")) {
      return Error(ErrorCode::kUnavailable,
                   "daemon: the stream failed: " +
                       (error->is_string() ? std::string(error->get_string()) : "error"));
    }
    if (const json::value* up = object->if_contains("upToDate"); up && up->is_bool()) {
      frame.up_to_date = up->get_bool();
    }
  }
  return frame;
}

bool CursorDeduper::Admit(Cursor cursor) {
  auto it = high_.find(cursor.epoch);
  if (it != high_.end()) {
    if (cursor.seq <= it->second) return false;
    it->second = cursor.seq;
    return true;
  }
  if (high_.size() >= kMaxEpochs) {
    if (cursor.epoch < high_.begin()->first) return false;  // older than anything remembered
    high_.erase(high_.begin());
  }
  high_.emplace(cursor.epoch, cursor.seq);
  return true;
}

Seq CursorDeduper::HighWater(Epoch epoch) const {
  auto it = high_.find(epoch);
  return it == high_.end() ? Seq(0) : it->second;
}

}  // namespace agentstream::client
