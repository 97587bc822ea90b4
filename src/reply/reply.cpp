#include "reply/reply.hpp"

#include <utility>

namespace overhead::reply {

Reply Reply::answered(ports::Record record, std::string text, std::string finish_reason, std::string attempt) {
  Reply r;
  r.id = record.id;
  r.status = Status::done;
  r.attempt = std::move(attempt);
  r.record = std::move(record);
  r.text_bytes = static_cast<std::int64_t>(text.size());
  r.text = std::move(text);
  r.finish_reason = std::move(finish_reason);
  return r;
}

Reply Reply::refused(std::string id, std::string kind, std::string reason) {
  Reply r;
  r.id = std::move(id);
  r.status = Status::failed;
  r.error_kind = std::move(kind);
  r.error_reason = std::move(reason);
  return r;
}

}  // namespace overhead::reply
