// append_floor: the physical floor of the daemon's durable-append design on this machine
// (docs/benchmarks.md; measured beside the daemon by bench/cpu_per_append.sh). It does only what
// every durable HTTP append must do: read the request, parse it, write the message into SQLite
// with the daemon's generic-streams durability (src/streams/stream_journal.cc: WAL,
// synchronous=FULL, locking_mode=EXCLUSIVE, one table of messages in append order, one prepared
// INSERT), commit, and answer. The daemon's CPU per append over this program's is what its
// framework, threads and features cost.
//
// Group commit, no answer before durability: one thread; each epoll round reads every ready
// socket, parses every complete request, INSERTs all appends of the round in one transaction,
// COMMITs (one WAL fsync), and only then writes the answers, one write per connection per round.
// Requests that arrive during a commit wait for the next round, so the fsync is shared by all of
// them. This is the simplest design that amortizes the fsync: no queue, no hand-off between
// threads, no wake-up. A failed commit ends the program before any answer of its round is sent,
// so an answered append is always on disk.
//
// HTTP/1.1 only as far as the load needs: keep-alive, pipelining, bodies framed by
// Content-Length (anything else is answered 400 and the connection closed), at most 1 MiB per
// request.
//
//   PUT  /v1/stream/NAME   create the stream: 201 (200 if it exists)
//   POST /v1/stream/NAME   append the body: 204 with Stream-Next-Offset (404: unknown stream)
//
//   append_floor --db PATH [--port N]      prints "listening PORT"; SIGTERM or SIGINT ends it
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

constexpr std::size_t kMaxRequest = std::size_t{1} << 20;  // head and body; also a buffer's size
constexpr std::string_view kPrefix = "/v1/stream/";
// Bytes each message adds to a stream's byte position besides its data, as in the daemon's
// offsets (src/streams/offset.h). The body is stored as it came: the daemon also validates a
// JSON message and stores it with a separating comma, one byte more per message.
constexpr std::uint64_t kFrameOverhead = 5;
constexpr int kMaxEvents = 256;

// ---- HTTP requests: a pure parser over the bytes received ----

struct Request {
  std::string_view method;
  std::string_view target;
  std::string_view body;
  std::size_t size = 0;  // bytes of head and body
  bool close = false;    // the client asked for the connection to close after the answer
};

enum class Parsed { kIncomplete, kBad, kOk };

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Reads the header lines of `head` (after the request line) into `out`; the body length into
// `length`. False on a header this server refuses: a second or malformed Content-Length, any
// Transfer-Encoding, a line without a colon.
bool ParseHeaders(std::string_view head, Request* out, std::size_t* length) {
  bool have_length = false;
  while (!head.empty()) {
    const std::size_t eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    head.remove_prefix(eol == std::string_view::npos ? head.size() : eol + 2);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return false;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = Trim(line.substr(colon + 1));
    if (EqualsIgnoreCase(name, "transfer-encoding")) return false;
    if (EqualsIgnoreCase(name, "connection")) {
      if (EqualsIgnoreCase(value, "close")) out->close = true;
      if (EqualsIgnoreCase(value, "keep-alive")) out->close = false;
    }
    if (!EqualsIgnoreCase(name, "content-length")) continue;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), *length);
    if (have_length || value.empty() || ec != std::errc() || end != value.data() + value.size())
      return false;
    have_length = true;
  }
  return true;
}

