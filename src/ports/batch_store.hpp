// The Batch API's state (a port): the uploaded files' metadata and the batches, each a JSON
// document under its id, kept in the record store's database (backends::open_batch_store opens it
// from the store's URL) so that a gateway restarted on the same store finds its batches and
// resumes them (serve/batch_runner.hpp). The documents' shape is the gateway's business
// (serve/batch_state.hpp); the store keeps them whole and orders them for paging.
//
// Contract every backend keeps (tests/pipe/contract/batch_store_contract.hpp checks it):
//   - put replaces the document of the same kind and id whole; a reader sees the old or the new.
//   - list returns the documents of a kind newest first (created_at descending, then id
//     descending), those after the document `after` (exclusive) when it is given, at most `limit`.
//     An `after` that names no document lists from the start.
//   - open lists the batches whose `open` flag is set (not yet in a final state), any order.
//   - Thread-safety: every member may be called from several threads at once on one object.
//   - Errors: StoreError naming the URL, transient or permanent (errors.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ports/errors.hpp"

namespace overhead::ports {

enum class BatchKind { file, batch };

struct BatchDocument {
  std::string id;
  std::int64_t created_at = 0;  // Unix seconds, for ordering
  bool open = false;            // a batch not yet completed, failed, expired or cancelled
  std::string body;             // the JSON document
};

class BatchStore {
 public:
  virtual ~BatchStore() = default;
  virtual void put(BatchKind kind, const BatchDocument& doc) = 0;
  [[nodiscard]] virtual std::optional<BatchDocument> get(BatchKind kind, const std::string& id) = 0;
  // Whether there was such a document.
  virtual bool remove(BatchKind kind, const std::string& id) = 0;
  [[nodiscard]] virtual std::vector<BatchDocument> list(BatchKind kind, const std::string& after, std::size_t limit) = 0;
  [[nodiscard]] virtual std::vector<BatchDocument> open_batches() = 0;
  [[nodiscard]] virtual const std::string& url() const = 0;
};

}  // namespace overhead::ports
