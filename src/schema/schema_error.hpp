// The one error type of the schema module: a request's schema, tool list or response_format that
// cannot be used, with the place that is wrong. Its what() is written for a client and names the
// field first (`response_format.json_schema.schema/properties/a/$ref: remote references are not
// supported`), so the gateway can return it as a 400 as it is.
#pragma once

#include <stdexcept>
#include <string>

namespace overhead::schema {

class SchemaError : public std::invalid_argument {
 public:
  // `where`: the field (`tools[3].function.parameters`) followed by the JSON pointer inside it
  // (`/properties/a`); `reason`: what is wrong there.
  SchemaError(std::string where, std::string reason)
      : std::invalid_argument((where.empty() ? std::string("schema") : where) + ": " + reason),
        where_(std::move(where)),
        reason_(std::move(reason)) {}

  const std::string& where() const noexcept { return where_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string where_;
  std::string reason_;
};

}  // namespace overhead::schema
