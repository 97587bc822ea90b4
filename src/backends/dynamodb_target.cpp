#include "backends/dynamodb_target.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>

#include "aws/credentials.hpp"
#include "aws/json_protocol.hpp"

namespace overhead::backends {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const auto comma = s.find(',', at);
    std::string part = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (!part.empty()) out.push_back(std::move(part));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

bool valid_table_name(const std::string& name) {
  if (name.size() < 3 || name.size() > 255) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

}  // namespace

DynamoDbTarget dynamodb_target(const ports::BackendUrl& u) {
  u.check_params({"region", "endpoint", "create", "tokenizers", "timeout_ms"});
  DynamoDbTarget t;
  t.table = u.host;
  if (!u.has_authority || t.table.empty() || (!u.path.empty() && u.path != "/") || u.port != 0 || !u.user.empty())
    throw std::invalid_argument(u.describe("store", "expected dynamodb://TABLE[?region=R&endpoint=URL&create=1]"));
  if (!valid_table_name(t.table))
    throw std::invalid_argument(
        u.describe("store", "a DynamoDB table name is 3 to 255 characters of A-Z a-z 0-9 _ - ."));
  const auto region_param = u.params.count("region") ? std::optional<std::string>(u.param("region", "")) : std::nullopt;
  aws::JsonServiceEndpoint e{"dynamodb", "DynamoDB_20120810", "", "", "", ""};
  try {
    e.region = aws::resolve_region(region_param, aws::process_environment());
  } catch (const aws::CredentialError& err) {
    throw std::invalid_argument(u.describe("store", err.what()));
  }
  e.endpoint = u.param("endpoint", "https://dynamodb." + e.region + ".amazonaws.com");
  try {
    e.host = aws::endpoint_host(e.endpoint);
  } catch (const std::invalid_argument& err) {
    throw std::invalid_argument(u.describe("store", err.what()));
  }
  t.call_timeout = u.call_timeout();
  t.create = u.int_param("create", 0, 0, 1) == 1;
  t.tokenizers = split_list(u.param("tokenizers", ""));
  t.client = std::make_shared<aws::JsonProtocolClient>(std::move(e));
  t.shown = u.redacted();
  return t;
}

}  // namespace overhead::backends
