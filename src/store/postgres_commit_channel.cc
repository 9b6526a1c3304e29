#include "store/postgres_commit_channel.h"

#include <poll.h>

#include <chrono>
#include <cstdlib>
#include <utility>
#include <vector>

namespace agentstream::pg {

std::string CommitChannel(const std::string& schema) {
  return schema.empty() ? "agentstream_commits" : "agentstream_commits:" + schema;
}

std::string EncodeCommitNotice(const std::string& session, Epoch epoch, Seq tail) {
  return std::to_string(epoch.value()) + " " + std::to_string(tail.value()) + " " + session;
}

std::optional<CommitNotice> DecodeCommitNotice(const std::string& payload) {
  const std::size_t a = payload.find(' ');
  const std::size_t b = a == std::string::npos ? a : payload.find(' ', a + 1);
  if (b == std::string::npos || b + 1 >= payload.size()) return std::nullopt;
  char* end = nullptr;
  const std::uint64_t epoch = std::strtoull(payload.c_str(), &end, 10);
  if (end != payload.c_str() + a) return std::nullopt;
  const std::uint64_t tail = std::strtoull(payload.c_str() + a + 1, &end, 10);
  if (end != payload.c_str() + b) return std::nullopt;
  return CommitNotice{SessionId(payload.substr(b + 1)), Epoch(epoch), Seq(tail)};
}

void AnnounceCommit(Txn& t, const std::string& channel) {
  if (t.touched().empty()) return;
  std::vector<std::string> notices;
  notices.reserve(t.touched().size());
  for (const auto& [id, touched] : t.touched())
    notices.push_back(EncodeCommitNotice(id, touched.epoch, touched.after));
  (void)t.Exec("SELECT pg_notify($1, n) FROM unnest($2::text[]) AS n",
               {channel, TextArray(notices)});
}

CommitHearing::CommitHearing(Conn listening, std::function<Result<Conn>()> listen,
                             std::function<int()> own_pid,
                             std::shared_ptr<store_internal::CommitListeners> listeners)
    : listen_(std::move(listen)),
      own_pid_(std::move(own_pid)),
      listeners_(std::move(listeners)),
      thread_([this, conn = std::move(listening)]() mutable { Loop(std::move(conn)); }) {}

CommitHearing::~CommitHearing() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

void CommitHearing::Loop(Conn conn) {
  std::vector<Conn::Notification> received;
  while (running_) {
    if (conn.Broken()) {
      Result<Conn> opened = listen_();
      if (opened.ok()) {
        conn = std::move(*opened);
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
    for (const Conn::Notification& n : received) {
      if (n.sender_pid == own_pid_()) continue;  // this log's own commit
      if (std::optional<CommitNotice> notice = DecodeCommitNotice(n.payload))
        listeners_->Notify(*notice);
    }
  }
}

}  // namespace agentstream::pg
