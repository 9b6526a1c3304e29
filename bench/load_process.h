// What the load tools of bench/ read of a process and its clock: the steady clock in nanoseconds
// (shared by the processes of one machine, so a time taken in one process can be subtracted from
// one taken in another), the open-file limit, resident memory, CPU time, open descriptors and
// threads from /proc, and percentiles of a sample.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace agentstream::bench {

using SteadyNanos = std::int64_t;

inline SteadyNanos Now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Thousands of sockets in one process: the soft limit up to the hard one.
inline void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// A "Name:   value" line of /proc/PID/status, as a number (0 when absent).
inline std::uint64_t StatusField(std::string_view field, const std::string& pid = "self") {
  std::ifstream status("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 &&
        line[field.size()] == ':')
      return std::stoull(line.substr(field.size() + 1));
  return 0;
}

inline std::size_t ResidentBytes(const std::string& pid = "self") {
  return StatusField("VmRSS", pid) * 1024;
}

inline std::uint64_t ThreadCount() { return StatusField("Threads"); }

inline std::size_t OpenDescriptors() {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

// User plus system CPU time of this process, all threads, in seconds.
inline double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// The p-quantile (0..1) of `v`, reordering it; 0 for an empty sample.
inline double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// The seq of a cursor value `"key":"E:S"` in `text` (0 when absent); also the stream offsets
// `"E_S"` of the Durable Streams control events.
inline std::uint64_t SeqAfter(std::string_view text, std::string_view key) {
  const auto at = text.find(key);
  if (at == std::string_view::npos) return 0;
  const auto value = text.find('"', at + key.size() + 1);  // the value's opening quote
  if (value == std::string_view::npos) return 0;
  const auto colon = text.find_first_of(":_", value);
  if (colon == std::string_view::npos) return 0;
  std::uint64_t seq = 0;
  for (std::size_t i = colon + 1; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
    seq = seq * 10 + static_cast<std::uint64_t>(text[i] - '0');
  return seq;
}

}  // namespace agentstream::bench
