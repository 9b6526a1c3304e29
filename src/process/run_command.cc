#include "process/run_command.h"

#include <memory>
#include <utility>

namespace agentstream::process {

Result<CommandResult> RunCommand(const SpawnOptions& options, Millis timeout) {
  EventLoop loop;
  CommandResult result;
  bool exited = false;
  ProcessHandlers handlers;
  handlers.on_stdout = [&result](const Frame& frame) { result.out += frame.text + '\n'; };
  handlers.on_exit = [&result, &exited](ExitInfo exit) {
    result.exit = std::move(exit);
    exited = true;
  };
  AS_ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> child,
                      ChildProcess::Spawn(loop, options, std::move(handlers)));
  child->CloseStdin();
  if (!loop.RunUntil([&exited] { return exited; }, timeout)) {
    return Error(ErrorCode::kUnavailable, options.argv[0] + " did not finish within " +
                                              std::to_string(timeout.count()) + " ms");
  }
  return result;
}

}  // namespace agentstream::process
