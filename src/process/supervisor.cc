#include "process/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace agentstream::process {

namespace {

// The descriptor numbers inside the supervisor and the agent.
constexpr int kErrorFd = 3;  // reports an exec failure's errno to the daemon (CLOEXEC)
constexpr int kSignalDaemonGone = SIGUSR1;

// Everything below runs in forked children: async-signal-safe system calls only.

// What the supervisor and the agent tell the daemon over the report pipe.
struct Report {
  int kind;  // kAgentPid, then either nothing (the agent's program runs) or kFailure
  int value;
};
constexpr int kAgentPid = 1;
constexpr int kFailure = 2;

void Tell(int fd, int kind, int value) {
  const Report report{kind, value};
  (void)!::write(fd, &report, sizeof report);
}

[[noreturn]] void FailChild(int fd, int error) {
  Tell(fd, kFailure, error);
  ::_exit(127);
}

void DefaultDispositions() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) (void)::sigaction(sig, &dfl, nullptr);
}

[[noreturn]] void RunAgent(const SupervisedSpawn& s) {
  // A session of its own: the daemon signals the agent's group, never the supervisor, which stays
  // to reap the agent and what it leaves.
  (void)::setsid();
  if (::fcntl(kErrorFd, F_SETFD, FD_CLOEXEC) != 0) FailChild(kErrorFd, errno);
  if (s.cwd != nullptr && ::chdir(s.cwd) != 0) FailChild(kErrorFd, errno);
  sigset_t none;
  sigemptyset(&none);
  (void)::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(s.program, s.argv, s.envp);
  FailChild(kErrorFd, errno);
}

// Exits the way the agent did: with its exit code, or killed by its signal.
[[noreturn]] void ExitLike(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    struct rlimit no_core {
      0, 0
    };
    (void)::setrlimit(RLIMIT_CORE, &no_core);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    (void)::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    (void)::kill(::getpid(), sig);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128);
}

// Kills this process's children until it has none: as a child subreaper it inherits every
// process its descendants leave behind when they die, tools that started sessions of their own
// included, so the passes reach the whole tree. Reaps them. Reads /proc with system calls only.
void KillDescendants() {
  const pid_t self = ::getpid();
  for (int pass = 0; pass < 200; ++pass) {
    bool found = false;
    const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;
    char entries[4096];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, dir, entries, sizeof entries);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        struct Dirent64 {
          unsigned long long ino;
          long long off;
          unsigned short reclen;
          unsigned char type;
          char name[1];
        };
        const auto* d = reinterpret_cast<const Dirent64*>(entries + at);
        at += d->reclen;
        pid_t pid = 0;
        const char* c = d->name;
        for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
        if (*c != '\0' || pid <= 0 || pid == self) continue;
        char path[32] = "/proc/";
        int len = 6;
        for (const char* q = d->name; *q != '\0' && len < 24; ++q) path[len++] = *q;
        const char tail[] = "/stat";
        for (const char* q = tail; *q != '\0'; ++q) path[len++] = *q;
        path[len] = '\0';
        const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char stat[512];
        const ssize_t got = ::read(fd, stat, sizeof stat - 1);
        ::close(fd);
        if (got <= 0) continue;
        stat[got] = '\0';
        // "PID (COMM) STATE PPID ...": COMM may hold anything, so look after its last ')'.
        const char* end = nullptr;
        for (const char* q = stat; *q != '\0'; ++q)
          if (*q == ')') end = q;
        if (end == nullptr || end[1] == '\0' || end[2] == '\0') continue;
        const char* q = end + 4;  // ") S " then the parent's pid
        pid_t parent = 0;
        for (; *q >= '0' && *q <= '9'; ++q) parent = parent * 10 + (*q - '0');
        if (parent != self) continue;
        found = true;
        (void)::kill(pid, SIGKILL);
      }
    }
    ::close(dir);
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (!found) return;
    const struct timespec pause { 0, 5000000L };
    (void)::nanosleep(&pause, nullptr);
  }
}

