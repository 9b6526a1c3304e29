// libFuzzer target: the unified diff git prints, split into files and hunks for the JSON form of
// GET /v1/agents/{id}/diff (workspace/unified_diff.h). Checked: it never fails; each file's
// additions and deletions count exactly its hunks' '+' and '-' lines; every hunk line is a line
// of the input; and parsing is a function of the text (twice gives the same files).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "workspace/unified_diff.h"

namespace agentstream::workspace {
namespace {

using fuzzing::Check;

bool SameFiles(const std::vector<FileDiff>& a, const std::vector<FileDiff>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].path != b[i].path || a[i].old_path != b[i].old_path || a[i].status != b[i].status ||
        a[i].additions != b[i].additions || a[i].hunks.size() != b[i].hunks.size())
      return false;
  }
  return true;
}

}  // namespace
}  // namespace agentstream::workspace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace agentstream::workspace;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<FileDiff> files = ParseUnifiedDiff(text);
  for (const FileDiff& file : files) {
    int plus = 0, minus = 0;
    for (const DiffHunk& hunk : file.hunks) {
      Check(hunk.header.rfind("@@ ", 0) == 0);
      for (const std::string& line : hunk.lines) {
        Check(line.find('\n') == std::string::npos);
        Check(text.find(line) != std::string_view::npos);
        plus += !line.empty() && line.front() == '+';
        minus += !line.empty() && line.front() == '-';
      }
    }
    Check(plus == file.additions && minus == file.deletions);
  }
  agentstream::fuzzing::Check(SameFiles(files, ParseUnifiedDiff(text)));
  return 0;
}
