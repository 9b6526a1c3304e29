// Test-only: the server fixtures that more than one of the server's test files uses (each of those
// files tests one source over real sockets). HttpTest is a server whose long-polls time out after
// 300 ms; HostTest a server that takes only its own names and "lb.example" as Host and serves
// generic Durable Streams from memory. Like ServerFixture, for use on the test's own thread.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/testing/server_test_fixture.h"
#include "streams/memory_stream_store.h"

namespace agentstream::server::testing {

// Seqs dense from `first` with no duplicate.
inline void ExpectDense(const std::vector<std::uint64_t>& seqs, std::uint64_t first = 1) {
  for (std::size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], first + i) << "at " << i;
}

class HttpTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override { o.long_poll_timeout = 300ms; }
};

class HostTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override {
    o.security.allowed_hosts = {"lb.example"};
    o.streams = &streams_;
  }
  streams::MemoryStreamStore streams_{streams::StreamLimits{}, nullptr};
};

}  // namespace agentstream::server::testing
