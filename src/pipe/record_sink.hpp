// Where the log publisher delivers records: kept in memory (case 1), written to the store
// synchronously (case 2), or pushed to the log queue for the consumer (cases 3-5). A put that
// returns has been confirmed (stored, or accepted by the queue); a failure throws the backend's
// error (QueueError/StoreError, retryable or not) so that the publisher can decide on a retry.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "ports/queue.hpp"
#include "ports/record.hpp"
#include "ports/store.hpp"

namespace overhead::pipe {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void put(const ports::Record& record) = 0;
  virtual void put_stamps(std::span<const ports::StampPatch> patches) = 0;
};

// Case 1: records cached in memory; the stamps are applied when the records are taken.
class MemorySink final : public RecordSink {
 public:
  void put(const ports::Record& record) override;
  void put_stamps(std::span<const ports::StampPatch> patches) override;
  std::vector<ports::Record> take();  // all records, patched, in arrival order

 private:
  std::mutex mutex_;
  std::vector<ports::Record> records_;
  std::vector<ports::StampPatch> patches_;
};

class StoreSink final : public RecordSink {
 public:
  explicit StoreSink(ports::Store& store) : store_(store) {}
  void put(const ports::Record& record) override { store_.upsert(record); }
  // A patch whose record is not there is not an error here: case 2 stored the record first.
  void put_stamps(std::span<const ports::StampPatch> patches) override { (void)store_.update_stamps(patches); }

 private:
  ports::Store& store_;
};

// One message per record (as the seed's send_message), one message per stamp patch list.
class QueueSink final : public RecordSink {
 public:
  explicit QueueSink(std::shared_ptr<ports::Queue> queue) : queue_(std::move(queue)) {}
  void put(const ports::Record& record) override;
  void put_stamps(std::span<const ports::StampPatch> patches) override;

 private:
  std::shared_ptr<ports::Queue> queue_;
};

}  // namespace overhead::pipe
