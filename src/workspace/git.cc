#include "workspace/git.h"

#include <unistd.h>

#include <utility>

#include "process/run_command.h"

namespace agentstream::workspace {

namespace {

// The daemon's environment with `settings` replacing any entry of the same name.
std::vector<std::string> GitEnvironment(const std::vector<std::string>& settings) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    bool replaced = false;
    for (const std::string& s : settings)
      replaced = replaced || entry.compare(0, s.find('=') + 1, s, 0, s.find('=') + 1) == 0;
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), settings.begin(), settings.end());
  return env;
}

}  // namespace

Git::Git(GitOptions options)
    : options_(std::move(options)),
      env_(GitEnvironment({"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"})) {}

Result<GitOutput> Git::Run(const std::string& dir, const std::vector<std::string>& args,
                           std::size_t max_output_bytes) const {
  process::SpawnOptions spawn;
  spawn.argv.push_back(options_.program);
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  spawn.env = env_;
  spawn.cwd = dir;
  const std::size_t bound = max_output_bytes == 0 ? options_.max_output_bytes : max_output_bytes;
  spawn.max_line_bytes = bound;
  auto ran = process::RunCommand(spawn, options_.timeout, bound);
  if (!ran.ok() && ran.status().code() == ErrorCode::kNotFound) {
    return Error(
        ErrorCode::kInvalidArgument,
        "cannot run git (is it installed and in the daemon's PATH?): " + ran.status().message());
  }
  if (!ran.ok()) return Error(ErrorCode::kUnavailable, "git: " + ran.status().message());
  if (ran->exit.signal != 0) {
    return Error(ErrorCode::kUnavailable, "git " + (args.empty() ? std::string() : args[0]) +
                                              " was killed by " +
                                              process::SignalName(ran->exit.signal));
  }
  return GitOutput{ran->exit.exit_code, std::move(ran->out), ran->out_truncated,
                   std::move(ran->exit.stderr_tail)};
}

Result<std::string> Git::Check(const std::string& dir, const std::vector<std::string>& args,
                               ErrorCode failure) const {
  AS_ASSIGN_OR_RETURN(GitOutput output, Run(dir, args));
  if (output.exit_code != 0) return Error(failure, GitMessage(output));
  while (!output.out.empty() && output.out.back() == '\n') output.out.pop_back();
  return std::move(output.out);
}

std::string GitMessage(const GitOutput& output) {
  std::string line = output.err.substr(0, output.err.find('\n'));
  for (const std::string_view prefix : {"fatal: ", "error: "})
    if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
  if (line.empty()) line = "exit code " + std::to_string(output.exit_code);
  return line;
}

}  // namespace agentstream::workspace
