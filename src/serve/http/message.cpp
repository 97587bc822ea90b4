#include "serve/http/message.hpp"

#include <stdexcept>

#include "serve/http/exchange.hpp"

namespace overhead::serve::http {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

void Headers::set(std::string name, std::string value) {
  std::erase_if(fields_, [&](const auto& f) { return iequals(f.first, name); });
  add(std::move(name), std::move(value));
}

const std::string* Headers::find(std::string_view name) const {
  for (const auto& [n, v] : fields_)
    if (iequals(n, name)) return &v;
  return nullptr;
}

std::string Request::get_header_value(std::string_view name) const {
  const std::string* v = headers.find(name);
  return v ? *v : std::string();
}

std::string Response::get_header_value(std::string_view name) const {
  const std::string* v = headers.find(name);
  return v ? *v : std::string();
}

void Response::set_content(std::string content, std::string content_type) {
  body = std::move(content);
  headers.set("Content-Type", std::move(content_type));
}

std::shared_ptr<Responder> Response::defer() {
  // Only a response the connection handed to a handler has an exchange to answer through.
  if (!exchange_) throw std::logic_error("Response::defer: this response belongs to no connection");
  deferred_ = true;
  return std::make_shared<Responder>(exchange_);
}

std::shared_ptr<ResponseStream> Response::stream(std::string content_type) {
  Response head;
  head.status = status;
  head.headers = headers;
  head.headers.set("Content-Type", std::move(content_type));
  return defer()->stream(std::move(head));
}

}  // namespace overhead::serve::http
