#include "workspace/git.h"

#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "process/run_command.h"

namespace agentstream::workspace {

namespace {

// Settings every command gets on its command line, where they win over every file.
constexpr std::string_view kNeutralConfig[] = {
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.quotePath=true",
    "core.untrackedCache=false",
    "protocol.allow=never",
    "credential.helper=",
    "gc.auto=0",
    "maintenance.auto=false",
};

// Bytes of arguments a command may carry; far below the kernel's limit, far above any real use.
constexpr std::size_t kMaxArgumentBytes = std::size_t{64} << 10;

// The daemon's environment without any GIT_* variable, with `settings` added.
std::vector<std::string> GitEnvironment(const std::vector<std::string>& settings) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool replaced = name.substr(0, 4) == "GIT_";
    for (const std::string& s : settings)
      replaced = replaced || name == std::string_view(s).substr(0, s.find('='));
    if (!replaced) env.emplace_back(entry);
  }
  env.insert(env.end(), settings.begin(), settings.end());
  return env;
}

std::vector<std::string> Argv(const std::string& program, const std::vector<std::string>& args) {
  std::vector<std::string> argv{program};
  for (const std::string_view setting : kNeutralConfig) {
    argv.emplace_back("-c");
    argv.emplace_back(setting);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// The filter drivers emptied as command-line settings in the environment (GIT_CONFIG_COUNT),
// which takes any driver name, '=' and all, and reaches the git processes git itself starts.
void EmptyFilters(const std::vector<std::string>& filters, std::vector<std::string>& env) {
  std::size_t count = 0;
  for (const std::string& filter : filters) {
    for (const char* key : {"clean", "smudge", "process", "required"}) {
      const std::string n = std::to_string(count++);
      std::string name = "GIT_CONFIG_KEY_" + n;
      name += "=filter.";
      name += filter;
      name += '.';
      name += key;
      env.push_back(std::move(name));
      std::string value = "GIT_CONFIG_VALUE_" + n;
      value += std::string_view(key) == "required" ? "=false" : "=";
      env.push_back(std::move(value));
    }
  }
  if (count > 0) env.push_back("GIT_CONFIG_COUNT=" + std::to_string(count));
}

}  // namespace

Git::Git(GitOptions options)
    : options_(std::move(options)),
      env_(GitEnvironment({"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
                           "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
                           "GIT_ATTR_NOSYSTEM=1", "GIT_PROTOCOL_FROM_USER=0"})) {}

Result<GitOutput> Git::Run(const GitPlace& place, const std::vector<std::string>& args,
                           std::size_t max_output_bytes) const {
  process::SpawnOptions spawn;
  spawn.argv = Argv(options_.program, args);
  std::size_t argument_bytes = 0;
  for (const std::string& arg : spawn.argv) argument_bytes += arg.size() + 1;
  if (argument_bytes > kMaxArgumentBytes)
    return Error(ErrorCode::kInvalidArgument, "the git command's arguments are too long");
  spawn.env = env_;
  EmptyFilters(place.filters, spawn.env);
  spawn.env.push_back("GIT_DIR=" + place.git_dir);
  if (!place.work_tree.empty()) spawn.env.push_back("GIT_WORK_TREE=" + place.work_tree);
  spawn.cwd = place.work_tree.empty() ? place.git_dir : place.work_tree;
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

Result<std::string> Git::Check(const GitPlace& place, const std::vector<std::string>& args,
                               ErrorCode failure) const {
  AS_ASSIGN_OR_RETURN(GitOutput output, Run(place, args));
  if (output.exit_code != 0) return Error(failure, GitMessage(output));
  while (!output.out.empty() && output.out.back() == '\n') output.out.pop_back();
  return std::move(output.out);
}

std::vector<std::string> SplitNul(std::string_view out) {
  // Run keeps whole lines: output that ends without a newline gets one.
  if (!out.empty() && out.back() == '\n') out.remove_suffix(1);
  std::vector<std::string> entries;
  while (!out.empty()) {
    const std::size_t end = std::min(out.find('\0'), out.size());
    if (end > 0) entries.emplace_back(out.substr(0, end));
    out.remove_prefix(std::min(end + 1, out.size()));
  }
  return entries;
}

std::string GitMessage(const GitOutput& output) {
  std::string line = output.err.substr(0, output.err.find('\n'));
  for (const std::string_view prefix : {"fatal: ", "error: "})
    if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
  if (line.empty()) line = "exit code " + std::to_string(output.exit_code);
  return line;
}

}  // namespace agentstream::workspace
