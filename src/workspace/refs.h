// Ref names as git checks them, without running git: the branch names a client may ask for and
// the refs a lookup may name. Pure: no I/O.
//
// Every lookup the daemon makes names a ref exactly (`refs/heads/NAME`, a full `refs/...` name,
// `HEAD`) or a full object id, so a tag and a branch with one name are never confused and no
// abbreviation or `@{...}` expression reaches git (docs/workspaces.md, "Refs").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace agentstream::workspace {

// Longest branch name or ref a client may give, checked before git runs.
inline constexpr std::size_t kMaxRefBytes = 255;
// Longest component of a branch name: git writes `COMPONENT.lock` while it makes a ref, and a
// file name has at most 255 bytes.
inline constexpr std::size_t kMaxRefComponentBytes = 250;

// OK when `name` is a branch name `git check-ref-format --branch` accepts (checked here as git
// does for `refs/heads/NAME`), is not `@`, `HEAD` or an option (a leading '-'), and fits the
// bounds above. kInvalidArgument naming the rule it breaks otherwise.
Status CheckBranchName(std::string_view name);

// OK when `name` is a full ref name git accepts (`refs/...`, with the rules of
// `git check-ref-format`) within kMaxRefBytes. kInvalidArgument otherwise.
Status CheckFullRefName(std::string_view name);

// Whether `text` is a full object id in lowercase hex: 40 digits (SHA-1) or 64 (SHA-256).
bool IsFullObjectId(std::string_view text);

// What a client's ref (a diff's `against`, a worktree's `base`) names, exactly:
// - `HEAD` and full object ids as they are;
// - a name starting with `refs/` as that full ref;
// - anything else as the branch `refs/heads/NAME`.
// kInvalidArgument (with `what`, "base" or "against", in the message) for a name that is none of
// these, such as `v1^`, `@{-1}`, `main~2` or an over-long one.
Result<std::string> ExactRef(std::string_view what, std::string_view ref);

}  // namespace agentstream::workspace
