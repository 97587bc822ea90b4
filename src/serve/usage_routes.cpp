#include "serve/usage_routes.hpp"

#include <exception>

#include <nlohmann/json.hpp>

#include "ports/key_store.hpp"
#include "serve/api_error.hpp"
#include "serve/http/routes.hpp"
#include "serve/key_admission.hpp"

namespace overhead::serve {

namespace {

using Json = nlohmann::ordered_json;

Json bucket_json(const ports::UsageBucket& b, const char* label_name) {
  return Json{{label_name, b.label},
              {"requests", b.requests},
              {"prompt_tokens", b.prompt_tokens},
              {"completion_tokens", b.completion_tokens},
              {"cost_usd", b.cost_usd}};
}

}  // namespace

void add_usage_routes(http::Routes& routes, ports::KeyStore& store, const KeyAdmission& admission) {
  routes.get("/v1/usage", [&store, &admission](const http::Request& req, http::Response& res) {
    const Caller caller = admission.caller(req.get_header_value("Authorization"));
    if (!caller.key) {  // authorize() let it through: an open gateway has no caller to report on
      res.status = 400;
      res.set_content(error_body({400, "Usage is reported per API key; call with a key (Authorization: Bearer <key>)",
                                  "invalid_request_error", "", "no_api_key"}),
                      "application/json");
      return;
    }
    try {
      const ports::KeyUsage u = store.usage(caller.key->name, "");
      Json by_model = Json::array(), by_day = Json::array();
      for (const auto& b : u.by_model) by_model.push_back(bucket_json(b, "model"));
      for (const auto& b : u.by_day) by_day.push_back(bucket_json(b, "day"));
      const Json out{{"object", "usage"},
                     {"key", caller.key->name},
                     {"requests", u.requests},
                     {"prompt_tokens", u.prompt_tokens},
                     {"completion_tokens", u.completion_tokens},
                     {"cost_usd", u.cost_usd},
                     {"by_model", std::move(by_model)},
                     {"by_day", std::move(by_day)}};
      res.set_content(out.dump(), "application/json");
    } catch (const std::exception&) {
      // The store's message may name its URL; the client gets what to do, the log the rest.
      res.status = 503;
      res.set_header("Retry-After", "1");
      res.set_content(error_body({503, "The record store cannot be read right now; retry later", "server_error", "", "store_unavailable"}),
                      "application/json");
    }
  });
}

}  // namespace overhead::serve
