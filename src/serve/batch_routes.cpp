#include "serve/batch_routes.hpp"

#include <charconv>

#include "serve/api_error.hpp"
#include "serve/batch_runner.hpp"
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

void upload(BatchRunner& runner, const http::Request& req, http::Response& res) {
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
    send_json(res, to_json(runner.add_file(file->filename.value_or("upload.jsonl"), purpose, file->content)));
  } catch (const std::exception& e) {
    send_error(res, {503, std::string("The file could not be stored: ") + e.what(), "server_error", "", "store_unavailable"});
  }
}

std::optional<BatchFile> find_file(BatchRunner& runner, const std::string& id, http::Response& res) {
  const auto doc = runner.state().get(ports::BatchKind::file, id);
  if (!doc) {
    send_error(res, {404, "No such file: " + id, "invalid_request_error", "file_id", "file_not_found"});
    return std::nullopt;
  }
  return file_from_document(*doc);
}

void create_batch(BatchRunner& runner, const http::Request& req, http::Response& res) {
  try {
    const Json body = parse_body(req.body);
    const Json metadata = body.contains("metadata") ? body["metadata"] : Json();
    const std::string window = body.contains("completion_window") ? required_string(body, "completion_window") : std::string("24h");
    send_json(res, to_json(runner.create(required_string(body, "input_file_id"), required_string(body, "endpoint"), window, metadata)));
  } catch (const RequestError& e) {
    send_error(res, e.error);
  }
}

void list_batches(BatchRunner& runner, const http::Request& req, http::Response& res) {
  std::size_t limit = 20;
  if (const std::string l = query_value(req.query, "limit"); !l.empty()) {
    const auto [end, ec] = std::from_chars(l.data(), l.data() + l.size(), limit);
    if (ec != std::errc() || end != l.data() + l.size() || limit < 1 || limit > 100)
      return send_error(res, {400, "limit must be a number in 1..100", "invalid_request_error", "limit", "invalid_value"});
  }
  // One more than asked: whether there are more.
  auto docs = runner.state().list(ports::BatchKind::batch, query_value(req.query, "after"), limit + 1);
  const bool more = docs.size() > limit;
  if (more) docs.pop_back();
  Json data = Json::array();
  for (const auto& d : docs) data.push_back(to_json(batch_from_document(d)));
  Json out;
  out["object"] = "list";
  out["data"] = std::move(data);
  out["first_id"] = docs.empty() ? Json() : Json(docs.front().id);
  out["last_id"] = docs.empty() ? Json() : Json(docs.back().id);
  out["has_more"] = more;
  send_json(res, out);
}

}  // namespace

void add_batch_routes(http::Routes& routes, BatchRunner& runner) {
  http::RouteOptions upload_options;
  upload_options.json_body = false;  // multipart/form-data
  upload_options.max_body_bytes = runner.limits().max_file_bytes;
  routes.post("/v1/files", [&runner](const http::Request& req, http::Response& res) { upload(runner, req, res); }, upload_options);
  routes.get("/v1/files/{id}", [&runner](const http::Request& req, http::Response& res) {
    if (const auto f = find_file(runner, req.path_params.at("id"), res)) send_json(res, to_json(*f));
  });
  routes.get("/v1/files/{id}/content", [&runner](const http::Request& req, http::Response& res) {
    const auto f = find_file(runner, req.path_params.at("id"), res);
    if (!f) return;
    try {
      res.set_content(runner.files().get(f->object_key()), "application/jsonl");
    } catch (const std::exception& e) {
      send_error(res, {503, std::string("The file's content could not be read: ") + e.what(), "server_error", "", "store_unavailable"});
    }
  });
  routes.add("DELETE", "/v1/files/{id}", [&runner](const http::Request& req, http::Response& res) {
    const std::string id = req.path_params.at("id");
    const auto f = find_file(runner, id, res);
    if (!f) return;
    (void)runner.state().remove(ports::BatchKind::file, id);
    (void)runner.files().remove(f->object_key());
    send_json(res, Json{{"id", id}, {"object", "file"}, {"deleted", true}});
  });
  routes.post("/v1/batches", [&runner](const http::Request& req, http::Response& res) { create_batch(runner, req, res); });
  routes.get("/v1/batches", [&runner](const http::Request& req, http::Response& res) { list_batches(runner, req, res); });
  routes.get("/v1/batches/{id}", [&runner](const http::Request& req, http::Response& res) {
    const std::string id = req.path_params.at("id");
    if (const auto b = runner.get(id)) return send_json(res, to_json(*b));
    send_error(res, {404, "No such batch: " + id, "invalid_request_error", "batch_id", "batch_not_found"});
  });
  http::RouteOptions no_body;
  no_body.json_body = false;  // the client may send none
  routes.post("/v1/batches/{id}/cancel", [&runner](const http::Request& req, http::Response& res) {
    const std::string id = req.path_params.at("id");
    try {
      if (const auto b = runner.cancel(id)) return send_json(res, to_json(*b));
      send_error(res, {404, "No such batch: " + id, "invalid_request_error", "batch_id", "batch_not_found"});
    } catch (const RequestError& e) {
      send_error(res, e.error);
    }
  }, no_body);
}

}  // namespace overhead::serve
