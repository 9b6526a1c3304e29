#include "pg/listen_thread.h"

#include <poll.h>

#include <chrono>
#include <utility>

namespace agentstream::pg {

ListenThread::ListenThread(Conn listening, Handlers handlers)
    : handlers_(std::move(handlers)),
      thread_([this, conn = std::move(listening)]() mutable { Loop(std::move(conn)); }) {}

ListenThread::~ListenThread() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

void ListenThread::Loop(Conn conn) {
  std::vector<Conn::Notification> received;
  std::vector<std::string> payloads;
  while (running_) {
    if (conn.Broken()) {
      Result<Conn> opened = handlers_.listen();
      if (opened.ok()) {
        conn = std::move(*opened);
        if (handlers_.reopened) handlers_.reopened();
      } else {
        for (int i = 0; i < 10 && running_; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
    }
    pollfd fd{conn.Socket(), POLLIN, 0};
    if (::poll(&fd, 1, 100) <= 0) continue;
    received.clear();
    if (!conn.Receive(received)) conn = Conn();
    payloads.clear();
    for (const Conn::Notification& n : received)
      if (!handlers_.own(n.sender_pid)) payloads.push_back(n.payload);
    if (!payloads.empty()) handlers_.heard(payloads);
  }
}

}  // namespace agentstream::pg
