// The stdio transport over real pipes: lines framed in, oversize input bounded, output in order,
// and a client that does not read disconnected (over the queue bound, or stalled).
#include "jsonrpc/stdio_channel.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

namespace agentstream::jsonrpc {
namespace {

struct Pipe {
  int read_end = -1, write_end = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_end = fds[0];
    write_end = fds[1];
  }
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  void CloseRead() {
    if (read_end >= 0) ::close(read_end);
    read_end = -1;
  }
  void CloseWrite() {
    if (write_end >= 0) ::close(write_end);
    write_end = -1;
  }
};

void WriteAll(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    ASSERT_GT(n, 0);
    done += static_cast<std::size_t>(n);
  }
}

TEST(StdioChannel, FramesInputBoundsOversizeLinesAndEndsAtEof) {
  Pipe in, out;
  boost::asio::io_context io;
  StdioChannel channel(io, in.read_end, out.write_end, ChannelLimits{.max_line_bytes = 16});
  std::vector<process::Frame> frames;
  std::optional<Status> closed;
  channel.Start([&](process::Frame f) { frames.push_back(std::move(f)); },
                [&](const Status& why) { closed = why; });
  WriteAll(in.write_end, "{\"a\":1}\n{\"b\"");
  WriteAll(in.write_end, ":2}\n" + std::string(100, 'x') + "\nlast");
  in.CloseWrite();
  io.run_for(std::chrono::seconds(5));
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames[0].text, "{\"a\":1}");
  EXPECT_EQ(frames[1].text, "{\"b\":2}");
  EXPECT_EQ(frames[2].kind, process::Frame::Kind::kOversize);
  EXPECT_EQ(frames[3].text, "last");
  ASSERT_TRUE(closed);
  EXPECT_TRUE(closed->ok());
}

TEST(StdioChannel, WritesLinesInOrder) {
  Pipe in, out;
  boost::asio::io_context io;
  StdioChannel channel(io, in.read_end, out.write_end);
  channel.Start([](process::Frame) {}, [](const Status&) {});
  for (int i = 0; i < 100; ++i) channel.Write("line " + std::to_string(i));
  std::string got;
  // Until every line arrived, however the writes were split; the pipe's read end blocks, so it
  // is read only when poll says it has bytes.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(channel.drained() && got.ends_with("line 99\n")) &&
         std::chrono::steady_clock::now() < deadline) {
    io.run_for(std::chrono::milliseconds(10));
    pollfd readable{out.read_end, POLLIN, 0};
    if (::poll(&readable, 1, 0) != 1) continue;
    char buffer[4096];
    const ssize_t n = ::read(out.read_end, buffer, sizeof buffer);
    if (n > 0) got.append(buffer, static_cast<std::size_t>(n));
  }
  EXPECT_TRUE(got.starts_with("line 0\nline 1\n"));
  EXPECT_TRUE(got.ends_with("line 98\nline 99\n"));
  EXPECT_EQ(channel.queued_bytes(), 0u);
}

TEST(StdioChannel, AClientThatDoesNotReadIsDisconnectedPastTheQueueBound) {
  Pipe in, out;  // nobody reads out.read_end
  boost::asio::io_context io;
  StdioChannel channel(
      io, in.read_end, out.write_end,
      ChannelLimits{.max_queue_bytes = 1 << 20, .stall_timeout = std::chrono::hours(1)});
  std::optional<Status> closed;
  channel.Start([](process::Frame) {}, [&](const Status& why) { closed = why; });
  const std::string line(64 * 1024, 'y');
  for (int i = 0; i < 40 && !closed; ++i) {
    channel.Write(line);
    io.run_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed->code(), ErrorCode::kResourceExhausted);
  channel.Write("dropped");  // after the failure, nothing more is queued
  EXPECT_TRUE(channel.drained());
}

TEST(StdioChannel, AClientThatStopsReadingIsDisconnectedAfterTheStallTimeout) {
  Pipe in, out;
  boost::asio::io_context io;
  StdioChannel channel(io, in.read_end, out.write_end,
                       ChannelLimits{.stall_timeout = std::chrono::milliseconds(200)});
  std::optional<Status> closed;
  channel.Start([](process::Frame) {}, [&](const Status& why) { closed = why; });
  channel.Write(std::string(512 * 1024, 'z'));  // more than a pipe holds
  io.run_for(std::chrono::seconds(3));
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed->code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(closed->message().find("read nothing"), std::string::npos);
}

}  // namespace
}  // namespace agentstream::jsonrpc
