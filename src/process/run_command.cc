#include "process/run_command.h"

#include <memory>
#include <utility>

namespace agentstream::process {

Result<CommandResult> RunCommand(const SpawnOptions& options, Millis timeout,
                                 std::size_t max_out_bytes) {
  EventLoop loop;
  CommandResult result;
  bool exited = false;
  ProcessHandlers handlers;
  handlers.on_stdout = [&result, max_out_bytes](const Frame& frame) {
    if (result.out_truncated || frame.kind == Frame::Kind::kOversize ||
        frame.text.size() + 1 > max_out_bytes - result.out.size()) {
      result.out_truncated = true;
      return;
    }
    result.out += frame.text + '\n';
  };
  handlers.on_exit = [&result, &exited](ExitInfo exit) {
    result.exit = std::move(exit);
    exited = true;
  };
  auto child = ChildProcess::Spawn(loop, options, std::move(handlers));
  if (!child.ok()) return Error(ErrorCode::kNotFound, child.status().message());
  (*child)->CloseStdin();
  if (!loop.RunUntil([&exited] { return exited; }, timeout)) {
    return Error(ErrorCode::kUnavailable, options.argv[0] + " did not finish within " +
                                              std::to_string(timeout.count()) + " ms");
  }
  return result;
}

}  // namespace agentstream::process