[[noreturn]] void RunSupervisor(const SupervisedSpawn& s, pid_t daemon, int error_fd) {
  // Every signal stays blocked (the daemon blocked them around fork) and is waited for below;
  // default dispositions, so that none the daemon ignores is discarded, and the agent starts
  // with them.
  DefaultDispositions();
  (void)::setsid();
  (void)::prctl(PR_SET_CHILD_SUBREAPER, 1);
  (void)::prctl(PR_SET_PDEATHSIG, kSignalDaemonGone);
  if (::getppid() != daemon) (void)::kill(0, SIGKILL);  // the daemon died before prctl
  // The four descriptors the agent needs, moved out of the way, then into 0 to 3; every other
  // descriptor of the daemon closed.
  const int in = ::fcntl(s.stdin_fd, F_DUPFD, 10);
  const int out = ::fcntl(s.stdout_fd, F_DUPFD, 10);
  const int err = ::fcntl(s.stderr_fd, F_DUPFD, 10);
  const int report = ::fcntl(error_fd, F_DUPFD, 10);
  if (in < 0 || out < 0 || err < 0 || report < 0) FailChild(error_fd, errno);
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0 || ::dup2(report, kErrorFd) < 0)
    FailChild(report, errno);
  (void)::syscall(SYS_close_range, kErrorFd + 1, ~0U, 0);
  const pid_t agent = ::fork();
  if (agent < 0) FailChild(kErrorFd, errno);
  if (agent == 0) RunAgent(s);
  Tell(kErrorFd, kAgentPid, agent);
  for (int fd = 0; fd <= kErrorFd; ++fd) (void)::close(fd);
  sigset_t wait_for;
  sigfillset(&wait_for);
  for (;;) {
    siginfo_t info;
    const int sig = ::sigwaitinfo(&wait_for, &info);
    if (sig == kSignalDaemonGone) {
      KillDescendants();         // the agent and everything it started, wherever it went
      (void)::kill(0, SIGKILL);  // what is left of the group, this process included
    }
    if (sig != SIGCHLD) continue;  // a signal the daemon sent the group: it reached the agent
    int status = 0;
    pid_t done = 0;
    bool agent_done = false;
    while ((done = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (done == agent) {
        agent_done = true;
        break;
      }
    }
    if (agent_done) {
      // What the agent leaves behind (background tasks, detached tools) dies with it.
      KillDescendants();
      ExitLike(status);
    }
  }
}

}  // namespace

Result<SupervisedProcess> StartSupervised(const SupervisedSpawn& spawn, const std::string& what) {
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0)
    return Error(ErrorCode::kUnavailable, "cannot start " + what + ": pipe2 failed");
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t daemon = ::getpid();
  const pid_t supervisor = ::fork();
  if (supervisor == 0) RunSupervisor(spawn, daemon, error_pipe[1]);
  const int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(error_pipe[1]);
  if (supervisor < 0) {
    ::close(error_pipe[0]);
    return Error(ErrorCode::kUnavailable,
                 "cannot start " + what + ": fork failed: " + std::strerror(fork_error));
  }
  // The agent's pid, then EOF once its program runs (its copy closed at exec, the supervisor's
  // before it waits), or a failure.
  SupervisedProcess started{supervisor, 0};
  int failure = 0;
  for (;;) {
    Report report{};
    const ssize_t n = ::read(error_pipe[0], &report, sizeof report);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof report)) break;
    if (report.kind == kAgentPid) started.agent = report.value;
    if (report.kind == kFailure) failure = report.value;
  }
  ::close(error_pipe[0]);
  if (failure != 0 || started.agent <= 0) {
    (void)::waitpid(supervisor, nullptr, 0);
    return Error(ErrorCode::kUnavailable,
                 "cannot start " + what + ": " +
                     std::string(failure != 0 ? std::strerror(failure) : "the supervisor failed"));
  }
  return started;
}

}  // namespace agentstream::process