// Parses the first request of `bytes`. kIncomplete: more bytes are needed; kBad: the request is
// refused (also when it would exceed kMaxRequest).
Parsed ParseRequest(std::string_view bytes, Request* out) {
  const std::size_t head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string_view::npos)
    return bytes.size() >= kMaxRequest ? Parsed::kBad : Parsed::kIncomplete;
  const std::string_view head = bytes.substr(0, head_end);
  const std::size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = line.find(' ', sp1 == std::string_view::npos ? 0 : sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) return Parsed::kBad;
  const std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return Parsed::kBad;
  *out = Request{
      line.substr(0, sp1), line.substr(sp1 + 1, sp2 - sp1 - 1), {}, 0, version == "HTTP/1.0"};
  std::size_t length = 0;
  const std::string_view headers = eol == std::string_view::npos ? "" : head.substr(eol + 2);
  if (!ParseHeaders(headers, out, &length)) return Parsed::kBad;
  const std::size_t body_begin = head_end + 4;
  if (length > kMaxRequest || body_begin + length > kMaxRequest) return Parsed::kBad;
  if (bytes.size() < body_begin + length) return Parsed::kIncomplete;
  out->body = bytes.substr(body_begin, length);
  out->size = body_begin + length;
  return Parsed::kOk;
}

// ---- the journal: SQLite as the daemon's generic streams keep it ----

struct Stream {
  std::int64_t id = 0;
  std::uint64_t byte_pos = 0;  // the stream's tail
};

// Lets the streams be found by a std::string_view into the request.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view name) const {
    return std::hash<std::string_view>{}(name);
  }
};

// One row to write in the round's transaction: a new stream, or a message.
struct Write {
  bool create = false;
  std::int64_t stream_id = 0;
  std::string_view text;       // the stream's name, or the message (in its connection's buffer)
  std::uint64_t byte_pos = 0;  // a message's stream tail after it
};

constexpr const char* kSchema =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "PRAGMA locking_mode=EXCLUSIVE;"
    "BEGIN EXCLUSIVE; COMMIT;"
    "CREATE TABLE IF NOT EXISTS streams(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS messages(seq INTEGER PRIMARY KEY, stream_id INTEGER NOT NULL,"
    " offset TEXT NOT NULL, data BLOB NOT NULL);";

// Writes "RRRRRRRRRRRRRRRR_BBBBBBBBBBBBBBBB" (read sequence, always 0 here as in the daemon, and
// byte position, each in 16 digits) into `out`, which holds at least 33 bytes.
std::string_view FormatOffset(std::uint64_t byte_pos, char* out) {
  std::memset(out, '0', 33);
  out[16] = '_';
  char digits[20];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, byte_pos);
  const std::size_t n = static_cast<std::size_t>(end - digits);
  std::memcpy(out + 33 - n, digits, n);
  return {out, 33};
}

// The database, its statements, and the streams it holds. One thread only.
class Journal {
 public:
  // Opens (or creates) the database at `path` and loads its streams; null with a message in
  // `error` when it cannot.
  static std::unique_ptr<Journal> Open(const std::string& path, std::string* error) {
    std::unique_ptr<Journal> j(new Journal);
    if (sqlite3_open(path.c_str(), &j->db_) != SQLITE_OK ||
        sqlite3_exec(j->db_, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK ||
        !j->Prepare("BEGIN", &j->begin_) || !j->Prepare("COMMIT", &j->commit_) ||
        !j->Prepare("INSERT INTO streams(id, name) VALUES(?, ?)", &j->insert_stream_) ||
        !j->Prepare("INSERT INTO messages(stream_id, offset, data) VALUES(?, ?, ?)",
                    &j->insert_message_) ||
        !j->Load()) {
      *error = sqlite3_errmsg(j->db_);
      return nullptr;
    }
    return j;
  }

  ~Journal() {
    for (sqlite3_stmt* s : {begin_, commit_, insert_stream_, insert_message_}) sqlite3_finalize(s);
    sqlite3_close(db_);
  }

  // The stream called `name`, or null.
  Stream* Find(std::string_view name) {
    auto it = streams_.find(name);
    return it == streams_.end() ? nullptr : &it->second;
  }

  // Adds the stream `name` in memory; its row is one of the round's writes.
  Write Create(std::string_view name) {
    auto [it, inserted] = streams_.emplace(std::string(name), Stream{next_id_++, 0});
    return Write{true, it->second.id, it->first, 0};
  }

  // Writes `writes` in one transaction and commits it: true once they are durable. False on any
  // error; the caller must then stop (the outcome of a failed COMMIT is unknown).
  bool Commit(const std::vector<Write>& writes) {
    if (!Step(begin_)) return false;
    for (const Write& w : writes)
      if (!Insert(w)) return false;
    return Step(commit_);
  }

  const char* Error() const { return sqlite3_errmsg(db_); }

 private:
  Journal() = default;

  bool Prepare(const char* sql, sqlite3_stmt** stmt) {
    return sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr) == SQLITE_OK;
  }

