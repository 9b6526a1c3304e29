// ListenThread: a connection that LISTENs on a channel, read on a thread of its own, for the
// PostgreSQL stores whose daemons hear each other's commits (the session log's commit channel,
// the generic streams' wake-ups). Notifications sent by a server process own() recognizes (one of
// the store's own writers) are passed over; the others of one read go to `heard` together. A lost
// connection is reopened with `listen` every second, then `reopened` runs: what was announced
// while nobody listened is lost, and the store decides how to make up for it.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "pg/pg.h"

namespace agentstream::pg {

class ListenThread {
 public:
  struct Handlers {
    std::function<Result<Conn>()> listen;  // a new connection that LISTENs already
    std::function<bool(int pid)> own;
    std::function<void(const std::vector<std::string>& payloads)> heard;
    std::function<void()> reopened;  // may be empty
  };
  // `listening` LISTENs already, so every notification sent after this is constructed is heard.
  ListenThread(Conn listening, Handlers handlers);
  ~ListenThread();  // stops and joins the thread within about 100 ms
  ListenThread(const ListenThread&) = delete;
  ListenThread& operator=(const ListenThread&) = delete;

 private:
  void Loop(Conn conn);

  const Handlers handlers_;
  std::atomic<bool> running_{true};
  std::thread thread_;  // last: it starts once the members it reads are set
};

}  // namespace agentstream::pg
