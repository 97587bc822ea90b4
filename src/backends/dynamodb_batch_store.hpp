// The Amazon DynamoDB batch store (ports/batch_store.hpp), beside the record store of the same URL
// (`dynamodb://TABLE[?region=R&endpoint=URL&create=0|1&timeout_ms=]`): a table `TABLE-batches`,
// hash key kind (S: "file" or "batch"), range key id (S), one item per document:
//   kind S, id S, created_at N, open BOOL, body S (the JSON document),
//   rank S       created_at as 20 digits whose order is the number's, then the id: the order
//                list() pages in (newest first = rank descending);
//   open_rank S  the same, present only while the batch is open.
// Two local secondary indexes on the kind, all attributes projected: `newest` (range key rank)
// and `open` (range key open_rank, sparse: it holds the open batches alone). Opening checks the
// table (DescribeTable); a missing one is a permanent error saying how to make it, or with
// create=1 it is made (PAY_PER_REQUEST) and awaited, as the records table is.
//   put           PutItem: the item replaced whole (closing a batch drops its open_rank).
//   get           a consistent GetItem.
//   remove        DeleteItem conditional on the item existing: false when it did not.
//   list          a consistent Query of `newest`, descending, below the rank of `after` (one
//                 GetItem to find it; an unknown `after` lists from the start), stopped at `limit`.
//   open_batches  a consistent Query of `open`: reads the open batches only, so the runner's
//                 poll costs what is open, not every batch ever made.
// Sizes: a document's item must fit DynamoDB's 400 KB, and an id its 1024-byte range key (less
// the rank's 20 digits); past those put() throws a permanent StoreError naming the document. With
// local indexes the items of one kind share a 10 GB item collection (about 5 million batches of
// 1 KB, each stored twice with its index copy).
// Errors: as the record store's (dynamodb_side_table.hpp): throttling, 5xx and a lost connection
// are retried by the client, then thrown transient; the others permanent, with a hint.
#pragma once

#include <memory>

#include "ports/backend_url.hpp"
#include "ports/batch_store.hpp"

namespace overhead::backends {

// The `dynamodb` arm of open_batch_store (the record store of the URL already opened). Throws
// std::invalid_argument for a bad URL and ports::StoreError when the table cannot be found,
// checked or created.
[[nodiscard]] std::unique_ptr<ports::BatchStore> open_dynamodb_batch_store(const ports::BackendUrl& url);

}  // namespace overhead::backends
