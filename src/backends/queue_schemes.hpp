// The queue-scheme registry: one entry per queue backend, holding everything the rest of the code
// needs to know about the scheme (its opener, its URL form for `--help` and the docs, whether
// other processes can share it, and its sibling-name rule for reply queues). open_queue,
// queue_siblings and the help text all read this table; a new queue backend is its adapter plus
// one entry in queue_schemes.cpp. A static_assert there refuses an entry without its usage or
// example, and tests/backends/queue_schemes_test.cpp one without its opener or naming rule.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "backends/queue_naming.hpp"
#include "ports/backend_url.hpp"
#include "ports/clock.hpp"
#include "ports/queue.hpp"

namespace overhead::backends {

struct QueueScheme {
  std::string_view scheme;      // before the first ':' ("redis")
  std::string_view usage;       // the short form, listed when a scheme is unknown ("redis://HOST[:PORT]/STREAM")
  std::string_view parameters;  // the optional query, with defaults ("group=overhead&visibility_ms=30000...")
  std::shared_ptr<ports::Queue> (*open)(const ports::BackendUrl&, const ports::ClockMs&);
  bool local_file;  // the URL's path is a file on this host, made when missing
  bool shared;      // other processes can reach it (false: in-process only)
  QueueNaming naming;  // where the queue's name is written (the sibling-name rule)
  std::string_view example;  // a URL naming queue "jobs", for the registry's own tests

  // usage + "[?" + parameters + "]": the form --help and docs/backends.md show.
  [[nodiscard]] std::string url_form() const;
};

// Every registered scheme, in registration order.
[[nodiscard]] std::span<const QueueScheme> queue_schemes();
// The scheme's entry, or nullptr when none is registered under that name.
[[nodiscard]] const QueueScheme* find_queue_scheme(std::string_view scheme);
// The schemes other processes can share, as URL prefixes ("sqlite-queue:, redis://, sqs://"), for
// errors that ask for one.
[[nodiscard]] std::string shared_queue_prefixes();

}  // namespace overhead::backends
