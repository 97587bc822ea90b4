// The batch store (ports/batch_store.hpp) in a SQLite file: two tables, batch_files and batches,
// beside the records of a sqlite: store (the same file, opened by backends::open_batch_store from
// the store's URL), one row per document.
#pragma once

#include <memory>

#include "ports/backend_url.hpp"
#include "ports/batch_store.hpp"

namespace overhead::backends {

[[nodiscard]] std::unique_ptr<ports::BatchStore> open_sqlite_batch_store(const ports::BackendUrl& url);

}  // namespace overhead::backends
