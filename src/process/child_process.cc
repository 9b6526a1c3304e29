#include "process/child_process.h"

#include "process/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>

#include "log/log.h"

namespace agentstream::process {

namespace asio = boost::asio;
using Descriptor = asio::posix::stream_descriptor;

std::string SignalName(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

void IgnoreBrokenPipes() { (void)std::signal(SIGPIPE, SIG_IGN); }

std::string ExitInfo::Describe() const {
  std::string out = signal != 0 ? "killed by signal " + std::to_string(signal)
                                : "exit code " + std::to_string(exit_code);
  if (!stderr_tail.empty()) out += "; stderr: " + stderr_tail;
  return out;
}

struct ChildProcess::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io, EventLoop& loop, const SpawnOptions& o, ProcessHandlers h)
      : loop(loop),
        out(io),
        err(io),
        in(io),
        pidfd(io),
        framer(o.max_line_bytes),
        ring(o.stderr_ring_bytes),
        handlers(std::move(h)) {}

  EventLoop& loop;
  Descriptor out, err, in, pidfd;
  LineFramer framer;
  ByteRing ring;
  ProcessHandlers handlers;
  pid_t pid = -1;        // the supervisor's, whose exit is reaped
  pid_t agent_pid = -1;  // the agent's own, and its group's id
  std::array<char, 65536> out_buf{};
  std::array<char, 4096> err_buf{};
  std::deque<std::string> writes;
  bool writing = false, close_after_writes = false, stdin_closed = false;
  bool out_eof = false, reaped = false, exit_delivered = false;
  ExitInfo exit;
  std::unique_ptr<TimerHandle> eof_fallback, escalation;
  std::vector<std::function<void()>> on_done;
  // The log::Scope of Spawn's caller: the handlers run in it, and the process's lines carry it.
  std::vector<log::Field> log_scope;
  std::string program;  // argv[0], in the process's lines

  void ReadOut();
  void ReadErr();
  void DrainErr();
  void WaitExit();
  void Reap();
  void MaybeDeliverExit();
  void PumpWrites();
  void Escalate(int step, KillPlan plan);
  void Kill(int sig) const {
    if (agent_pid <= 0 || reaped) return;
    Log(log::Level::kInfo, "process.signaled", {{"pid", agent_pid}, {"signal", SignalName(sig)}});
    ::kill(-agent_pid, sig);
  }
  void Log(log::Level level, std::string_view event, std::vector<log::Field> fields) const {
    log::Scope scope(log_scope);
    fields.insert(fields.begin(), log::Field{"program", program});
    log::Write(level, event, fields);
  }
  void LogExit() const;
};

void ChildProcess::Impl::LogExit() const {
  std::vector<log::Field> fields = {{"pid", agent_pid}};
  if (exit.signal != 0) {
    fields.push_back({"signal", SignalName(exit.signal)});
  } else {
    fields.push_back({"exit_code", exit.exit_code});
  }
  if (!exit.stderr_tail.empty()) fields.push_back({"stderr_tail", log::Tail(exit.stderr_tail)});
  const bool clean = exit.signal == 0 && exit.exit_code == 0;
  Log(clean ? log::Level::kInfo : log::Level::kWarn, "process.exited", std::move(fields));
}

void ChildProcess::Impl::ReadOut() {
  out.async_read_some(asio::buffer(out_buf), [self = shared_from_this()](
                                                 const boost::system::error_code& ec, size_t n) {
    if (self->exit_delivered) return;
    log::Scope scope(self->log_scope);
    if (n > 0) {
      for (Frame& f : self->framer.Feed(std::string_view(self->out_buf.data(), n)))
        if (self->handlers.on_stdout) self->handlers.on_stdout(std::move(f));
    }
    if (ec) {
      for (Frame& f : self->framer.Finish())
        if (self->handlers.on_stdout) self->handlers.on_stdout(std::move(f));
      self->out_eof = true;
      return self->MaybeDeliverExit();
    }
    self->ReadOut();
  });
}

