// Internal to the store module: one search split over several database connections that run at
// once, and their hits merged newest first (search_index.h, "Search" in docs/protocol.md).
//
// Each store keeps its documents in kSearchPartitions parts (SQLite: that many FTS5 tables;
// PostgreSQL: a table hash-partitioned that many ways), so that the worst query (two common words
// that never meet, whose whole posting lists are merged) costs each part a share of the work. A
// search reads them on `slices` connections at once: slice i reads the parts p with
// p % slices == i. Every part answers its own newest `limit` hits; the merge keeps the newest
// `limit` of them all, which are the newest `limit` of the whole index whatever the split.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/status.h"
#include "store/search_index.h"

namespace agentstream::store_internal {

// The parts of the index slice `slice` of `slices` reads (slices in [1, kSearchPartitions]).
std::vector<std::size_t> PartsOfSlice(std::size_t slice, std::size_t slices);

// `wanted` bounded to [1, kSearchPartitions] and to `connections` (a search holds one connection
// per slice); 0 asks for the default: the machine's hardware threads, at most kSearchPartitions.
std::size_t BoundSearchSlices(std::size_t wanted, std::size_t connections);

// A hit and its place in the newest-first order: (time, then the order the documents were added
// in), larger first. Keys are unique within one index.
struct RankedHit {
  std::pair<std::int64_t, std::int64_t> key;
  SearchHit hit;
};

// The `limit` newest hits of all the slices' (each slice's in any order), newest first.
std::vector<SearchHit> MergeNewestFirst(std::vector<std::vector<RankedHit>> slices,
                                        std::size_t limit);

class SliceRunner;

// The parts of the index one slice reads, and its newest query.limit hits of each.
using FindInParts = std::function<Result<std::vector<RankedHit>>(
    std::size_t slice, const std::vector<std::size_t>& parts)>;

// The `limit` newest hits of the whole index: `find` for every slice of `runner` at once, merged.
// The first slice's error when one fails.
Result<std::vector<SearchHit>> SearchSlices(SliceRunner& runner, std::size_t limit,
                                            const FindInParts& find);

// Runs the slices of a search at once: slice 0 on the caller's thread, the others on workers the
// runner owns (one per further slice, started with it, joined by its destructor). Thread-safe:
// the slices of concurrent searches queue for the same workers in turn. A slice's body must not
// wait for another slice (each holds what it needs before Run), so they cannot deadlock.
// The queue holds slices() - 1 tasks per search in flight and no more: its bound is the number of
// threads that search at once (the server's I/O threads, each running one request at a time).
class SliceRunner {
 public:
  explicit SliceRunner(std::size_t slices);
  ~SliceRunner();
  SliceRunner(const SliceRunner&) = delete;
  SliceRunner& operator=(const SliceRunner&) = delete;

  std::size_t slices() const { return workers_.size() + 1; }
  // Calls body(i) for every slice i and returns once every call has, with their outcomes in
  // slice order.
  std::vector<Status> Run(const std::function<Status(std::size_t)>& body);

 private:
  void Work();

  std::mutex mu_;  // guards queue_ and stopping_
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace agentstream::store_internal
