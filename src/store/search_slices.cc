#include "store/search_slices.h"

#include <algorithm>
#include <iterator>
#include <latch>

namespace agentstream::store_internal {

std::vector<std::size_t> PartsOfSlice(std::size_t slice, std::size_t slices) {
  std::vector<std::size_t> parts;
  for (std::size_t p = slice; p < kSearchPartitions; p += slices) parts.push_back(p);
  return parts;
}

std::size_t BoundSearchSlices(std::size_t wanted, std::size_t connections) {
  if (wanted == 0) wanted = std::max(1U, std::thread::hardware_concurrency());
  return std::clamp<std::size_t>(std::min(wanted, connections), 1, kSearchPartitions);
}

std::vector<SearchHit> MergeNewestFirst(std::vector<std::vector<RankedHit>> slices,
                                        std::size_t limit) {
  std::vector<RankedHit> all;
  for (std::vector<RankedHit>& slice : slices)
    std::move(slice.begin(), slice.end(), std::back_inserter(all));
  const auto newer = [](const RankedHit& a, const RankedHit& b) { return a.key > b.key; };
  const std::size_t kept = std::min(limit, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kept), all.end(), newer);
  std::vector<SearchHit> hits;
  hits.reserve(kept);
  for (std::size_t i = 0; i < kept; ++i) hits.push_back(std::move(all[i].hit));
  return hits;
}

Result<std::vector<SearchHit>> SearchSlices(SliceRunner& runner, std::size_t limit,
                                            const FindInParts& find) {
  const std::size_t n = runner.slices();
  std::vector<std::vector<RankedHit>> found(n);
  const std::vector<Status> outcomes = runner.Run([&](std::size_t slice) -> Status {
    AS_ASSIGN_OR_RETURN(found[slice], find(slice, PartsOfSlice(slice, n)));
    return Status::Ok();
  });
  for (const Status& outcome : outcomes) AS_RETURN_IF_ERROR(outcome);
  return MergeNewestFirst(std::move(found), limit);
}

SliceRunner::SliceRunner(std::size_t slices) {
  for (std::size_t i = 1; i < slices; ++i) workers_.emplace_back([this] { Work(); });
}

SliceRunner::~SliceRunner() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

std::vector<Status> SliceRunner::Run(const std::function<Status(std::size_t)>& body) {
  const std::size_t n = slices();
  std::vector<Status> outcomes(n, Status::Ok());
  std::latch done(static_cast<std::ptrdiff_t>(n - 1));
  if (n > 1) {
    {
      std::lock_guard lock(mu_);
      for (std::size_t i = 1; i < n; ++i) {
        queue_.emplace_back([&, i] {
          outcomes[i] = body(i);
          done.count_down();
        });
      }
    }
    ready_.notify_all();
  }
  outcomes[0] = body(0);
  done.wait();
  return outcomes;
}

void SliceRunner::Work() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace agentstream::store_internal
