#include "net/sse_parser.h"

namespace agentstream::net {

namespace {
constexpr std::string_view kBom = "\xEF\xBB\xBF";
}  // namespace

Status SseParser::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  if (!failed_.ok()) return failed_;
  for (char c : bytes) {
    if (at_stream_start_) {
      // Drop a leading BOM byte by byte; anything else ends the chance of one.
      const std::size_t at = line_.size();
      if (at < kBom.size() && c == kBom[at]) {
        line_.push_back(c);
        if (line_.size() == kBom.size()) {
          line_.clear();
          at_stream_start_ = false;
        }
        continue;
      }
      at_stream_start_ = false;
    }
    if (c == '\n' && after_cr_) {
      after_cr_ = false;  // the LF of a CRLF: the line already ended at the CR
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\r' || c == '\n') {
      if (Status s = EndLine(out); !s.ok()) return failed_ = s;
      continue;
    }
    if (skip_line_) continue;
    if (line_.size() >= limits_.max_line_bytes) {
      if (!limits_.skip_oversize) {
        return failed_ = Error(ErrorCode::kTooLarge, "server-sent events line longer than " +
                                                         std::to_string(limits_.max_line_bytes) +
                                                         " bytes");
      }
      Drop();
      skip_line_ = true;
      line_.clear();
      continue;
    }
    line_.push_back(c);
  }
  return Status::Ok();
}

Status SseParser::EndLine(std::vector<SseEvent>& out) {
  const std::string line = std::move(line_);
  line_.clear();
  if (skip_line_) {  // the end of an oversize line
    skip_line_ = false;
    return Status::Ok();
  }
  if (line.empty()) {  // dispatch
    if (dropping_) {
      dropping_ = false;
      ++dropped_;
    } else if (has_data_) {
      SseEvent event;
      if (!event_type_.empty()) event.event = std::move(event_type_);
      event.data = std::move(data_);
      event.id = last_id_;
      out.push_back(std::move(event));
    }
    event_type_.clear();
    data_.clear();
    has_data_ = false;
    return Status::Ok();
  }
  if (line.front() == ':') return Status::Ok();  // a comment (often a keep-alive)
  const std::size_t colon = line.find(':');
  std::string_view field = line;
  std::string_view value;
  if (colon != std::string::npos) {
    field = std::string_view(line).substr(0, colon);
    value = std::string_view(line).substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  return ProcessField(field, value);
}

Status SseParser::ProcessField(std::string_view field, std::string_view value) {
  if (dropping_) return Status::Ok();
  // The event's size (data plus type) once this field is taken. A type before any data is
  // counted when the data comes.
  std::size_t grown = 0;
  if (field == "data") {
    grown = data_.size() + (has_data_ ? 1 : 0) + value.size() + event_type_.size();
  } else if (field == "event" && has_data_) {
    grown = data_.size() + value.size();
  }
  if (grown > limits_.max_event_bytes) {
    if (limits_.skip_oversize) {
      Drop();
      return Status::Ok();
    }
    return Error(ErrorCode::kTooLarge, "server-sent event larger than " +
                                           std::to_string(limits_.max_event_bytes) + " bytes");
  }
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_type_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_.assign(value);
  }
  return Status::Ok();
}

void SseParser::Drop() {
  dropping_ = true;
  event_type_.clear();
  data_.clear();
  has_data_ = false;
}

}  // namespace agentstream::net
