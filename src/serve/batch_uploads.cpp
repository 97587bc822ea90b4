// BatchUploads: the Uploads API's documents and the putting together of parts (batch_uploads.hpp).
#include "serve/batch_uploads.hpp"

#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "ports/content_md5.hpp"
#include "serve/batch_runner.hpp"
#include "serve/request_json.hpp"
#include "util/random_id.hpp"

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kDefaultExpiry = 3600;         // OpenAI's: an hour after creation
constexpr std::int64_t kLongestExpiry = 30 * 86400;   // OpenAI's expires_after bound: 30 days
constexpr std::size_t kCopyPiece = std::size_t{8} << 20;  // a part is read back this much at a time
constexpr std::size_t kSweepScan = 10000;

std::int64_t unix_now() { return static_cast<std::int64_t>(std::time(nullptr)); }

RequestError bad(std::string message, std::string param, std::string code = "invalid_value") {
  return RequestError{{400, std::move(message), "invalid_request_error", std::move(param), std::move(code)}};
}

std::string part_object_key(const std::string& upload_id, const std::string& part_id) { return "uploads/" + upload_id + "/" + part_id; }

std::string string_field(const Json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::int64_t integer_field(const Json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

// A pending upload past its time is expired, whether or not a sweep has written so yet.
std::string status_of(const Json& upload) {
  const std::string status = string_field(upload, "status");
  return status == "pending" && unix_now() >= integer_field(upload, "expires_at") ? "expired" : status;
}

// OpenAI's Upload object: the stored document without what is ours (owner, mime_type, file_id).
Json shown(const Json& upload, const Json& file) {
  Json out;
  for (const char* k : {"id", "object", "bytes", "created_at", "expires_at", "filename", "purpose"}) out[k] = upload[k];
  out["status"] = status_of(upload);
  out["file"] = file;
  return out;
}

bool batch_mime_type(std::string_view t) {
  return t == "application/jsonl" || t == "application/json" || t == "application/x-ndjson" || t == "text/jsonl" || t == "text/plain" ||
         t == "application/octet-stream";
}

// The upload's stored document; 404 when there is none or it is another key's.
Json load_upload(BatchRunner& runner, const std::string& id, const std::string& owner) {
  const auto doc = runner.state().get(ports::BatchKind::file, id);
  Json j;
  if (doc) j = Json::parse(doc->body, nullptr, false);
  if (!doc || !j.is_object() || string_field(j, "object") != "upload" || string_field(j, "owner") != owner)
    throw RequestError{{404, "No such upload: " + id, "invalid_request_error", "upload_id", "upload_not_found"}};
  return j;
}

void save_upload(BatchRunner& runner, const Json& upload) {
  runner.state().put(ports::BatchKind::file, {string_field(upload, "id"), integer_field(upload, "created_at"), false, upload.dump()});
}

Json file_json(BatchRunner& runner, const std::string& file_id) {
  if (file_id.empty()) return nullptr;
  const auto doc = runner.state().get(ports::BatchKind::file, file_id);
  const auto file = doc ? file_in_document(*doc) : std::nullopt;
  return file ? to_json(*file) : Json(nullptr);
}

void remove_part(BatchRunner& runner, const std::string& upload_id, const std::string& part_id) {
  try {
    (void)runner.files().remove(part_object_key(upload_id, part_id));
    (void)runner.state().remove(ports::BatchKind::file, part_id);
  } catch (const std::exception&) {
    // Left for the next sweep: its upload is no longer pending.
  }
}

}  // namespace

Json BatchUploads::create(const Json& body, const std::string& owner) {
  const std::string filename = required_string(body, "filename");
  const std::string purpose = required_string(body, "purpose");
  const std::string mime_type = required_string(body, "mime_type");
  if (purpose != "batch")
    throw bad("purpose must be \"batch\" (the files this gateway keeps are batch inputs), not \"" + purpose + "\"", "purpose");
  if (!batch_mime_type(mime_type))
    throw bad("mime_type " + mime_type + " is not one of a batch input's: application/jsonl, application/json, application/x-ndjson, text/jsonl, text/plain",
              "mime_type");
  if (filename.empty() || filename.size() > 255) throw bad("filename must be 1 to 255 characters", "filename");
  const auto bytes = body.find("bytes");
  if (bytes == body.end() || !bytes->is_number_integer() || bytes->get<std::int64_t>() < 0 ||
      bytes->get<std::uint64_t>() > limits_.max_upload_bytes)
    throw bad("bytes must be a whole number of bytes up to this gateway's --max-upload-bytes (" + std::to_string(limits_.max_upload_bytes) + ")",
              "bytes");
  std::int64_t expiry = kDefaultExpiry;
  if (const auto after = body.find("expires_after"); after != body.end() && !after->is_null()) {
    if (!after->is_object() || string_field(*after, "anchor") != "created_at" || !after->contains("seconds") ||
        !(*after)["seconds"].is_number_integer() || (*after)["seconds"].get<std::int64_t>() < kDefaultExpiry ||
        (*after)["seconds"].get<std::int64_t>() > kLongestExpiry)
      throw bad("expires_after must be {\"anchor\": \"created_at\", \"seconds\": 3600..2592000}", "expires_after");
    expiry = (*after)["seconds"].get<std::int64_t>();
  }
  sweep();
  Json upload;
  upload["id"] = util::random_hex_id("upload_", 12);
  upload["object"] = "upload";
  upload["bytes"] = bytes->get<std::int64_t>();
  upload["created_at"] = unix_now();
  upload["expires_at"] = unix_now() + expiry;
  upload["filename"] = filename;
  upload["purpose"] = purpose;
  upload["status"] = "pending";
  upload["mime_type"] = mime_type;
  upload["owner"] = owner;
  save_upload(runner_, upload);
  return shown(upload, nullptr);
}

Json BatchUploads::add_part(const std::string& upload_id, std::string_view data, const std::string& owner) {
  const Json upload = load_upload(runner_, upload_id, owner);
  if (const std::string status = status_of(upload); status != "pending")
    throw bad("The upload " + upload_id + " is " + status + ": parts can be added only while it is pending", "upload_id");
  if (data.size() > limits_.max_part_bytes)
    throw bad("A part holds at most --max-part-bytes (" + std::to_string(limits_.max_part_bytes) + ") bytes", "data");
  if (static_cast<std::int64_t>(data.size()) > integer_field(upload, "bytes"))
    throw bad("This part alone (" + std::to_string(data.size()) + " bytes) is larger than the upload (" +
                  std::to_string(integer_field(upload, "bytes")) + " bytes)",
              "data");
  Json part;
  part["id"] = util::random_hex_id("part_", 12);
  part["object"] = "upload.part";
  part["created_at"] = unix_now();
  part["upload_id"] = upload_id;
  const std::string part_id = part["id"];
  runner_.files().put(part_object_key(upload_id, part_id), data);  // the bytes first: a document never names a missing object
  Json stored = part;
  stored["bytes"] = data.size();
  stored["owner"] = owner;
  runner_.state().put(ports::BatchKind::file, {part_id, integer_field(part, "created_at"), false, stored.dump()});
  return part;
}

Json BatchUploads::complete(const std::string& upload_id, const Json& body, const std::string& owner) {
  Json upload = load_upload(runner_, upload_id, owner);
  const std::string status = status_of(upload);
  if (status == "completed") return shown(upload, file_json(runner_, string_field(upload, "file_id")));  // asked again: the same answer
  if (status != "pending") throw bad("The upload " + upload_id + " is " + status + " and cannot be completed", "upload_id");
  const auto ids = body.find("part_ids");
  if (ids == body.end() || !ids->is_array() || ids->empty() || ids->size() > limits_.max_parts)
    throw bad("part_ids must list the upload's parts in order, 1 to " + std::to_string(limits_.max_parts) + " of them", "part_ids");
  std::string md5;
  if (const auto m = body.find("md5"); m != body.end() && !m->is_null()) {
    if (!m->is_string()) throw bad("md5 must be the file's MD5 in hex", "md5");
    md5 = m->get<std::string>();
    std::transform(md5.begin(), md5.end(), md5.begin(), [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  }
  std::vector<std::pair<std::string, std::int64_t>> parts;  // id, bytes
  std::set<std::string> seen;
  std::int64_t total = 0;
  for (const auto& id : *ids) {
    if (!id.is_string()) throw bad("part_ids must be strings", "part_ids");
    const std::string part_id = id.get<std::string>();
    if (!seen.insert(part_id).second) throw bad("The part " + part_id + " is named twice", "part_ids");
    const auto doc = runner_.state().get(ports::BatchKind::file, part_id);
    Json j;
    if (doc) j = Json::parse(doc->body, nullptr, false);
    if (!doc || !j.is_object() || string_field(j, "object") != "upload.part" || string_field(j, "upload_id") != upload_id)
      throw bad("No part " + part_id + " of the upload " + upload_id, "part_ids");
    parts.emplace_back(part_id, integer_field(j, "bytes"));
    total += parts.back().second;
  }
  if (total != integer_field(upload, "bytes"))
    throw bad("The parts hold " + std::to_string(total) + " bytes; the upload was created for " + std::to_string(integer_field(upload, "bytes")),
              "part_ids");
  {
    std::lock_guard lock(completing_mutex_);
    if (!completing_.insert(upload_id).second)
      throw RequestError{{409, "The upload " + upload_id + " is being completed by another request", "invalid_request_error", "upload_id",
                          "conflict"}};
  }
  struct Release {
    BatchUploads& self;
    const std::string& id;
    ~Release() {
      std::lock_guard lock(self.completing_mutex_);
      self.completing_.erase(id);
    }
  } release{*this, upload_id};
  // Read again under the guard: a request that checked the upload while another completed it
  // answers with that one's file instead of making a second.
  upload = load_upload(runner_, upload_id, owner);
  const std::string now = status_of(upload);
  if (now == "completed") return shown(upload, file_json(runner_, string_field(upload, "file_id")));
  if (now != "pending") throw bad("The upload " + upload_id + " is " + now + " and cannot be completed", "upload_id");
  const BatchFile file = runner_.add_file(string_field(upload, "filename"), string_field(upload, "purpose"), owner, [&](ports::ObjectWriter& out) {
    ports::ContentMd5 digest;
    std::int64_t written = 0;
    for (const auto& [part_id, bytes] : parts) {
      std::int64_t read = 0;
      for (;;) {
        const std::string piece = runner_.files().get_range(part_object_key(upload_id, part_id), static_cast<std::uint64_t>(read), kCopyPiece);
        if (piece.empty()) break;
        out.append(piece);
        digest.update(piece);
        read += static_cast<std::int64_t>(piece.size());
      }
      if (read != bytes)
        throw RequestError{{503, "The part " + part_id + " holds " + std::to_string(read) + " bytes in the store, not " + std::to_string(bytes),
                            "server_error", "part_ids", "store_unavailable"}};
      written += read;
    }
    if (const std::string got = digest.hex(); !md5.empty() && got != md5)  // thrown before finish: the file is not made
      throw bad("The parts' MD5 is " + got + ", not the md5 sent (" + md5 + ")", "md5");
    return written;
  });
  upload["status"] = "completed";
  upload["file_id"] = file.id;
  save_upload(runner_, upload);
  for (const auto& [part_id, bytes] : parts) remove_part(runner_, upload_id, part_id);
  return shown(upload, to_json(file));
}

Json BatchUploads::cancel(const std::string& upload_id, const std::string& owner) {
  Json upload = load_upload(runner_, upload_id, owner);
  if (const std::string status = status_of(upload); status != "pending")
    throw bad("The upload " + upload_id + " is " + status + " and cannot be cancelled", "upload_id");
  upload["status"] = "cancelled";
  save_upload(runner_, upload);
  {
    std::lock_guard lock(sweep_mutex_);
    last_sweep_ = {};  // its parts go at the next sweep
  }
  sweep();
  return shown(upload, nullptr);
}

void BatchUploads::sweep() {
  {
    std::lock_guard lock(sweep_mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (last_sweep_ != std::chrono::steady_clock::time_point{} && now - last_sweep_ < std::chrono::minutes(1)) return;
    last_sweep_ = now;
  }
  try {
    std::map<std::string, std::string> status;  // upload id -> status, of those scanned
    std::vector<std::pair<std::string, std::string>> parts;  // upload id, part id
    std::string after;
    for (std::size_t scanned = 0; scanned < kSweepScan;) {
      const auto docs = runner_.state().list(ports::BatchKind::file, after, 100);
      for (const auto& d : docs) {
        after = d.id;
        Json j = Json::parse(d.body, nullptr, false);
        if (!j.is_object()) continue;
        const std::string object = string_field(j, "object");
        if (object == "upload") {
          std::string s = status_of(j);
          if (s == "expired" && string_field(j, "status") == "pending") {
            j["status"] = "expired";
            save_upload(runner_, j);
          }
          status[d.id] = std::move(s);
        } else if (object == "upload.part") {
          parts.emplace_back(string_field(j, "upload_id"), d.id);
        }
      }
      scanned += docs.size();
      if (docs.size() < 100) break;
    }
    // Parts are newer than their upload, so a part's upload was seen unless the scan stopped first.
    for (const auto& [upload_id, part_id] : parts)
      if (const auto s = status.find(upload_id); s != status.end() && s->second != "pending") remove_part(runner_, upload_id, part_id);
  } catch (const std::exception&) {
    // The store is away: the next sweep goes on.
  }
}

}  // namespace overhead::serve
