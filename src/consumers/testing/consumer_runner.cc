// Runs a ConsumerService on a SQLite log, delivering to a webhook, until it is killed. The child
// of the kill -9 test.
//
//   consumer_runner --db PATH --url URL --secret S [--owner O] [--consumer ID] [--workers N]
//                   [--max-events N]
// Prints "READY" once the consumer is created and the service started.
#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "consumers/consumer_service.h"
#include "store/sqlite/sqlite_log.h"

namespace agentstream {
namespace {

int Run(int argc, char** argv) {
  std::string db, url, secret, owner = "runner", consumer = "hook";
  int workers = 2;
  std::size_t max_events = 500;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--db")
      db = value;
    else if (flag == "--url")
      url = value;
    else if (flag == "--secret")
      secret = value;
    else if (flag == "--owner")
      owner = value;
    else if (flag == "--consumer")
      consumer = value;
    else if (flag == "--workers")
      workers = std::stoi(value);
    else if (flag == "--max-events")
      max_events = std::stoul(value);
    else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  SqliteLogOptions options;
  options.path = db;
  auto log = OpenSqliteEventLog(options);
  if (!log.ok()) {
    std::cerr << log.status().ToString() << "\n";
    return 1;
  }
  consumers::ConsumerServiceOptions service_options;
  service_options.owner = owner;
  service_options.workers = workers;
  service_options.idle_poll_ms = 200;
  service_options.max_delivery_events = max_events;
  consumers::ConsumerService service(**log, service_options, nullptr);
  if (Status s = service.Start(); !s.ok()) {
    std::cerr << s.ToString() << "\n";
    return 1;
  }
  consumers::ConsumerSpec spec;
  spec.id = ConsumerId(consumer);
  spec.sink.kind = consumers::SinkKind::kWebhook;
  spec.sink.url = url;
  spec.sink.secret = secret;
  spec.sink.timeout_ms = 5000;
  spec.retry.initial_backoff_ms = 20;
  spec.retry.max_backoff_ms = 200;
  spec.retry.max_attempts = 1000;
  spec.coalesce = false;
  if (auto created = service.Create(spec); !created.ok()) {
    std::cerr << created.status().ToString() << "\n";
    return 1;
  }
  std::cout << "READY" << std::endl;
  while (true) std::this_thread::sleep_for(std::chrono::seconds(60));
}

}  // namespace
}  // namespace agentstream

int main(int argc, char** argv) { return agentstream::Run(argc, argv); }