  static bool Step(sqlite3_stmt* stmt) {
    const int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == SQLITE_DONE;
  }

  bool Insert(const Write& w) {
    sqlite3_stmt* s = w.create ? insert_stream_ : insert_message_;
    sqlite3_bind_int64(s, 1, w.stream_id);
    if (w.create) {
      sqlite3_bind_text(s, 2, w.text.data(), static_cast<int>(w.text.size()), SQLITE_STATIC);
      return Step(s);
    }
    char offset[33];
    const std::string_view text = FormatOffset(w.byte_pos, offset);
    sqlite3_bind_text(s, 2, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
    sqlite3_bind_blob(s, 3, w.text.data(), static_cast<int>(w.text.size()), SQLITE_STATIC);
    return Step(s);
  }

  // Reads the streams and each one's tail (its messages' bytes plus the framing of each).
  bool Load() {
    sqlite3_stmt* s = nullptr;
    if (!Prepare("SELECT s.id, s.name, count(m.seq), coalesce(sum(length(m.data)), 0)"
                 " FROM streams s LEFT JOIN messages m ON m.stream_id = s.id GROUP BY s.id",
                 &s))
      return false;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      const std::int64_t id = sqlite3_column_int64(s, 0);
      const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
      const auto count = static_cast<std::uint64_t>(sqlite3_column_int64(s, 2));
      const auto bytes = static_cast<std::uint64_t>(sqlite3_column_int64(s, 3));
      streams_[name] = Stream{id, bytes + count * kFrameOverhead};
      if (id >= next_id_) next_id_ = id + 1;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE;
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* insert_stream_ = nullptr;
  sqlite3_stmt* insert_message_ = nullptr;
  // Node-based: the names stay put while the round's writes point to them.
  std::unordered_map<std::string, Stream, NameHash, std::equal_to<>> streams_;
  std::int64_t next_id_ = 1;
};

// ---- connections and the round ----

struct Connection {
  explicit Connection(int socket) : fd(socket), in(new char[kMaxRequest]) {}
  ~Connection() { close(fd); }

  int fd;
  std::unique_ptr<char[]> in;  // received bytes [in_begin, in_end); kept until the round ends
  std::size_t in_begin = 0;
  std::size_t in_end = 0;
  std::string out;           // answers not yet written
  bool writing = false;      // epoll interest: EPOLLOUT while `out` waits, else EPOLLIN
  bool close_after = false;  // close once `out` is written: refused request, EOF, or asked
  bool in_round = false;     // on this round's list of connections to answer
};

// Appends the answer to an append whose stream's tail is now `byte_pos`.
void AnswerAppend(std::uint64_t byte_pos, bool close, std::string* out) {
  char offset[33];
  out->append("HTTP/1.1 204 No Content\r\nStream-Next-Offset: ");
  out->append(FormatOffset(byte_pos, offset));
  out->append(close ? "\r\nConnection: close\r\n\r\n" : "\r\n\r\n");
}

void AnswerEmpty(std::string_view status, bool close, std::string* out) {
  out->append("HTTP/1.1 ").append(status).append("\r\nContent-Length: 0\r\n");
  out->append(close ? "Connection: close\r\n\r\n" : "\r\n");
}

class Server {
 public:
  Server(Journal* journal, int epoll_fd) : journal_(journal), epoll_(epoll_fd) {}

  // Registers a new connection on `fd` (non-blocking).
  void Add(int fd) {
    if (fd >= static_cast<int>(connections_.size())) connections_.resize(fd + 1);
    connections_[fd] = std::make_unique<Connection>(fd);
    epoll_event ev{EPOLLIN, {.fd = fd}};
    epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
  }

  // Handles connection `fd`, reported ready (to read, or to write) in the current round.
  void OnReady(int fd) {
    Connection* c = connections_[fd].get();
    if (c == nullptr) return;
    // A connection waiting to write is not read: a client that does not read its answers is
    // not read from either. An error or hang-up makes the write fail and drops it.
    if (c->writing) return (void)Flush(c);
    if (!Receive(c)) return Drop(c);
    HandleRequests(c);
    if (!c->in_round) round_.push_back(c), c->in_round = true;
  }

  // Ends the round: makes its writes durable, then answers. False when the commit failed.
  bool EndRound() {
    if (!writes_.empty() && !journal_->Commit(writes_)) return false;
    writes_.clear();
    for (Connection* c : round_) {
      c->in_round = false;
      std::memmove(c->in.get(), c->in.get() + c->in_begin, c->in_end - c->in_begin);
      c->in_end -= c->in_begin;
      c->in_begin = 0;
      Flush(c);
    }
    round_.clear();
    return true;
  }

 private:
  // Reads what the socket holds, up to a full buffer. False when the connection failed.
  // A read that does not fill the space offered has taken all the socket held: the next would
  // only say EAGAIN, a system call per append for nothing (epoll reports what comes later).
  bool Receive(Connection* c) {
    while (c->in_end < kMaxRequest) {
      const std::size_t space = kMaxRequest - c->in_end;
      const ssize_t n = read(c->fd, c->in.get() + c->in_end, space);
      if (n > 0) {
        c->in_end += static_cast<std::size_t>(n);
        if (static_cast<std::size_t>(n) < space) return true;
        continue;
      }
      if (n == 0) c->close_after = true;
      return n == 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
    return true;
  }

  // Parses every complete request received on `c` and queues its writes and answers.
  void HandleRequests(Connection* c) {
    for (;;) {
      const std::string_view bytes(c->in.get() + c->in_begin, c->in_end - c->in_begin);
      Request r;
      // Incomplete: the rest is on its way (a full buffer never is: ParseRequest refuses a
      // request larger than the buffer), or the client closed in the middle of a request.
      const Parsed parsed = ParseRequest(bytes, &r);
      if (parsed == Parsed::kIncomplete) return;
      if (parsed == Parsed::kBad) {
        AnswerEmpty("400 Bad Request", true, &c->out);
        c->close_after = true;
        return;
      }
      c->in_begin += r.size;
      Route(r, &c->out);
      if (r.close) {
        c->close_after = true;
        return;
      }
    }
  }

  void Route(const Request& r, std::string* out) {
    const std::string_view name = r.target.substr(0, r.target.find('?'));
    if (name.substr(0, kPrefix.size()) != kPrefix || name.size() == kPrefix.size())
      return AnswerEmpty("404 Not Found", r.close, out);
    const std::string_view stream_name = name.substr(kPrefix.size());
    Stream* stream = journal_->Find(stream_name);
    if (r.method == "PUT") {
      if (stream != nullptr) return AnswerEmpty("200 OK", r.close, out);
      writes_.push_back(journal_->Create(stream_name));
      return AnswerEmpty("201 Created", r.close, out);
    }
    if (r.method != "POST") return AnswerEmpty("405 Method Not Allowed", r.close, out);
    if (stream == nullptr) return AnswerEmpty("404 Not Found", r.close, out);
    if (r.body.empty()) return AnswerEmpty("400 Bad Request", r.close, out);
    stream->byte_pos += kFrameOverhead + r.body.size();
    writes_.push_back(Write{false, stream->id, r.body, stream->byte_pos});
    AnswerAppend(stream->byte_pos, r.close, out);
  }

  // Writes what `c` has to send, in one call; watches for writability when the socket is full.
  // False when the connection was closed.
  bool Flush(Connection* c) {
    while (!c->out.empty()) {
      const ssize_t n = send(c->fd, c->out.data(), c->out.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Drop(c), false;
      if (n > 0) c->out.erase(0, static_cast<std::size_t>(n));
      break;
    }
    if (c->out.empty() && c->close_after) return Drop(c), false;
    const bool writing = !c->out.empty();
    if (writing != c->writing) {
      c->writing = writing;
      epoll_event ev{writing ? EPOLLOUT : static_cast<std::uint32_t>(EPOLLIN), {.fd = c->fd}};
      epoll_ctl(epoll_, EPOLL_CTL_MOD, c->fd, &ev);
    }
    return true;
  }

  // Closes `c`. Never while `c` is on the round's list: the round's writes point into its
  // buffer (each caller runs before `c` parsed anything this round, or after the commit).
  void Drop(Connection* c) { connections_[c->fd].reset(); }

  Journal* journal_;
  int epoll_;
  std::vector<std::unique_ptr<Connection>> connections_;  // by socket
  std::vector<Connection*> round_;  // connections that received requests this round
  std::vector<Write> writes_;       // this round's rows, in request order
};

// ---- setup and the loop ----

struct Options {
  int port = 0;
  std::string db;
};

constexpr const char* kUsage =
    "usage: append_floor --db PATH [--port N]\n"
    "  Durable Streams appends at the floor of this machine (see the source's header).\n"
    "  --db PATH   SQLite database (created if missing)\n"
    "  --port N    port on 127.0.0.1 (0: the kernel picks); prints \"listening PORT\"\n";

// Fills `o` from the command line; exits on --help or a bad argument.
void ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") std::fputs(kUsage, stdout), std::exit(0);
    if (arg == "--db" && i + 1 < argc) {
      o->db = argv[++i];
    } else if (arg == "--port" && i + 1 < argc) {
      o->port = std::atoi(argv[++i]);
    } else {
      std::fputs(kUsage, stderr), std::exit(2);
    }
  }
  if (o->db.empty() || o->port < 0 || o->port > 65535) std::fputs(kUsage, stderr), std::exit(2);
}

// A non-blocking socket listening on 127.0.0.1:`port`, or -1.
int Listen(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(fd, 1024) != 0)
    return -1;
  return fd;
}

int BoundPort(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

void AcceptAll(int listener, Server* server) {
  for (;;) {
    const int fd = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    server->Add(fd);
  }
}

// SIGTERM and SIGINT, delivered as readability of the returned descriptor.
int SignalFd() {
  // A shell starts background commands with SIGINT ignored, and an ignored signal is discarded
  // before it could reach the descriptor; blocked, the default action never runs.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  return signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

// Serves until a signal arrives (0) or a commit fails (1).
int Run(int listener, int signals, Journal* journal) {
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  for (int fd : {listener, signals}) {
    epoll_event ev{EPOLLIN, {.fd = fd}};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  }
  Server server(journal, ep);
  epoll_event events[kMaxEvents];
  for (;;) {
    const int n = epoll_wait(ep, events, kMaxEvents, -1);
    bool stop = false;
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listener)
        AcceptAll(listener, &server);
      else if (fd == signals)
        stop = true;
      else
        server.OnReady(fd);
    }
    if (!server.EndRound()) {
      std::fprintf(stderr, "append_floor: commit failed: %s\n", journal->Error());
      return 1;
    }
    if (stop) return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  ParseArgs(argc, argv, &options);
  std::string error;
  std::unique_ptr<Journal> journal = Journal::Open(options.db, &error);
  if (journal == nullptr) {
    std::fprintf(stderr, "append_floor: cannot open %s: %s\n", options.db.c_str(), error.c_str());
    return 1;
  }
  const int signals = SignalFd();
  const int listener = Listen(options.port);
  if (listener < 0 || signals < 0) {
    std::fprintf(stderr, "append_floor: cannot listen: %s\n", std::strerror(errno));
    return 1;
  }
  std::printf("listening %d\n", BoundPort(listener));
  std::fflush(stdout);
  return Run(listener, signals, journal.get());
}
