// The Amazon DynamoDB record store (`dynamodb://TABLE[?region=R&endpoint=URL&create=0|1&tokenizers=A,B
// &timeout_ms=]`), over the DynamoDB JSON 1.0 protocol (`DynamoDB_20120810.*`), SigV4-signed with
// the standard credential chain, on the pooled HTTP client. The table is the seed's: hash key
// experiment_tokenizer (S), range key id (S), one attribute per record field (backends/dynamodb_item.hpp).
//   upsert        one PutItem, conditional on not erasing a stored stamp (the replay rule); when the
//                 condition fails, the record goes in by UpdateItem instead (below).
//   upsert_batch  repeated keys merged as if upserted in order; then, per chunk of 25, one
//                 consistent BatchGetItem of the keys (projection: the key) and
//                 - the keys not stored yet: one BatchWriteItem (PutRequest), UnprocessedItems
//                   sent again under capped backoff with jitter, and the ones still left reported
//                   as retryable failures;
//                 - the keys already stored (a replay): UpdateItem each, setting every field but
//                   writing a stamp the record carries as 0 as `if_not_exists(stamp, 0)`, so a stamp
//                   patched in survives and a new value replaces it.
//                 A record over DynamoDB's 400 KB item limit fails alone and is never sent; when
//                 DynamoDB refuses a chunk as invalid, its records are written one by one so only the
//                 invalid ones fail (permanently).
//                 The one window left: a key absent at the read, then created by another writer
//                 and patched, all within our read-to-write round trip, is overwritten by our put.
//   update_stamps one UpdateItem per patch, conditional on the item existing (a patch before its
//                 record is "not found", as the port says).
//   scan          with `tokenizers=`, a Query per partition EXPERIMENT#TOKENIZER (reads only those);
//                 otherwise, or for all experiments, a Scan (filtered by `experiment` when one is
//                 given). Both consistent and paginated by LastEvaluatedKey.
// The table: opening checks it (DescribeTable) has the seed's keys. A missing table is a permanent
// error naming it and how to create it; with create=1 it is created (PAY_PER_REQUEST, the seed's
// keys) and awaited until ACTIVE.
// Errors: throttling, 5xx and a lost connection are retried with backoff and jitter, then thrown
// transient; ResourceNotFound, AccessDenied, a bad signature and ValidationException are
// permanent with a hint. No error text holds a secret.
#pragma once

#include <memory>

#include "ports/backend_url.hpp"
#include "ports/store.hpp"

namespace overhead::backends {

// The `dynamodb` arm of open_store. Throws std::invalid_argument for a bad URL or parameter and
// ports::StoreError when the table cannot be found, checked or created.
std::unique_ptr<ports::Store> open_dynamodb_store(const ports::BackendUrl& url);
// Its read-only form (a reader's: `analyze`): the table must exist; create=1 is refused, since a
// reader never creates one. DescribeTable and Query only.
std::unique_ptr<ports::Store> open_dynamodb_store_read_only(const ports::BackendUrl& url);

}  // namespace overhead::backends
