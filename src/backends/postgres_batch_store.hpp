// The PostgreSQL batch store (ports/batch_store.hpp), in the database, schema and table family of
// the record store of the same URL (`postgres://USER[:PASS]@HOST:PORT/DB[?table=records&schema=S&timeout_ms=]`):
// two tables beside the records table, `<table>_batch_files` and `<table>_batches`
// (records_batch_files, records_batches by default), one row per document:
//   (id TEXT COLLATE "C" PRIMARY KEY, created_at BIGINT, open BOOLEAN, body TEXT)
// created if missing under an advisory lock (postgres_side_table.hpp), each with an index on
// (created_at, id) for paging and, for batches, a partial index on the open ones.
//   put           INSERT ... ON CONFLICT (id) DO UPDATE: one statement, the document replaced whole.
//   list          one statement: newest first (created_at, then id in byte order, both descending),
//                 after the row of `after` by a row comparison on the index, from the start when
//                 no row has that id; at most `limit` rows are read.
//   open_batches  the partial index: reads only the batches not yet final.
// One connection behind a mutex, reconnected after a failure; errors are StoreError, transient or
// permanent, as the record store's (backends/postgres_connection.hpp). The table= parameter may be
// at most 63 - 19 bytes long, so that `<table>_batch_files_newest` is not cut by PostgreSQL.
#pragma once

#include <memory>

#include "ports/backend_url.hpp"
#include "ports/batch_store.hpp"

namespace overhead::backends {

// The `postgres` (and `postgresql`) arm of open_batch_store (the record store of the URL already
// opened). Throws std::invalid_argument for a bad URL, ports::StoreError when the server cannot
// be reached or the tables cannot be made.
[[nodiscard]] std::unique_ptr<ports::BatchStore> open_postgres_batch_store(const ports::BackendUrl& url);

}  // namespace overhead::backends
