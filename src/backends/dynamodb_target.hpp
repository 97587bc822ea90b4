// A dynamodb:// URL read once for the stores that live in its table family: the record store
// (dynamodb_store.hpp) and the key store beside it (dynamodb_key_store.hpp).
//   dynamodb://TABLE[?region=R&endpoint=URL&create=0|1&tokenizers=A,B&timeout_ms=]
// The client is signed with the standard credential chain for the region (the parameter, else
// AWS_REGION / the profile's), at the endpoint (the parameter, else the region's AWS endpoint).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ports/backend_url.hpp"

namespace overhead::aws {
class JsonProtocolClient;
}

namespace overhead::backends {

struct DynamoDbTarget {
  std::shared_ptr<aws::JsonProtocolClient> client;
  std::string table;                    // the records table
  std::vector<std::string> tokenizers;  // partitions a scan of one experiment queries
  std::chrono::milliseconds call_timeout{ports::kDefaultCallTimeout};
  bool create = false;                  // create=1: make a missing table
  std::string shown;                    // the redacted URL, for messages
};

// Throws std::invalid_argument for a malformed URL, a bad table name, an unknown parameter or
// one out of range, or a region that cannot be resolved. Makes no call.
[[nodiscard]] DynamoDbTarget dynamodb_target(const ports::BackendUrl& url);

}  // namespace overhead::backends
