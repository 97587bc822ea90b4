// The Amazon DynamoDB key store, beside the record store of the same URL
// (`dynamodb://TABLE[?region=R&endpoint=URL&create=0|1&timeout_ms=]`): a table `TABLE-keys`,
// hash key name (S), one item per key:
//   name S, secret_hash S, rpm N, tpm N, budget_usd N (absent: none), models L of S,
//   created_unix N, expires_unix N, revoked_unix N
// Opening checks the table (DescribeTable); a missing one is a permanent error saying how to make
// it, or with create=1 it is made (PAY_PER_REQUEST) and awaited, as the records table is.
//   create        PutItem with attribute_not_exists(name): DynamoDB decides the race, so of two
//                 gateways creating one name exactly one succeeds; the other gets
//                 ConditionalCheckFailed, thrown as KeyExistsError.
//   revoke        UpdateItem conditional on the item existing with revoked_unix = 0.
//   list          a consistent Scan of the keys table, paged, sorted by name here.
//   usage         a consistent Scan of the records table filtered on key_name (and experiment),
//                 projected to the five attributes it sums, paged by LastEvaluatedKey and summed
//                 here: it reads (and is billed for) the whole records table, O(table), since the
//                 seed's table has no index on key_name. Fine for `overhead keys` and a usage
//                 call now and then; a gateway checking budgets on every request keeps its own
//                 running figures and re-reads them at intervals.
//   spend_by_key  the same Scan over every record that names a key, projected to key_name and
//                 cost_usd.
// Errors: as the record store's (dynamodb_store.hpp): throttling, 5xx and a lost connection are
// retried by the client, then thrown transient; the others permanent, with a hint.
#pragma once

#include <memory>

#include "ports/backend_url.hpp"
#include "ports/key_store.hpp"

namespace overhead::backends {

// The `dynamodb` arm of open_key_store (the record store of the URL already opened). Throws
// std::invalid_argument for a bad URL and ports::StoreError when the table cannot be found,
// checked or created.
std::unique_ptr<ports::KeyStore> open_dynamodb_key_store(const ports::BackendUrl& url);

// The key store's table for the records table `table`.
[[nodiscard]] std::string dynamodb_keys_table(const std::string& table);

}  // namespace overhead::backends
