// StdioChannel: the transport of the JSON-RPC servers on stdio (`agentstream acp`, `agentstream
// mcp`): newline-delimited JSON-RPC over two file descriptors (the client's pipes on stdin and
// stdout), on an Asio io_context; and ReadLine, one input line read as a JSON-RPC message.
//
// Input is framed with process::LineFramer: a line longer than max_line_bytes is one kOversize
// frame (its bytes dropped, memory bounded). Output is a queue of lines written in order; it is
// bounded: more than max_queue_bytes queued, or a client that takes none of it for stall_timeout
// while some is queued, closes the channel with kResourceExhausted (the client does not read; it
// is disconnected rather than buffered without bound).
//
// Threading: everything runs on the io_context's thread (Start, Write, the handlers), except
// queued_bytes(), which any thread may read (producers pause on it).
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "core/status.h"
#include "jsonrpc/json_rpc.h"
#include "process/line_framer.h"

namespace agentstream::jsonrpc {

// An input line (one JSON-RPC message) longer than this is refused: 8 MiB.
inline constexpr std::size_t kMaxLineBytes = std::size_t{8} << 20;

// One input line, read as a server reads it (ReadRpc with `strict`): the message it holds, or the
// error line that answers it (a parse error -32700 or an invalid request -32600, with the
// message's id when it had a valid one, else null; an oversize line -32600 naming kMaxLineBytes).
// A line of white space only is neither (ignored).
struct Inbound {
  std::optional<RpcMessage> message;
  std::string error_line;
};
Inbound ReadLine(const process::Frame& frame);

struct ChannelLimits {
  std::size_t max_line_bytes = kMaxLineBytes;           // one input message
  std::size_t max_queue_bytes = std::size_t{16} << 20;  // output waiting for the client
  std::chrono::milliseconds stall_timeout{30000};       // output queued, none taken
};

class StdioChannel {
 public:
  using LineHandler = std::function<void(process::Frame frame)>;
  // Called once: OK when the input ended (the editor closed its end; what is queued is still
  // written), else why the channel failed (a read or write error, a client that does not read;
  // nothing more is written).
  using CloseHandler = std::function<void(const Status& why)>;

  // Reads `in_fd` and writes `out_fd` (both duplicated: the caller keeps its descriptors).
  StdioChannel(boost::asio::io_context& io, int in_fd, int out_fd, ChannelLimits limits = {});
  ~StdioChannel();
  StdioChannel(const StdioChannel&) = delete;
  StdioChannel& operator=(const StdioChannel&) = delete;

  // Starts reading. Handlers run on the io thread; no line is delivered after on_close.
  void Start(LineHandler on_line, CloseHandler on_close);

  // Queues `line` and a '\n'. Dropped after the channel closed.
  void Write(std::string line);

  // Bytes queued and not yet taken by the client. Any thread.
  std::size_t queued_bytes() const { return queued_.load(); }
  // Whether everything queued has been written (or the channel failed).
  bool drained() const { return closed_ || queue_.empty(); }

 private:
  void Read();
  void WriteNext();
  void EndInput();
  void Fail(const Status& why);

  boost::asio::posix::stream_descriptor in_, out_;
  boost::asio::steady_timer stall_;
  ChannelLimits limits_;
  process::LineFramer framer_;
  LineHandler on_line_;
  CloseHandler on_close_;
  std::string read_buffer_;
  std::deque<std::string> queue_;
  std::size_t front_offset_ = 0;  // bytes of queue_.front() already written
  std::atomic<std::size_t> queued_{0};
  bool writing_ = false;
  bool input_ended_ = false;
  bool closed_ = false;  // failed: nothing is read or written any more
};

}  // namespace agentstream::jsonrpc
