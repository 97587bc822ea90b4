#include "serve/upload_routes.hpp"

#include <exception>

#include "serve/api_error.hpp"
#include "serve/batch_uploads.hpp"
#include "serve/http/routes.hpp"
#include "serve/key_admission.hpp"
#include "serve/multipart.hpp"
#include "serve/request_json.hpp"

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

// Runs one route's work: its JSON answer, its RequestError, or 503 when the stores fail.
template <typename Work>
void answer(http::Response& res, Work&& work) {
  try {
    res.set_content(work().dump(), "application/json");
  } catch (const RequestError& e) {
    res.status = e.error.status;
    res.set_content(error_body(e.error), "application/json");
  } catch (const std::exception& e) {
    const ApiError failure{503, std::string("The upload could not be stored: ") + e.what(), "server_error", "", "store_unavailable"};
    res.status = failure.status;
    res.set_content(error_body(failure), "application/json");
  }
}

std::string_view data_part(const http::Request& req) {
  std::vector<FormPart> parts;
  try {
    parts = parse_multipart(req.get_header_value("Content-Type"), req.body);
  } catch (const std::invalid_argument& e) {
    throw RequestError{{400, std::string("The part is not a multipart form: ") + e.what(), "invalid_request_error", "data", "invalid_request"}};
  }
  for (const auto& p : parts)
    if (p.name == "data") return p.content;
  throw RequestError{{400, "No part named \"data\" in the form", "invalid_request_error", "data", "missing_required_parameter"}};
}

}  // namespace

void add_upload_routes(http::Routes& routes, BatchUploads& uploads, const KeyAdmission& admission) {
  const auto owner = [&admission](const http::Request& req) { return admission.owner(req.get_header_value("Authorization")); };
  routes.post("/v1/uploads", [&uploads, owner](const http::Request& req, http::Response& res) {
    answer(res, [&] { return uploads.create(parse_body(req.body), owner(req)); });
  });
  http::RouteOptions part_options;
  part_options.json_body = false;  // multipart/form-data
  part_options.max_body_bytes = uploads.limits().max_part_bytes + (64 << 10);  // the part and its form's headers
  routes.post("/v1/uploads/{id}/parts", [&uploads, owner](const http::Request& req, http::Response& res) {
    answer(res, [&] { return uploads.add_part(req.path_params.at("id"), data_part(req), owner(req)); });
  }, part_options);
  routes.post("/v1/uploads/{id}/complete", [&uploads, owner](const http::Request& req, http::Response& res) {
    answer(res, [&] { return uploads.complete(req.path_params.at("id"), parse_body(req.body), owner(req)); });
  });
  http::RouteOptions no_body;
  no_body.json_body = false;  // the client may send none
  routes.post("/v1/uploads/{id}/cancel", [&uploads, owner](const http::Request& req, http::Response& res) {
    answer(res, [&] { return uploads.cancel(req.path_params.at("id"), owner(req)); });
  }, no_body);
}

}  // namespace overhead::serve
