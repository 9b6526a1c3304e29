#include "net/sse_writer.h"

namespace agentstream::net {

namespace {

void AppendDataLine(std::string_view line, std::string* out) {
  *out += "data:";
  if (!line.empty() && line.front() == ' ') *out += ' ';
  out->append(line);
  *out += '\n';
}

}  // namespace

void AppendSseEvent(std::string_view name, std::string_view payload, std::string* out) {
  out->reserve(out->size() + name.size() + payload.size() + 16);
  out->append("event: ").append(name).append("\n");
  std::size_t start = 0;
  for (std::size_t i = 0; i < payload.size(); ++i) {
    const char c = payload[i];
    if (c != '\r' && c != '\n') continue;
    AppendDataLine(payload.substr(start, i - start), out);
    if (c == '\r' && i + 1 < payload.size() && payload[i + 1] == '\n') ++i;
    start = i + 1;
  }
  AppendDataLine(payload.substr(start), out);
  *out += '\n';
}

std::string FormatSseEvent(std::string_view name, std::string_view payload) {
  std::string out;
  AppendSseEvent(name, payload, &out);
  return out;
}

std::string SseEventHead(std::string_view name) {
  std::string head = "event: ";
  head.append(name).append("\ndata:");
  return head;
}

}  // namespace agentstream::net
