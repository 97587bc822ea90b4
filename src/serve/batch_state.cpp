#include "serve/batch_state.hpp"

#include <array>
#include <stdexcept>

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 8> kStatusNames = {"validating", "in_progress", "finalizing", "cancelling",
                                                          "completed",  "failed",      "expired",    "cancelled"};

// OpenAI shows a stamp not yet reached as null.
Json stamp(std::int64_t t) { return t > 0 ? Json(t) : Json(nullptr); }
Json id_or_null(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }
std::int64_t stamp_of(const Json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}
std::string text_of(const Json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

BatchFile file_of(const Json& j, const std::string& id) {
  BatchFile f;
  f.id = id;
  f.bytes = stamp_of(j, "bytes");
  f.created_at = stamp_of(j, "created_at");
  f.filename = text_of(j, "filename");
  f.purpose = text_of(j, "purpose");
  f.owner = text_of(j, "owner");
  return f;
}

}  // namespace

std::string_view status_name(BatchStatus s) { return kStatusNames[static_cast<std::size_t>(s)]; }

std::optional<BatchStatus> status_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kStatusNames.size(); ++i)
    if (kStatusNames[i] == name) return static_cast<BatchStatus>(i);
  return std::nullopt;
}

std::optional<std::int64_t> completion_window_seconds(std::string_view window) {
  if (window.size() < 2 || window.size() > 4 || window.back() != 'h') return std::nullopt;
  std::int64_t hours = 0;
  for (const char c : window.substr(0, window.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    hours = hours * 10 + (c - '0');
  }
  if (hours < 1 || hours > 168) return std::nullopt;
  return hours * 3600;
}

Json to_json(const BatchFile& f) {
  Json j;
  j["id"] = f.id;
  j["object"] = "file";
  j["bytes"] = f.bytes;
  j["created_at"] = f.created_at;
  j["filename"] = f.filename;
  j["purpose"] = f.purpose;
  j["status"] = "processed";
  j["status_details"] = nullptr;
  return j;
}

Json to_json(const Batch& b) {
  Json j;
  j["id"] = b.id;
  j["object"] = "batch";
  j["endpoint"] = b.endpoint;
  j["errors"] = b.errors;
  j["input_file_id"] = b.input_file_id;
  j["completion_window"] = b.completion_window;
  j["status"] = std::string(status_name(b.status));
  j["output_file_id"] = id_or_null(b.output_file_id);
  j["error_file_id"] = id_or_null(b.error_file_id);
  j["created_at"] = b.created_at;
  j["in_progress_at"] = stamp(b.in_progress_at);
  j["expires_at"] = stamp(b.expires_at);
  j["finalizing_at"] = stamp(b.finalizing_at);
  j["completed_at"] = stamp(b.completed_at);
  j["failed_at"] = stamp(b.failed_at);
  j["expired_at"] = stamp(b.expired_at);
  j["cancelling_at"] = stamp(b.cancelling_at);
  j["cancelled_at"] = stamp(b.cancelled_at);
  j["request_counts"] = Json{{"total", b.total}, {"completed", b.completed}, {"failed", b.failed}};
  j["metadata"] = b.metadata;
  j["cost_usd"] = b.cost_usd;  // ours: the sum of its records' prices
  return j;
}

ports::BatchDocument to_document(const BatchFile& f) {
  Json j = to_json(f);
  if (!f.owner.empty()) j["owner"] = f.owner;  // ours, beside OpenAI's fields
  return {f.id, f.created_at, false, j.dump()};
}

ports::BatchDocument to_document(const Batch& b) {
  Json j = to_json(b);
  j["window_s"] = b.window_s;  // ours, beside OpenAI's fields
  j["enqueued"] = b.enqueued;
  j["enqueued_offset"] = b.enqueued_offset;
  j["enqueued_line"] = b.enqueued_line;
  if (!b.owner.empty()) {
    j["owner"] = b.owner;
    j["owner_models"] = b.owner_models;
  }
  if (!b.driver.empty()) {
    j["driver"] = b.driver;
    j["driven_at"] = b.driven_at;
  }
  return {b.id, b.created_at, is_open(b.status), j.dump()};
}

std::optional<BatchFile> file_in_document(const ports::BatchDocument& d) {
  const Json j = Json::parse(d.body, nullptr, false);
  if (!j.is_object() || text_of(j, "object") != "file") return std::nullopt;
  return file_of(j, d.id);
}

BatchFile file_from_document(const ports::BatchDocument& d) {
  const Json j = Json::parse(d.body, nullptr, false);
  if (!j.is_object()) throw std::runtime_error("file " + d.id + ": its stored document is not JSON");
  return file_of(j, d.id);
}

Batch batch_from_document(const ports::BatchDocument& d) {
  const Json j = Json::parse(d.body, nullptr, false);
  if (!j.is_object()) throw std::runtime_error("batch " + d.id + ": its stored document is not JSON");
  Batch b;
  b.id = d.id;
  b.endpoint = text_of(j, "endpoint");
  b.input_file_id = text_of(j, "input_file_id");
  b.completion_window = text_of(j, "completion_window");
  b.window_s = stamp_of(j, "window_s");
  const auto status = status_from_name(text_of(j, "status"));
  if (!status) throw std::runtime_error("batch " + d.id + ": unknown status in its stored document");
  b.status = *status;
  b.created_at = stamp_of(j, "created_at");
  b.in_progress_at = stamp_of(j, "in_progress_at");
  b.finalizing_at = stamp_of(j, "finalizing_at");
  b.completed_at = stamp_of(j, "completed_at");
  b.failed_at = stamp_of(j, "failed_at");
  b.expires_at = stamp_of(j, "expires_at");
  b.expired_at = stamp_of(j, "expired_at");
  b.cancelling_at = stamp_of(j, "cancelling_at");
  b.cancelled_at = stamp_of(j, "cancelled_at");
  b.output_file_id = text_of(j, "output_file_id");
  b.error_file_id = text_of(j, "error_file_id");
  if (const auto it = j.find("request_counts"); it != j.end() && it->is_object()) {
    b.total = stamp_of(*it, "total");
    b.completed = stamp_of(*it, "completed");
    b.failed = stamp_of(*it, "failed");
  }
  b.enqueued = stamp_of(j, "enqueued");
  b.enqueued_offset = stamp_of(j, "enqueued_offset");
  b.enqueued_line = stamp_of(j, "enqueued_line");
  if (const auto it = j.find("cost_usd"); it != j.end() && it->is_number()) b.cost_usd = it->get<double>();
  b.errors = j.value("errors", Json());
  b.metadata = j.value("metadata", Json());
  b.owner = text_of(j, "owner");
  b.driver = text_of(j, "driver");
  b.driven_at = stamp_of(j, "driven_at");
  if (const auto it = j.find("owner_models"); it != j.end() && it->is_array())
    for (const auto& m : *it)
      if (m.is_string()) b.owner_models.push_back(m.get<std::string>());
  return b;
}

}  // namespace overhead::serve
