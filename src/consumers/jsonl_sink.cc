// The JSONL file sink: appends each delivery as one line, fdatasyncs, and only then acknowledges.
// Effects once: the plan journaled before the write records the file size (Prepare); a
// redelivery first looks for its idempotency key in the lines written since that offset and
// does not write again when it is there. A line cut short by a crash can only be the file's last
// (writes are serialized and synced in order, and its delivery was never acknowledged), so the
// first use of the file after a start truncates a partial last line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "consumers/sinks.h"

namespace agentstream::consumers {

namespace {

namespace json = boost::json;

constexpr std::size_t kScanChunkBytes = std::size_t{64} << 10;

Status Errno(const std::string& what) {
  return Error(ErrorCode::kIoError, what + ": " + std::strerror(errno));
}

class JsonlSink final : public Sink {
 public:
  explicit JsonlSink(SinkSpec spec) : spec_(std::move(spec)) {}
  ~JsonlSink() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Result<json::value> Prepare(const Delivery& d) override {
    std::lock_guard lock(mu_);
    AS_RETURN_IF_ERROR(Open());
    AS_ASSIGN_OR_RETURN(std::uint64_t size, Size());
    return json::value(json::object{{"offset", size}});
  }

  Result<SinkAck> Send(const Delivery& d, const json::value& prepared) override {
    std::lock_guard lock(mu_);
    AS_RETURN_IF_ERROR(Open());
    AS_ASSIGN_OR_RETURN(std::uint64_t size, Size());
    std::uint64_t offset = size;
    if (prepared.is_object()) {
      const json::value* o = prepared.as_object().if_contains("offset");
      if (o != nullptr && o->is_number()) {
        boost::system::error_code ec;
        offset = o->to_number<std::uint64_t>(ec);
        if (ec) offset = size;
      }
    }
    if (offset < size) {
      AS_ASSIGN_OR_RETURN(bool written, Contains(offset, size, d.idempotency_key));
      if (written) return SinkAck{};
    }
    std::string line = DeliveryToJson(d);
    line.push_back('\n');
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Fail("writing " + spec_.path);
      done += static_cast<std::size_t>(n);
    }
    if (::fdatasync(fd_) != 0) return Fail("syncing " + spec_.path);
    return SinkAck{};
  }

 private:
  // A failed write may have left part of a line: close so the next use repairs the tail.
  Status Fail(const std::string& what) {
    Status s = Errno(what);
    ::close(fd_);
    fd_ = -1;
    return s;
  }

  Status Open() {
    if (fd_ >= 0) return Status::Ok();
    const bool existed = ::access(spec_.path.c_str(), F_OK) == 0;
    fd_ = ::open(spec_.path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) return Errno("opening " + spec_.path);
    if (!existed) {
      // The new file's directory entry must survive a crash as well as its lines.
      const std::string dir = spec_.path.substr(0, spec_.path.rfind('/') + 1);
      const int dfd = ::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
      }
    }
    return RepairTail();
  }

  Result<std::uint64_t> Size() {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return Errno("stat " + spec_.path);
    return static_cast<std::uint64_t>(st.st_size);
  }

  Status RepairTail() {
    AS_ASSIGN_OR_RETURN(std::uint64_t size, Size());
    if (size == 0) return Status::Ok();
    // Walk back to the last '\n'.
    std::uint64_t end = size;
    std::string chunk;
    while (end > 0) {
      const std::uint64_t start = end > kScanChunkBytes ? end - kScanChunkBytes : 0;
      chunk.resize(end - start);
      AS_RETURN_IF_ERROR(ReadAt(start, chunk));
      const std::size_t nl = chunk.rfind('\n');
      if (nl != std::string::npos) {
        end = start + nl + 1;
        break;
      }
      end = start;
    }
    if (end == size) return Status::Ok();
    if (::ftruncate(fd_, static_cast<off_t>(end)) != 0 || ::fdatasync(fd_) != 0)
      return Errno("truncating a partial last line of " + spec_.path);
    return Status::Ok();
  }

  Status ReadAt(std::uint64_t offset, std::string& out) {
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t n =
          ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Errno("reading " + spec_.path);
      done += static_cast<std::size_t>(n);
    }
    return Status::Ok();
  }

  // Whether a line in [from, to) holds `key` as its idempotency key. The needle cannot occur
  // inside a JSON string (its quotes would be escaped there), only as the delivery's own field.
  Result<bool> Contains(std::uint64_t from, std::uint64_t to, const std::string& key) {
    std::string needle = json::serialize(json::object{{"idempotencyKey", key}});
    needle = needle.substr(1, needle.size() - 2);
    std::string chunk;
    std::uint64_t at = from;
    while (at < to) {
      const std::uint64_t n = std::min<std::uint64_t>(kScanChunkBytes + needle.size(), to - at);
      chunk.resize(n);
      AS_RETURN_IF_ERROR(ReadAt(at, chunk));
      if (chunk.find(needle) != std::string::npos) return true;
      if (at + n >= to) break;
      at += n - needle.size();  // overlap so a needle across chunks is found
    }
    return false;
  }

  const SinkSpec spec_;
  std::mutex mu_;  // one write at a time; guards fd_
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<Sink> MakeJsonlSink(const SinkSpec& spec) {
  return std::make_unique<JsonlSink>(spec);
}

}  // namespace agentstream::consumers
