// Plain queue names: the names a work item may carry as its reply queue and that the adapters
// derive reply queues from (backends/queue_siblings.hpp). One rule, shared by the engine and the
// adapters, so a name the worker accepts is one every backend can open.
#pragma once

#include <string_view>

namespace overhead::ports {

// 1..80 of [A-Za-z0-9_-] (what SQS allows in a queue name, and nothing that could reach into a
// Redis key pattern or a URL).
[[nodiscard]] bool is_plain_queue_name(std::string_view name);
// One character of such a name.
[[nodiscard]] constexpr bool is_plain_queue_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

}  // namespace overhead::ports