void ChildProcess::Impl::ReadErr() {
  err.async_read_some(asio::buffer(err_buf),
                      [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
                        if (n > 0) self->ring.Write(std::string_view(self->err_buf.data(), n));
                        if (!ec) self->ReadErr();
                      });
}

// What stderr still holds at exit: its last lines (often the reason) arrive with the exit, and
// the pending read may not have run yet.
void ChildProcess::Impl::DrainErr() {
  boost::system::error_code ec;
  err.non_blocking(true, ec);
  for (int i = 0; i < 16 && !ec; ++i) {  // at most 64 KiB: the ring keeps the end anyway
    const std::size_t n = err.read_some(asio::buffer(err_buf), ec);
    if (n > 0) ring.Write(std::string_view(err_buf.data(), n));
  }
}

void ChildProcess::Impl::WaitExit() {
  pidfd.async_wait(Descriptor::wait_read,
                   [self = shared_from_this()](const boost::system::error_code& ec) {
                     if (ec == asio::error::operation_aborted) return;
                     self->Reap();
                   });
}

void ChildProcess::Impl::Reap() {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return;
  reaped = true;
  if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  ::kill(-agent_pid, SIGKILL);  // deterministic cleanup: whatever is left in the agent's group
  // Stdout may stay open in a grandchild that escaped the group; do not wait for it for ever.
  eof_fallback = loop.timers().After(Millis(2000), [w = weak_from_this()] {
    if (auto self = w.lock()) self->out_eof = true, self->MaybeDeliverExit();
  });
  MaybeDeliverExit();
}

void ChildProcess::Impl::MaybeDeliverExit() {
  if (!out_eof || !reaped || exit_delivered) return;
  exit_delivered = true;
  eof_fallback.reset();
  escalation.reset();
  DrainErr();
  exit.stderr_tail = ring.Contents();
  boost::system::error_code ignored;
  out.close(ignored), err.close(ignored), in.close(ignored), pidfd.close(ignored);
  LogExit();
  log::Scope scope(log_scope);
  if (handlers.on_exit) handlers.on_exit(exit);
  auto done = std::move(on_done);
  for (auto& fn : done) fn();
}

void ChildProcess::Impl::PumpWrites() {
  if (writing || stdin_closed) return;
  if (writes.empty()) {
    if (close_after_writes) {
      boost::system::error_code ignored;
      in.close(ignored);
      stdin_closed = true;
    }
    return;
  }
  writing = true;
  asio::async_write(in, asio::buffer(writes.front()),
                    [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                      self->writing = false;
                      if (!self->writes.empty()) self->writes.pop_front();
                      if (ec) {  // EPIPE: the agent went away; its exit is reported separately
                        self->writes.clear();
                        self->stdin_closed = true;
                        return;
                      }
                      self->PumpWrites();
                    });
}

void ChildProcess::Impl::Escalate(int step, KillPlan plan) {
  if (reaped) return;
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGKILL};
  Kill(kSignals[step]);
  if (step == 2) return;
  const Millis wait = step == 0 ? plan.interrupt_grace : plan.term_grace;
  escalation = loop.timers().After(wait, [w = weak_from_this(), step, plan] {
    if (auto self = w.lock()) self->Escalate(step + 1, plan);
  });
}

