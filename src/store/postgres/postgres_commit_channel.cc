#include "store/postgres/postgres_commit_channel.h"

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

std::optional<Statement> CommitAnnouncement(const Txn& t, const std::string& channel) {
  if (t.touched().empty()) return std::nullopt;
  std::vector<std::string> notices;
  notices.reserve(t.touched().size());
  for (const auto& [id, touched] : t.touched())
    notices.push_back(EncodeCommitNotice(id, touched.epoch, touched.after));
  return Statement{"SELECT pg_notify($1, n) FROM unnest($2::text[]) AS n",
                   {channel, TextArray(notices)},
                   /*reuse=*/true};
}

std::unique_ptr<ListenThread> HearCommits(
    Conn listening, std::function<Result<Conn>()> listen, std::function<bool(int pid)> own,
    const std::shared_ptr<store_internal::CommitListeners>& listeners) {
  auto heard = [listeners](const std::vector<std::string>& payloads) {
    for (const std::string& payload : payloads)
      if (std::optional<CommitNotice> notice = DecodeCommitNotice(payload)) {
        notice->remote = true;
        listeners->Notify(*notice);
      }
  };
  return std::make_unique<ListenThread>(
      std::move(listening),
      ListenThread::Handlers{std::move(listen), std::move(own), std::move(heard), {}});
}

}  // namespace agentstream::pg
