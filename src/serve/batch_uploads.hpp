// OpenAI's Uploads API (`/v1/uploads`): a batch input too large for one request (past
// --max-file-bytes, up to --max-upload-bytes) sent as parts of at most --max-part-bytes each, then
// put together, in the order the client names them, into one file that batches read like any
// other. Memory is bounded by one part on the way in and by one piece while the parts are put
// together (ObjectWriter: S3's multipart upload, a file appended), whatever the file's size.
//
// An upload and each of its parts are documents of kind `file` in the batch store, beside the
// files (ids "upload_..." and "part_...", `object` "upload" and "upload.part"); a part's bytes are
// the object uploads/UPLOAD/PART. A part is its own document so that parts sent at once never
// write one document. Completing checks that the parts are the upload's, that their bytes add up
// to the `bytes` declared at creation and, when the client sends one, the MD5 of the whole; then
// the parts are deleted. Uploads left pending past their expiry (an hour unless `expires_after`
// says otherwise, as OpenAI's) are swept with their parts.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace overhead::serve {

class BatchRunner;

struct UploadLimits {
  std::size_t max_part_bytes = std::size_t{64} << 20;     // one part (OpenAI's: 64 MB)
  std::uint64_t max_upload_bytes = std::uint64_t{8} << 30;  // a whole upload (OpenAI's: 8 GB)
  std::size_t max_parts = 10000;                           // parts named at completion
};

class BatchUploads {
 public:
  BatchUploads(BatchRunner& runner, UploadLimits limits) : runner_(runner), limits_(limits) {}

  // Each returns OpenAI's object (an Upload, or an upload part) and throws RequestError. `owner`
  // is the caller's API key name (empty: no keys): another key's upload is not found.
  nlohmann::ordered_json create(const nlohmann::ordered_json& body, const std::string& owner);
  nlohmann::ordered_json add_part(const std::string& upload_id, std::string_view data, const std::string& owner);
  nlohmann::ordered_json complete(const std::string& upload_id, const nlohmann::ordered_json& body, const std::string& owner);
  nlohmann::ordered_json cancel(const std::string& upload_id, const std::string& owner);
  [[nodiscard]] const UploadLimits& limits() const { return limits_; }

  // Deletes the parts of uploads that are no longer pending and marks expired the pending ones past
  // their time; runs from create() at most once a minute, over at most kSweepScan documents.
  void sweep();

 private:
  BatchRunner& runner_;
  const UploadLimits limits_;
  std::mutex completing_mutex_;
  std::set<std::string> completing_;  // uploads being put together here: a second complete waits its turn (409)
  std::mutex sweep_mutex_;
  std::chrono::steady_clock::time_point last_sweep_{};
};

}  // namespace overhead::serve
