#include "jsonrpc/stdio_channel.h"

#include <unistd.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>

namespace agentstream::jsonrpc {

namespace asio = boost::asio;

Inbound ReadLine(const process::Frame& frame) {
  Inbound in;
  if (frame.kind == process::Frame::Kind::kOversize) {
    in.error_line = ErrorLine(
        RpcId(), kInvalidRequest,
        "a message is larger than " + std::to_string(kMaxLineBytes) + " bytes; it was dropped");
    return in;
  }
  if (frame.text.find_first_not_of(" \t\r") == std::string::npos) return in;
  RpcRead read = ReadRpc(frame.text, /*strict=*/true);
  if (read.fault) {
    in.error_line = FaultLine(*read.fault);
  } else {
    in.message = std::move(read.message);
  }
  return in;
}

StdioChannel::StdioChannel(asio::io_context& io, int in_fd, int out_fd, ChannelLimits limits)
    : in_(io, ::dup(in_fd)),
      out_(io, ::dup(out_fd)),
      stall_(io),
      limits_(limits),
      framer_(limits.max_line_bytes),
      read_buffer_(std::size_t{64} * 1024, '\0') {}

StdioChannel::~StdioChannel() = default;

void StdioChannel::Start(LineHandler on_line, CloseHandler on_close) {
  on_line_ = std::move(on_line);
  on_close_ = std::move(on_close);
  Read();
}

void StdioChannel::Read() {
  in_.async_read_some(
      asio::buffer(read_buffer_), [this](const boost::system::error_code& ec, std::size_t n) {
        if (closed_ || input_ended_) return;
        std::vector<process::Frame> frames =
            ec ? framer_.Finish() : framer_.Feed(std::string_view(read_buffer_.data(), n));
        for (process::Frame& frame : frames) {
          if (closed_ || input_ended_) return;
          on_line_(std::move(frame));
        }
        if (closed_ || input_ended_) return;
        if (ec == asio::error::eof) return EndInput();
        if (ec) return Fail(Error(ErrorCode::kUnavailable, "reading stdin: " + ec.message()));
        Read();
      });
}

void StdioChannel::Write(std::string line) {
  if (closed_) return;
  line.push_back('\n');
  queued_ += line.size();
  queue_.push_back(std::move(line));
  if (queued_.load() > limits_.max_queue_bytes) {
    return Fail(Error(ErrorCode::kResourceExhausted, "the client does not read: more than " +
                                                         std::to_string(limits_.max_queue_bytes) +
                                                         " bytes queued"));
  }
  if (!writing_) WriteNext();
}

void StdioChannel::WriteNext() {
  if (closed_ || queue_.empty()) {
    writing_ = false;
    stall_.cancel();
    return;
  }
  writing_ = true;
  stall_.expires_after(limits_.stall_timeout);
  stall_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || closed_ || !writing_) return;
    Fail(Error(ErrorCode::kResourceExhausted,
               "the client read nothing for " + std::to_string(limits_.stall_timeout.count()) +
                   " ms with " + std::to_string(queued_.load()) + " bytes queued"));
  });
  const std::string& front = queue_.front();
  out_.async_write_some(
      asio::buffer(front.data() + front_offset_, front.size() - front_offset_),
      [this](const boost::system::error_code& ec, std::size_t n) {
        if (closed_) return;
        if (ec) return Fail(Error(ErrorCode::kUnavailable, "writing stdout: " + ec.message()));
        queued_ -= n;
        front_offset_ += n;
        if (front_offset_ == queue_.front().size()) {
          queue_.pop_front();
          front_offset_ = 0;
        }
        WriteNext();
      });
}

void StdioChannel::EndInput() {
  input_ended_ = true;
  boost::system::error_code ignored;
  in_.close(ignored);
  if (on_close_) on_close_(Status::Ok());  // what is queued still goes out
}

void StdioChannel::Fail(const Status& why) {
  if (closed_) return;
  const bool told = input_ended_;
  closed_ = true;
  stall_.cancel();
  boost::system::error_code ignored;
  in_.close(ignored);
  out_.close(ignored);
  if (on_close_ && !told) on_close_(why);
}

}  // namespace agentstream::jsonrpc
