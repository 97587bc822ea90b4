// The Batch API's objects as the gateway keeps them and as OpenAI shows them: an uploaded file
// (`object: "file"`) and a batch (`object: "batch"`, its status, request_counts, errors and the
// ids of its output and error files). Kept as JSON documents in the batch store
// (ports/batch_store.hpp); `to_document`/`*_from_document` are the one mapping both ways.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ports/batch_store.hpp"

namespace overhead::serve {

struct BatchFile {
  std::string id;  // "file-<hex>"
  std::int64_t bytes = 0;
  std::int64_t created_at = 0;
  std::string filename;
  std::string purpose;  // "batch" (uploads), "batch_output" (what a batch writes)
  // The name of the API key that uploaded it (or whose batch wrote it); empty on a gateway without
  // keys. Only that key sees it. Kept in the document, not shown.
  std::string owner;
  [[nodiscard]] std::string object_key() const { return "files/" + id; }
};

// OpenAI's statuses; the first four are open (the runner still works on the batch).
enum class BatchStatus { validating, in_progress, finalizing, cancelling, completed, failed, expired, cancelled };
[[nodiscard]] std::string_view status_name(BatchStatus s);
[[nodiscard]] std::optional<BatchStatus> status_from_name(std::string_view name);
[[nodiscard]] inline bool is_open(BatchStatus s) { return s <= BatchStatus::cancelling; }

struct Batch {
  std::string id;  // "batch_<hex>": also the experiment its records are stored under
  std::string endpoint;
  std::string input_file_id;
  std::string completion_window;  // as given ("24h")
  std::int64_t window_s = 0;
  BatchStatus status = BatchStatus::validating;
  std::int64_t created_at = 0, in_progress_at = 0, finalizing_at = 0, completed_at = 0, failed_at = 0, expires_at = 0,
               expired_at = 0, cancelling_at = 0, cancelled_at = 0;
  std::string output_file_id, error_file_id;
  std::int64_t total = 0, completed = 0, failed = 0;
  // The batch's price so far: the sum of its records' cost_usd (each priced by its worker,
  // docs/cost-model.md "Every request priced"); 0 when the workers have no prices. Ours, beside
  // OpenAI's fields, as "cost_usd".
  double cost_usd = 0;
  // Lines of the input sent to the batch lane so far: a runner resumed after a restart sends
  // from there (what it sends again lands on the same record keys).
  std::int64_t enqueued = 0;
  // Where the input's line after the last one sent begins (byte offset, and the lines before it):
  // sending goes on from there instead of reading the input again from its start. 0: unknown.
  std::int64_t enqueued_offset = 0, enqueued_line = 0;
  nlohmann::ordered_json errors;    // null, or {"object":"list","data":[{code,message,param,line}]}
  nlohmann::ordered_json metadata;  // null or an object of strings
  // The API key that created it (empty on a gateway without keys): only that key sees it, its
  // items are charged to it, and its lines may name only the models the key had when the batch
  // was created (`owner_models`, empty: every model). Kept in the document, not shown.
  std::string owner;
  std::vector<std::string> owner_models;
  // The gateway driving it and when it last renewed that lease, Unix seconds (batch_runner.hpp).
  // Kept in the document, not shown.
  std::string driver;
  std::int64_t driven_at = 0;
};

// OpenAI's completion windows: "24h" (its only value today) and any "<N>h" of 1..168, in seconds;
// empty when the text is not one.
[[nodiscard]] std::optional<std::int64_t> completion_window_seconds(std::string_view window);

[[nodiscard]] nlohmann::ordered_json to_json(const BatchFile& f);
[[nodiscard]] nlohmann::ordered_json to_json(const Batch& b);
[[nodiscard]] ports::BatchDocument to_document(const BatchFile& f);
[[nodiscard]] ports::BatchDocument to_document(const Batch& b);
// The file a document of kind `file` holds; empty for an upload in progress or one of its parts,
// kept beside the files (serve/batch_uploads.hpp) and not files to read or to batch.
[[nodiscard]] std::optional<BatchFile> file_in_document(const ports::BatchDocument& d);
// Throw std::runtime_error naming the document when it is not one of ours.
[[nodiscard]] BatchFile file_from_document(const ports::BatchDocument& d);
[[nodiscard]] Batch batch_from_document(const ports::BatchDocument& d);

}  // namespace overhead::serve
