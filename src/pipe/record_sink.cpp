#include "pipe/record_sink.hpp"

#include <unordered_map>

#include "ports/record_codec.hpp"

namespace overhead::pipe {

using ports::append_record_json;
using ports::append_stamps_json;
using ports::Record;
using ports::send_all;
using ports::StampPatch;

void MemorySink::put(const Record& record) {
  std::lock_guard lock(mutex_);
  records_.push_back(record);
}

void MemorySink::put_stamps(std::span<const StampPatch> patches) {
  std::lock_guard lock(mutex_);
  patches_.insert(patches_.end(), patches.begin(), patches.end());
}

std::vector<Record> MemorySink::take() {
  std::lock_guard lock(mutex_);
  std::unordered_map<std::string, std::size_t> index;
  index.reserve(records_.size());
  for (std::size_t i = 0; i < records_.size(); ++i) index[records_[i].experiment_tokenizer + '\n' + records_[i].id] = i;
  for (const auto& p : patches_) {
    const auto it = index.find(p.experiment_tokenizer + '\n' + p.id);
    if (it == index.end()) continue;
    Record& r = records_[it->second];
    if (p.publish_acked) r.publish_acked = p.publish_acked;
    if (p.input_deleted) r.input_deleted = p.input_deleted;
  }
  patches_.clear();
  return std::move(records_);
}

void QueueSink::put(const Record& record) {
  // One buffer per thread: after warm-up, serialising a record allocates only the message copy.
  thread_local std::string body;
  body.clear();
  append_record_json(body, record);
  send_all(*queue_, std::span<const std::string>(&body, 1));
}

void QueueSink::put_stamps(std::span<const StampPatch> patches) {
  std::string body;
  append_stamps_json(body, patches);
  send_all(*queue_, std::span<const std::string>(&body, 1));
}

}  // namespace overhead::pipe
