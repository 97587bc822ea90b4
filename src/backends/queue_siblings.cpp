#include "backends/queue_siblings.hpp"

#include <stdexcept>

#include "ports/backend_url.hpp"
#include "ports/queue_name.hpp"

namespace overhead::backends {
namespace {

constexpr std::string_view kReplyInfix = "-reply-";
constexpr std::string_view kControlInfix = "-ctl-";
constexpr std::size_t kMaxNameLength = 80;

// The URL split around its queue name: prefix + name + rest == url.
struct NameSpan {
  std::size_t begin = 0, end = 0;
};

std::size_t query_start(const std::string& url, std::size_t from) {
  const auto q = url.find('?', from);
  return q == std::string::npos ? url.size() : q;
}

// Where the name is written in `url`, or an empty span at the end of the query for a
// sqlite-queue URL whose name is the default (no `name=` parameter).
NameSpan locate_name(const std::string& url, const pipe::BackendUrl& u) {
  if (u.scheme == "mem") {
    const std::size_t begin = u.scheme.size() + 1;
    return {begin, query_start(url, begin)};
  }
  if (u.scheme == "redis" || u.scheme == "sqs") {
    const std::size_t authority = url.find("://") + 3;
    const std::size_t end = query_start(url, authority);
    if (u.scheme == "sqs") return {authority, end};
    const std::size_t slash = url.find('/', authority);
    if (slash == std::string::npos || slash >= end) throw std::invalid_argument(u.describe("queue", "names no stream"));
    return {slash + 1, end};
  }
  if (u.scheme == "sqlite-queue") {
    const std::size_t q = url.find('?');
    if (q == std::string::npos) return {url.size(), url.size()};
    for (std::size_t at = q + 1; at < url.size();) {
      const std::size_t amp = url.find('&', at);
      const std::size_t end = amp == std::string::npos ? url.size() : amp;
      if (url.compare(at, 5, "name=") == 0) return {at + 5, end};
      at = end + 1;
    }
    return {url.size(), url.size()};
  }
  throw std::invalid_argument(u.describe("queue", "has no reply queues (scheme \"" + u.scheme + "\")"));
}

}  // namespace

std::string queue_name(const std::string& url) {
  const pipe::BackendUrl u = pipe::parse_backend_url(url);
  if (u.scheme == "sqlite-queue") return u.param("name", "queue");
  if (u.scheme == "redis") return u.path.starts_with('/') ? u.path.substr(1) : u.path;
  if (u.scheme == "sqs") return u.host;
  (void)locate_name(url, u);  // throws for a scheme without names
  if (u.path.empty()) throw std::invalid_argument(u.describe("queue", "names no queue (mem:NAME)"));
  return u.path;
}

std::string sibling_queue_url(const std::string& url, std::string_view name) {
  const pipe::BackendUrl u = pipe::parse_backend_url(url);
  const NameSpan span = locate_name(url, u);
  if (u.scheme == "sqlite-queue" && span.begin == span.end && span.begin == url.size()) {
    // The default name: add the parameter.
    return url + (url.find('?') == std::string::npos ? "?name=" : "&name=") + std::string(name);
  }
  return url.substr(0, span.begin) + std::string(name) + url.substr(span.end);
}

namespace {

// "<input name><infix><suffix>", the suffix cut to what SQS allows (see the header).
std::string sibling_name(const std::string& input_url, std::string_view infix, std::string_view suffix, const char* what) {
  const std::string input = queue_name(input_url);
  std::string name = input + std::string(infix);
  if (!pipe::is_plain_queue_name(input) || name.size() >= kMaxNameLength)
    throw std::invalid_argument(pipe::redact_url(input_url) + ": " + what + " needs an input queue name of at most " +
                                std::to_string(kMaxNameLength - infix.size() - 1) + " of A-Z a-z 0-9 _ -, not \"" +
                                input + "\"");
  for (const char c : suffix) {
    if (name.size() == kMaxNameLength) break;
    name += pipe::is_plain_queue_char(c) ? c : '_';
  }
  return name;
}

bool is_sibling_of(const std::string& input_url, std::string_view infix, std::string_view name) {
  if (!pipe::is_plain_queue_name(name)) return false;
  try {
    const std::string prefix = queue_name(input_url) + std::string(infix);
    return name.size() > prefix.size() && name.starts_with(prefix);
  } catch (const std::invalid_argument&) {
    return false;  // an input queue without a name (mem:) has no siblings
  }
}

}  // namespace

std::string reply_queue_name(const std::string& input_url, std::string_view suffix) {
  return sibling_name(input_url, kReplyInfix, suffix, "a reply queue");
}

bool is_reply_queue_of(const std::string& input_url, std::string_view name) { return is_sibling_of(input_url, kReplyInfix, name); }

std::string control_queue_name(const std::string& input_url, std::string_view suffix) {
  return sibling_name(input_url, kControlInfix, suffix, "a control queue");
}

bool is_control_queue_of(const std::string& input_url, std::string_view name) {
  return is_sibling_of(input_url, kControlInfix, name);
}

}  // namespace overhead::backends
