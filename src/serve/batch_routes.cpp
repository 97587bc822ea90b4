#include "serve/batch_routes.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "serve/api_error.hpp"
#include "serve/batch_runner.hpp"
#include "serve/key_admission.hpp"
#include "serve/http/exchange.hpp"
#include "serve/http/routes.hpp"
#include "serve/multipart.hpp"
#include "serve/request_json.hpp"

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

void send_json(http::Response& res, const Json& j) { res.set_content(j.dump(), "application/json"); }
void send_error(http::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(error_body(e), "application/json");
}

// The value of `key` in a query string (undecoded: ids and numbers need no decoding); empty when absent.
std::string query_value(const std::string& query, std::string_view key) {
  std::size_t at = 0;
  while (at <= query.size()) {
    const std::size_t end = std::min(query.find('&', at), query.size());
    const std::string_view pair(query.data() + at, end - at);
    if (pair.starts_with(key) && pair.size() > key.size() && pair[key.size()] == '=') return std::string(pair.substr(key.size() + 1));
    at = end + 1;
  }
  return {};
}

std::string owner_of(const KeyAdmission& admission, const http::Request& req) { return admission.owner(req.get_header_value("Authorization")); }

void upload(BatchRunner& runner, const KeyAdmission& admission, const http::Request& req, http::Response& res) {
  std::vector<FormPart> parts;
  try {
    parts = parse_multipart(req.get_header_value("Content-Type"), req.body);
  } catch (const std::invalid_argument& e) {
    return send_error(res, {400, std::string("The upload is not a multipart form: ") + e.what(), "invalid_request_error", "file", "invalid_request"});
  }
  const FormPart* file = nullptr;
  std::string purpose;
  for (const auto& p : parts) {
    if (p.name == "file") file = &p;
    if (p.name == "purpose") purpose = std::string(p.content);
  }
  if (purpose != "batch")
    return send_error(res, {400, "purpose must be \"batch\" (the files this gateway keeps are batch inputs), not \"" + purpose + "\"",
                            "invalid_request_error", "purpose", "invalid_value"});
  if (!file) return send_error(res, {400, "No part named \"file\" in the form", "invalid_request_error", "file", "missing_required_parameter"});
  try {
    send_json(res, to_json(runner.add_file(file->filename.value_or("upload.jsonl"), purpose, file->content, owner_of(admission, req))));
  } catch (const std::exception& e) {
    send_error(res, {503, std::string("The file could not be stored: ") + e.what(), "server_error", "", "store_unavailable"});
  }
}

// Another key's file or batch is answered as one that does not exist: its existence is not told.
std::optional<BatchFile> find_file(BatchRunner& runner, const std::string& owner, const std::string& id, http::Response& res) {
  const auto doc = runner.state().get(ports::BatchKind::file, id);
  const auto f = doc ? file_in_document(*doc) : std::nullopt;
  if (!f || f->owner != owner) {
    send_error(res, {404, "No such file: " + id, "invalid_request_error", "file_id", "file_not_found"});
    return std::nullopt;
  }
  return f;
}

// A file's bytes, streamed a piece at a time (a batch's input or output can be gigabytes): the
// handler waits while the connection's write queue is full, so memory is a few pieces. A store
// that fails before the first piece is a 503; after it, the answer is cut (the client sees an
// incomplete body, not a complete wrong one).
void send_content(ports::ObjectStore& files, const std::string& key, http::Response& res) {
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  std::string piece;
  try {
    piece = files.get_range(key, 0, kPiece);
  } catch (const std::exception& e) {
    return send_error(res, {503, std::string("The file's content could not be read: ") + e.what(), "server_error", "", "store_unavailable"});
  }
  if (piece.size() < kPiece) return res.set_content(std::move(piece), "application/jsonl");  // a small file: one answer
  struct Writable {
    std::mutex mutex;
    std::condition_variable cv;
    bool ready = false;
  };
  const auto writable = std::make_shared<Writable>();
  const auto wake = [writable] {
    {
      std::lock_guard lock(writable->mutex);
      writable->ready = true;
    }
    writable->cv.notify_all();
  };
  const auto out = res.stream("application/jsonl");
  if (!out) return;
  out->on_writable(wake);
  out->on_cancel(wake);
  std::uint64_t at = 0;
  try {
    while (!piece.empty()) {
      const std::size_t size = piece.size();
      const http::PushResult pushed = out->push(std::move(piece));
      if (pushed == http::PushResult::closed) return;  // the client has gone
      if (pushed == http::PushResult::full) {
        std::unique_lock lock(writable->mutex);
        writable->cv.wait_for(lock, std::chrono::seconds(1), [&] { return writable->ready; });
        writable->ready = false;
        continue;  // `piece` was left as it was: pushed again
      }
      at += size;
      piece = files.get_range(key, at, kPiece);
    }
    out->close();
  } catch (const std::exception&) {
    out->abort();
  }
}

std::optional<Batch> find_batch(BatchRunner& runner, const std::string& owner, const std::string& id, http::Response& res) {
  auto b = runner.get(id);
  if (!b || b->owner != owner) {
    send_error(res, {404, "No such batch: " + id, "invalid_request_error", "batch_id", "batch_not_found"});
    return std::nullopt;
  }
  return b;
}

