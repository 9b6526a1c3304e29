// Test support (header-only, for tests only): a schema of a test's own on the PostgreSQL server
// that AGENTSTREAM_TEST_PG names (a libpq connection string; tools/test.sh starts a throw-away
// cluster and sets it). The schema is empty when made and dropped, with everything in it, when the
// object goes away; close what uses it first.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "pg/pg.h"

namespace agentstream::pg::testing {

class ScratchSchema {
 public:
  // AGENTSTREAM_TEST_PG, or nothing when it names no server (the test then skips).
  static std::optional<std::string> Server() {
    const char* conninfo = std::getenv("AGENTSTREAM_TEST_PG");
    if (conninfo == nullptr || *conninfo == '\0') return std::nullopt;
    return std::string(conninfo);
  }

  // A schema named `prefix`, this process's id and a counter: short, since the stores put the
  // name into identifiers of at most 63 bytes (application_name, channel names).
  static Result<std::unique_ptr<ScratchSchema>> Create(std::string conninfo,
                                                       std::string_view prefix) {
    static std::atomic<int> counter{0};
    AS_ASSIGN_OR_RETURN(Conn admin, Conn::Open(conninfo));
    std::string name =
        std::string(prefix) + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    AS_RETURN_IF_ERROR(admin.ExecScript("DROP SCHEMA IF EXISTS " + name + " CASCADE"));
    return std::unique_ptr<ScratchSchema>(
        new ScratchSchema(std::move(conninfo), std::move(name), std::move(admin)));
  }

  ~ScratchSchema() { (void)admin_.ExecScript("DROP SCHEMA IF EXISTS " + name_ + " CASCADE"); }
  ScratchSchema(const ScratchSchema&) = delete;
  ScratchSchema& operator=(const ScratchSchema&) = delete;

  const std::string& conninfo() const { return conninfo_; }
  const std::string& name() const { return name_; }
  // A connection of the test's own, outside the stores under test.
  Conn& admin() { return admin_; }

 private:
  ScratchSchema(std::string conninfo, std::string name, Conn admin)
      : conninfo_(std::move(conninfo)), name_(std::move(name)), admin_(std::move(admin)) {}

  std::string conninfo_;
  std::string name_;
  Conn admin_;
};

}  // namespace agentstream::pg::testing
