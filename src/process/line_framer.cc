#include "process/line_framer.h"

#include <algorithm>

namespace agentstream::process {

void LineFramer::Take(std::string_view piece) {
  const std::size_t room = max_ > partial_.size() ? max_ - partial_.size() : 0;
  const std::size_t kept = std::min(room, piece.size());
  partial_.append(piece.substr(0, kept));
  dropped_ += piece.size() - kept;
}

std::vector<Frame> LineFramer::Feed(std::string_view bytes) {
  std::vector<Frame> out;
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      Take(bytes);
      break;
    }
    Take(bytes.substr(0, nl));
    bytes.remove_prefix(nl + 1);
    Frame frame{dropped_ > 0 ? Frame::Kind::kOversize : Frame::Kind::kLine, std::move(partial_),
                dropped_};
    out.push_back(std::move(frame));
    partial_.clear();
    dropped_ = 0;
  }
  return out;
}

std::vector<Frame> LineFramer::Finish() {
  std::vector<Frame> out;
  if (!partial_.empty() || dropped_ > 0) {
    out.push_back(Frame{dropped_ > 0 ? Frame::Kind::kOversize : Frame::Kind::kLine,
                        std::move(partial_), dropped_});
  }
  partial_.clear();
  dropped_ = 0;
  return out;
}

void ByteRing::Write(std::string_view bytes) {
  total_ += bytes.size();
  if (capacity_ == 0) return;
  if (bytes.size() >= capacity_) {
    buffer_.assign(bytes.substr(bytes.size() - capacity_));
    head_ = 0;
    return;
  }
  for (char c : bytes) {
    if (buffer_.size() < capacity_) {
      buffer_.push_back(c);
    } else {
      buffer_[head_] = c;
      head_ = (head_ + 1) % capacity_;
    }
  }
}

std::string ByteRing::Contents() const {
  if (buffer_.size() < capacity_) return buffer_;
  return buffer_.substr(head_) + buffer_.substr(0, head_);
}

}  // namespace agentstream::process
