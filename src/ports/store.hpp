// The record store (a port): idempotent upsert keyed by (experiment_tokenizer, id), the stamp
// patches that arrive after a record, and a scan by experiment. The adapters live in
// src/backends/ ("sqlite:PATH" is the embedded default) and are opened by URL there
// (backends/open.hpp); PostgreSQL and DynamoDB fit the same interface.
//
// Contract every backend keeps (tests/pipe/store_contract.hpp checks it):
//   - Key: (experiment_tokenizer, id). An upsert of a key that is stored replaces the record, so
//     a replayed record overwrites, never duplicates.
//   - Replay rule: a replayed record carries publish_acked/input_deleted = 0 (those stamps exist
//     only after it was published). An upsert never erases a non-zero publish_acked or
//     input_deleted already stored (patched in by update_stamps); a non-zero value replaces it.
//   - Thread-safety: every member may be called from several threads at once on one object (the
//     publisher pool writes while the consumer writes).
//   - Deadlines: no call blocks longer than the per-call timeout (URL parameter `timeout_ms`,
//     default kDefaultCallTimeout), except that scan's time grows with what it returns; a call
//     that runs out of time throws StoreError with Failure::transient.
//   - Errors: a failure of the whole call throws StoreError, transient or permanent (errors.hpp);
//     upsert_batch reports a failure of single records in its result and stores the others.
//   - Order: scan returns records in no particular order (an ordered scan is a full-table sort
//     on DynamoDB); scan_in_key_order sorts on the caller's side, the report sorts on its own.
//   - url() is the URL with any password replaced by "***" (BackendUrl::redacted).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ports/backend_url.hpp"  // kDefaultCallTimeout
#include "ports/errors.hpp"
#include "ports/record.hpp"

namespace overhead::ports {

// A record of an upsert_batch that was not stored (the others were).
struct UpsertFailure {
  std::size_t index = 0;  // position in the batch passed in
  EntryFailure failure;
};

class Store {
 public:
  virtual ~Store() = default;
  // Insert or replace by key (see the replay rule). Throws StoreError naming the URL on failure.
  virtual void upsert(const Record& record) = 0;
  // Upserts every record; returns the ones that failed on their own (DynamoDB's
  // UnprocessedItems), in batch order. Empty = all stored. A retry resends only those.
  [[nodiscard]] virtual std::vector<UpsertFailure> upsert_batch(std::span<const Record> records) = 0;
  // Sets publish_acked/input_deleted (non-zero values only) of stored records; returns how many
  // of the patches found their record. Added to the contract for the stamps that exist only
  // after publishing (see StampPatch).
  [[nodiscard]] virtual std::size_t update_stamps(std::span<const StampPatch> patches) = 0;
  // Calls fn for every record of `experiment` (all experiments when empty), in no particular order.
  virtual void scan(const std::string& experiment, const std::function<void(const Record&)>& fn) = 0;
  [[nodiscard]] virtual const std::string& url() const = 0;
};

// The records of `experiment` (all when empty) sorted by key (experiment_tokenizer, id), so a
// run reads the same order from every backend.
[[nodiscard]] std::vector<Record> scan_in_key_order(Store& store, const std::string& experiment);
// The distinct experiment names held, sorted. A full scan: for messages, not for hot paths.
[[nodiscard]] std::vector<std::string> experiments_in(Store& store);

}  // namespace overhead::ports
