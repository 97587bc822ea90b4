// The HTTP request and response a route handler sees. The member names follow cpp-httplib's
// (req.body, req.path, get_header_value, res.status, res.set_content, res.set_header), which the
// routes were first written against; the wire side is the
// connection's business (connection.hpp). Besides a full answer, a handler can defer its answer or
// stream it (exchange.hpp).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace overhead::serve::http {

class Responder;
class ResponseStream;
namespace detail {
class Exchange;
struct ResponseAccess;
}  // namespace detail

// Header fields in arrival order; names compare without regard to case (RFC 9110 5.1).
class Headers {
 public:
  void add(std::string name, std::string value) { fields_.emplace_back(std::move(name), std::move(value)); }
  // Replaces every field called `name` with one.
  void set(std::string name, std::string value);
  [[nodiscard]] bool has(std::string_view name) const { return find(name) != nullptr; }
  // The first field called `name`, or null.
  [[nodiscard]] const std::string* find(std::string_view name) const;
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

[[nodiscard]] bool iequals(std::string_view a, std::string_view b);

struct Request {
  std::string method;  // as sent: "GET", "POST", ...
  std::string target;  // as sent: path and query
  std::string path;    // the target up to '?'
  std::string query;   // after '?', undecoded
  int version = 11;    // 10 or 11
  Headers headers;
  std::string body;
  // The {name} parts of the route's pattern (routes.hpp), by name.
  std::map<std::string, std::string, std::less<>> path_params;

  [[nodiscard]] bool has_header(std::string_view name) const { return headers.has(name); }
  [[nodiscard]] std::string get_header_value(std::string_view name) const;
};

class Response {
 public:
  int status = 200;
  std::string body;
  Headers headers;

  // Adds a field (a second Set-Cookie-style field is kept, as httplib does).
  void set_header(std::string name, std::string value) { headers.add(std::move(name), std::move(value)); }
  [[nodiscard]] bool has_header(std::string_view name) const { return headers.has(name); }
  [[nodiscard]] std::string get_header_value(std::string_view name) const;
  void set_content(std::string content, std::string content_type);

  // The answer comes later, from any thread, through the returned handle (exactly once; a handle
  // dropped without answering answers 500). This response object is then ignored.
  [[nodiscard]] std::shared_ptr<Responder> defer();
  // Starts a chunked answer with this response's status and headers as they are now (and
  // `content_type`); the body is what is pushed to the returned stream, from any thread.
  [[nodiscard]] std::shared_ptr<ResponseStream> stream(std::string content_type);

 private:
  friend struct detail::ResponseAccess;
  std::shared_ptr<detail::Exchange> exchange_;  // set by the connection before the handler runs
  bool deferred_ = false;
};

}  // namespace overhead::serve::http
