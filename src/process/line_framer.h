// Newline framing of a child process's output with a maximum line size. Pure: bytes in, frames
// out; no I/O. Used by ChildProcess for stdout, and testable on recorded bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace agentstream::process {

struct Frame {
  enum class Kind {
    kLine,      // `text` is one complete line without its '\n' (a trailing '\r' is kept)
    kOversize,  // a line longer than the maximum: `text` holds its first max bytes, the rest of
                // the line (through its '\n') was discarded; `dropped` counts the discarded bytes
  };
  Kind kind = Kind::kLine;
  std::string text;
  std::size_t dropped = 0;
};

// Splits a byte stream into lines. A line longer than `max_line_bytes` becomes one kOversize
// frame once its end is seen (or at Finish); memory stays bounded by max_line_bytes whatever the
// input. Not thread-safe; one framer per stream.
class LineFramer {
 public:
  explicit LineFramer(std::size_t max_line_bytes) : max_(max_line_bytes) {}

  // Appends `bytes` and returns every frame they complete, in order.
  std::vector<Frame> Feed(std::string_view bytes);

  // End of stream: a pending partial line (no final '\n') becomes a last frame, if any.
  std::vector<Frame> Finish();

  std::size_t max_line_bytes() const { return max_; }

 private:
  void Take(std::string_view piece);

  std::size_t max_;
  std::string partial_;
  std::size_t dropped_ = 0;  // bytes discarded from the current line (> 0: it is oversize)
};

// Keeps the last `capacity` bytes written to it (a process's stderr, for diagnostics). Bounded
// memory; not thread-safe.
class ByteRing {
 public:
  explicit ByteRing(std::size_t capacity) : capacity_(capacity) {}
  void Write(std::string_view bytes);
  // The retained bytes, oldest first.
  std::string Contents() const;
  std::size_t total_written() const { return total_; }

 private:
  std::size_t capacity_;
  std::string buffer_;     // at most capacity_ bytes, used as a ring once full
  std::size_t head_ = 0;   // index of the oldest byte when full
  std::size_t total_ = 0;  // bytes ever written
};

}  // namespace agentstream::process