// A batch is created under its key's budget (refused once it is spent, as a request is) and model
// list (each line is checked against it when the batch is validated).
void create_batch(BatchRunner& runner, KeyAdmission& admission, const http::Request& req, http::Response& res) {
  try {
    const Caller caller = admission.caller(req.get_header_value("Authorization"));
    std::string owner;
    std::vector<std::string> models;
    if (caller.key) {
      if (auto refusal = admission.check_budget(*caller.key, res)) return send_error(res, *refusal);
      owner = caller.key->name;
      models = caller.key->models;
    }
    const Json body = parse_body(req.body);
    const Json metadata = body.contains("metadata") ? body["metadata"] : Json();
    const std::string window = body.contains("completion_window") ? required_string(body, "completion_window") : std::string("24h");
    send_json(res, to_json(runner.create(required_string(body, "input_file_id"), required_string(body, "endpoint"), window, metadata, owner,
                                         models)));
  } catch (const RequestError& e) {
    send_error(res, e.error);
  }
}

// The store pages every key's batches together, so a key's page is gathered from as many of the
// store's pages as it takes, up to kListScan documents a call: past that the page ends early with
// has_more, and the client's next `after` goes on from where the scan stopped.
constexpr std::size_t kListScan = 10000;

void list_batches(BatchRunner& runner, const std::string& owner, const http::Request& req, http::Response& res) {
  std::size_t limit = 20;
  if (const std::string l = query_value(req.query, "limit"); !l.empty()) {
    const auto [end, ec] = std::from_chars(l.data(), l.data() + l.size(), limit);
    if (ec != std::errc() || end != l.data() + l.size() || limit < 1 || limit > 100)
      return send_error(res, {400, "limit must be a number in 1..100", "invalid_request_error", "limit", "invalid_value"});
  }
  std::vector<Batch> page;
  std::string after = query_value(req.query, "after");
  std::size_t scanned = 0;
  bool more = false;
  for (;;) {
    const std::size_t want = std::min<std::size_t>(100, kListScan - scanned);
    const auto docs = runner.state().list(ports::BatchKind::batch, after, want);
    for (const auto& d : docs) {
      ++scanned;
      after = d.id;
      Batch b = batch_from_document(d);
      if (b.owner != owner) continue;
      if (page.size() == limit) {  // one more than asked: there are more
        more = true;
        break;
      }
      page.push_back(std::move(b));
    }
    if (more || docs.size() < want) break;
    if (scanned >= kListScan) {  // the scan's bound: the client goes on from the last one seen
      more = true;
      break;
    }
  }
  Json data = Json::array();
  for (const auto& b : page) data.push_back(to_json(b));
  Json out;
  out["object"] = "list";
  out["data"] = std::move(data);
  out["first_id"] = page.empty() ? Json() : Json(page.front().id);
  out["last_id"] = page.empty() ? Json() : Json(page.back().id);
  out["has_more"] = more;
  send_json(res, out);
}

}  // namespace

void add_batch_routes(http::Routes& routes, BatchRunner& runner, KeyAdmission& admission) {
  http::RouteOptions upload_options;
  upload_options.json_body = false;  // multipart/form-data
  upload_options.max_body_bytes = runner.limits().max_file_bytes;
  routes.post("/v1/files", [&runner, &admission](const http::Request& req, http::Response& res) { upload(runner, admission, req, res); },
              upload_options);
  routes.get("/v1/files/{id}", [&runner, &admission](const http::Request& req, http::Response& res) {
    if (const auto f = find_file(runner, owner_of(admission, req), req.path_params.at("id"), res)) send_json(res, to_json(*f));
  });
  routes.get("/v1/files/{id}/content", [&runner, &admission](const http::Request& req, http::Response& res) {
    const auto f = find_file(runner, owner_of(admission, req), req.path_params.at("id"), res);
    if (f) send_content(runner.files(), f->object_key(), res);
  });
  routes.add("DELETE", "/v1/files/{id}", [&runner, &admission](const http::Request& req, http::Response& res) {
    const std::string id = req.path_params.at("id");
    const auto f = find_file(runner, owner_of(admission, req), id, res);
    if (!f) return;
    (void)runner.state().remove(ports::BatchKind::file, id);
    (void)runner.files().remove(f->object_key());
    send_json(res, Json{{"id", id}, {"object", "file"}, {"deleted", true}});
  });
  routes.post("/v1/batches", [&runner, &admission](const http::Request& req, http::Response& res) { create_batch(runner, admission, req, res); });
  routes.get("/v1/batches", [&runner, &admission](const http::Request& req, http::Response& res) {
    list_batches(runner, owner_of(admission, req), req, res);
  });
  routes.get("/v1/batches/{id}", [&runner, &admission](const http::Request& req, http::Response& res) {
    if (const auto b = find_batch(runner, owner_of(admission, req), req.path_params.at("id"), res)) send_json(res, to_json(*b));
  });
  http::RouteOptions no_body;
  no_body.json_body = false;  // the client may send none
  routes.post("/v1/batches/{id}/cancel", [&runner, &admission](const http::Request& req, http::Response& res) {
    const std::string id = req.path_params.at("id");
    if (!find_batch(runner, owner_of(admission, req), id, res)) return;
    try {
      if (const auto b = runner.cancel(id)) return send_json(res, to_json(*b));
      send_error(res, {404, "No such batch: " + id, "invalid_request_error", "batch_id", "batch_not_found"});
    } catch (const RequestError& e) {
      send_error(res, e.error);
    }
  }, no_body);
}

}  // namespace overhead::serve
