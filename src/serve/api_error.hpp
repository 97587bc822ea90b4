// OpenAI's error body, {"error":{"message","type","param","code"}}, and the HTTP status each kind
// of failure maps to, so every route answers errors in the one shape OpenAI clients parse.
#pragma once

#include <string>

namespace overhead::serve {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // the request field at fault; empty gives null
  std::string code;   // empty gives null
};

// The 500 of a request the gateway failed to answer (its answer could not be built): a fixed
// message, so writing it cannot fail as the answer did.
[[nodiscard]] ApiError answer_failed_error();

// The JSON text of the error body.
[[nodiscard]] std::string error_body(const ApiError& e);

}  // namespace overhead::serve
