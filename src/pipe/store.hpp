// The record store: idempotent upsert keyed by (experiment_tokenizer, id) and a scan by
// experiment. The adapters live in src/backends/ ("sqlite:PATH" is the embedded default) and are
// opened by URL there (backends/open.hpp); PostgreSQL and DynamoDB fit the same interface.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pipe/record.hpp"

namespace overhead::pipe {

class Store {
 public:
  virtual ~Store() = default;
  // Insert or replace by key. Thread-safe. Throws StoreError naming the URL on failure.
  virtual void upsert(const Record& record) = 0;
  virtual void upsert_batch(std::span<const Record> records) = 0;
  // Sets publish_acked/input_deleted (non-zero values only) of stored records; returns how many
  // of the patches found their record. Added to the contract for the stamps that exist only
  // after publishing (see StampPatch).
  virtual std::size_t update_stamps(std::span<const StampPatch> patches) = 0;
  // Calls fn for every record of `experiment` (all experiments when empty), in key order.
  virtual void scan(const std::string& experiment, const std::function<void(const Record&)>& fn) = 0;
  // Distinct experiment names held.
  virtual std::vector<std::string> experiments() = 0;
  virtual const std::string& url() const = 0;
};

}  // namespace overhead::pipe
