// The sibling-name rules: where each queue scheme writes the queue's name in its URL, so that a
// reply (or other sibling) queue is the same URL under another name. A scheme picks one rule when
// it registers (backends/queue_schemes.cpp); backends/queue_siblings.cpp applies it.
#pragma once

#include <string>
#include <string_view>

#include "ports/backend_url.hpp"

namespace overhead::backends {

// One rule: read the name from a URL, and write another name into it (everything else, the
// credentials included, kept as given). Both throw std::invalid_argument (redacted URL) for a URL
// that names no queue.
struct QueueNaming {
  std::string (*name)(const std::string& url, const ports::BackendUrl& u);
  std::string (*with_name)(const std::string& url, const ports::BackendUrl& u, std::string_view name);
};

namespace naming {
std::string after_scheme(const std::string& url, const ports::BackendUrl& u);  // mem:NAME
std::string after_scheme_with(const std::string& url, const ports::BackendUrl& u, std::string_view name);
std::string host(const std::string& url, const ports::BackendUrl& u);  // sqs://NAME
std::string host_with(const std::string& url, const ports::BackendUrl& u, std::string_view name);
std::string path(const std::string& url, const ports::BackendUrl& u);  // redis://HOST/NAME
std::string path_with(const std::string& url, const ports::BackendUrl& u, std::string_view name);
std::string name_param(const std::string& url, const ports::BackendUrl& u);  // sqlite-queue:PATH?name=NAME
std::string name_param_with(const std::string& url, const ports::BackendUrl& u, std::string_view name);
}  // namespace naming

// mem:NAME: the name is everything between "scheme:" and the query.
inline constexpr QueueNaming kNameAfterScheme{&naming::after_scheme, &naming::after_scheme_with};
// sqs://NAME: the name is the authority.
inline constexpr QueueNaming kNameIsHost{&naming::host, &naming::host_with};
// redis://HOST/NAME: the name is the path after the authority's slash.
inline constexpr QueueNaming kNameIsPath{&naming::path, &naming::path_with};
// sqlite-queue:PATH?name=NAME: the name is the `name` parameter, "queue" when absent.
inline constexpr QueueNaming kNameParameter{&naming::name_param, &naming::name_param_with};

}  // namespace overhead::backends