namespace {

struct Pipes {
  int fds[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
  ~Pipes() {
    for (auto& p : fds)
      for (int fd : p)
        if (fd >= 0) ::close(fd);
  }
};

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

Result<SupervisedProcess> SpawnRaw(const SpawnOptions& o, Pipes& p) {
  for (auto& fds : p.fds)
    if (::pipe2(fds, O_CLOEXEC) != 0) return Error(ErrorCode::kUnavailable, "pipe2 failed");
  std::vector<std::string> env = o.env;
  if (env.empty())
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
  const std::string program = FindProgram(o.argv[0], env).value_or(o.argv[0]);
  auto argv = CStrings(o.argv);
  auto envp = CStrings(env);
  SupervisedSpawn spawn;
  spawn.program = program.c_str();
  spawn.argv = argv.data();
  spawn.envp = envp.data();
  spawn.cwd = o.cwd.empty() ? nullptr : o.cwd.c_str();
  spawn.stdin_fd = p.fds[0][0];
  spawn.stdout_fd = p.fds[1][1];
  spawn.stderr_fd = p.fds[2][1];
  return StartSupervised(spawn, o.argv[0]);
}

}  // namespace

// posix_spawnp would look the program up in the daemon's PATH; with an explicit environment it is
// looked up in that environment's PATH instead.
std::optional<std::string> FindProgram(const std::string& program,
                                       const std::vector<std::string>& env) {
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) == 0) return program;
    return std::nullopt;
  }
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  if (const char* p = ::getenv("PATH")) path = p;
  for (const std::string& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string candidate = path.substr(start, end - start) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(EventLoop& loop,
                                                          const SpawnOptions& options,
                                                          ProcessHandlers handlers) {
  if (options.argv.empty()) return Error(ErrorCode::kInvalidArgument, "empty argv");
  IgnoreBrokenPipes();  // a write to an agent that closed its stdin fails (PumpWrites)
  Pipes p;
  AS_ASSIGN_OR_RETURN(SupervisedProcess started, SpawnRaw(options, p));
  const pid_t pid = started.supervisor;
  auto& io = *static_cast<asio::io_context*>(loop.native());
  auto impl = std::make_shared<Impl>(io, loop, options, std::move(handlers));
  impl->pid = pid;
  impl->agent_pid = started.agent;
  impl->log_scope = log::Scope::Current();
  impl->program = options.argv[0];
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    ::kill(-started.agent, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Error(ErrorCode::kUnavailable, "pidfd_open failed");
  }
  impl->pidfd.assign(pidfd);
  impl->in.assign(std::exchange(p.fds[0][1], -1));
  impl->out.assign(std::exchange(p.fds[1][0], -1));
  impl->err.assign(std::exchange(p.fds[2][0], -1));
  impl->Log(log::Level::kInfo, "process.started", {{"pid", started.agent}});
  impl->ReadOut();
  impl->ReadErr();
  impl->WaitExit();
  return std::unique_ptr<ChildProcess>(new ChildProcess(std::move(impl)));
}

ChildProcess::~ChildProcess() {
  Impl& i = *impl_;
  i.handlers = {};
  i.on_done.clear();
  i.eof_fallback.reset();
  i.escalation.reset();
  if (!i.reaped) {
    // The supervisor reaps the agent and kills what it left, then exits.
    i.Kill(SIGKILL);
    ::waitpid(i.pid, nullptr, 0);
    i.reaped = true;
  }
  i.exit_delivered = true;  // pending reads complete as no-ops
  boost::system::error_code ignored;
  i.out.close(ignored), i.err.close(ignored), i.in.close(ignored), i.pidfd.close(ignored);
}

int ChildProcess::pid() const { return impl_->agent_pid; }
bool ChildProcess::exited() const { return impl_->exit_delivered; }

Status ChildProcess::WriteLine(std::string line) {
  Impl& i = *impl_;
  if (i.stdin_closed || i.close_after_writes || i.exit_delivered)
    return Error(ErrorCode::kUnavailable, "the process's stdin is closed");
  line.push_back('\n');
  i.writes.push_back(std::move(line));
  i.PumpWrites();
  return Status::Ok();
}

void ChildProcess::CloseStdin() {
  impl_->close_after_writes = true;
  impl_->PumpWrites();
}

void ChildProcess::SignalGroup(int sig) { impl_->Kill(sig); }

void ChildProcess::Terminate(KillPlan plan, std::function<void()> done) {
  Impl& i = *impl_;
  if (i.exit_delivered) {
    if (done) done();
    return;
  }
  if (done) i.on_done.push_back(std::move(done));
  if (!i.escalation) i.Escalate(0, plan);
}

std::string ChildProcess::StderrTail() const { return impl_->ring.Contents(); }

}  // namespace agentstream::process
