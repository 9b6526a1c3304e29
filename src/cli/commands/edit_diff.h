// The change a file-editing tool call makes, read from the call's own input, as diff lines for
// `follow` (docs/workspaces.md): claude's Edit, MultiEdit and Write, and opencode's edit and
// write (the same arguments in camelCase); codex's apply_patch patches ("*** Begin Patch") and
// file changes (`changes`, with their unified diffs); ACP `diff` content items ({type: "diff",
// path, oldText, newText}), in the input or as the input. Every old line is shown removed and
// every new line added (no line matching), except in patches and unified diffs, whose own lines
// are kept. The web page applies the same rules (web/src/ui/render/edit_diff.ts); the
// worktree's real diff is GET /v1/agents/{id}/diff.
//
// Pure; never fails: a tool it does not know, or an input without the fields, gives no lines.
// Bounded: at most `max_lines` lines, each cut to `max_line_chars` bytes on a UTF-8 boundary,
// then one "... N more lines" line.
#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace agentstream::cli {

// "--- PATH" first, then "- OLD" and "+ NEW" lines.
std::vector<std::string> EditDiffLines(std::string_view tool, const boost::json::value& input,
                                       std::size_t max_lines = 24,
                                       std::size_t max_line_chars = 160);

}  // namespace agentstream::cli
