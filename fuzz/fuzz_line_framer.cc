// libFuzzer target: the newline framing of a child process's stdout (process/line_framer.h) and
// the stderr ring beside it. The first byte picks the line limit (1..64) and the second how the
// rest is split into reads. Checked: the frames do not depend on how the bytes were split, they
// equal the lines of the input cut to the limit (kOversize exactly when a line is longer, with
// `dropped` counting the rest), and the ring keeps exactly the last bytes written.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "process/line_framer.h"

namespace agentstream::process {
namespace {

using fuzzing::Check;

bool Same(const Frame& a, const Frame& b) {
  return a.kind == b.kind && a.text == b.text && a.dropped == b.dropped;
}

// The frames the documentation promises: the input split at '\n', each line cut to `max`.
std::vector<Frame> Expected(std::string_view bytes, std::size_t max) {
  std::vector<Frame> out;
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    const std::string_view line = bytes.substr(0, nl);
    const bool oversize = line.size() > max;
    out.push_back(Frame{oversize ? Frame::Kind::kOversize : Frame::Kind::kLine,
                        std::string(line.substr(0, max)), oversize ? line.size() - max : 0});
    if (nl == std::string_view::npos) break;
    bytes.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace
}  // namespace agentstream::process

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using agentstream::process::ByteRing;
  using agentstream::process::Check;
  using agentstream::process::Frame;
  using agentstream::process::LineFramer;
  if (size < 2) return 0;
  const std::size_t max = data[0] % 64 + 1;
  const std::size_t step = data[1] % 16 + 1;  // bytes per read, growing by one each read
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 2, size - 2);

  LineFramer whole(max);
  std::vector<Frame> a = whole.Feed(bytes);
  for (Frame& f : whole.Finish()) a.push_back(std::move(f));

  LineFramer pieces(max);
  ByteRing ring(max);
  std::vector<Frame> b;
  std::string_view rest = bytes;
  for (std::size_t n = step; !rest.empty(); ++n) {
    const std::string_view read = rest.substr(0, n);
    rest.remove_prefix(read.size());
    for (Frame& f : pieces.Feed(read)) b.push_back(std::move(f));
    ring.Write(read);
  }
  for (Frame& f : pieces.Finish()) b.push_back(std::move(f));
  Check(pieces.Finish().empty());  // Finish forgets the partial line

  const std::vector<Frame> expected = agentstream::process::Expected(bytes, max);
  Check(a.size() == expected.size() && b.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    Check(agentstream::process::Same(a[i], expected[i]));
    Check(agentstream::process::Same(b[i], expected[i]));
    Check(a[i].text.size() <= max && a[i].text.find('\n') == std::string::npos);
  }

  Check(ring.total_written() == bytes.size());
  const std::string kept = ring.Contents();
  Check(kept == bytes.substr(bytes.size() - std::min(bytes.size(), max)));
  return 0;
}
