#include "pipe/store_step.hpp"

#include <stdexcept>
#include <utility>
#include <variant>

#include "ports/record_codec.hpp"

namespace overhead::pipe {

const char* failure_kind_name(StoreFailureKind kind) {
  switch (kind) {
    case StoreFailureKind::bad_message: return "bad_message";
    case StoreFailureKind::store_failed: return "store_failed";
    case StoreFailureKind::stamps_failed: return "stamps_failed";
    case StoreFailureKind::stamps_deferred: return "stamps_deferred";
  }
  return "unknown";
}

UpsertOutcome upsert_with_retries(ports::Store& store, std::span<const ports::Record> records,
                                  const ports::RetryPolicy& retry, const std::function<void()>& on_retry) {
  UpsertOutcome out;
  out.call = ports::call_with_retries(retry, [&] { out.refused = store.upsert_batch(records); }, on_retry);
  return out;
}

StampsOutcome apply_stamps(ports::Store& store, std::span<const ports::StampPatch> patches,
                           const ports::RetryPolicy& retry, const std::function<void()>& on_retry) {
  StampsOutcome out;
  out.asked = patches.size();
  out.call = ports::call_with_retries(retry, [&] { out.found = store.update_stamps(patches); }, on_retry);
  return out;
}

StoreStep::StoreStep(ports::Store& store, ports::RetryPolicy retry) : store_(store), retry_(std::move(retry)) {}

std::optional<MessageFailure> StoreStep::add(const std::string& message_id, std::string_view body) {
  try {
    auto msg = ports::parse_log_message(body, "message " + message_id);
    if (auto* record = std::get_if<ports::Record>(&msg)) {
      records_.push_back(std::move(*record));
      record_ids_.push_back(message_id);
    } else {
      patches_.emplace_back(std::move(std::get<std::vector<ports::StampPatch>>(msg)), message_id);
    }
  } catch (const std::runtime_error& e) {
    return MessageFailure{message_id, StoreFailureKind::bad_message, e.what()};
  }
  return std::nullopt;
}

std::vector<MessageFailure> StoreStep::store() {
  std::vector<MessageFailure> failed;
  const auto no_count = [] {};
  if (!records_.empty()) {
    const UpsertOutcome o = upsert_with_retries(store_, records_, retry_, no_count);
    if (!o.call.ok) {
      for (const auto& id : record_ids_) failed.push_back({id, StoreFailureKind::store_failed, o.call.last_error});
    } else {
      for (const auto& f : o.refused)
        failed.push_back({record_ids_.at(f.index), StoreFailureKind::store_failed, store_.url() + ": " + f.failure.message});
    }
  }
  // A patch applies only to stored records; one whose record is not there yet is reported, so it
  // comes back after the record (as the queue consumer leaves it undeleted).
  for (const auto& [list, id] : patches_) {
    const StampsOutcome o = apply_stamps(store_, list, retry_, no_count);
    switch (o.result()) {
      case StampsOutcome::Result::failed:
        failed.push_back({id, StoreFailureKind::stamps_failed, o.call.last_error});
        break;
      case StampsOutcome::Result::deferred:
        failed.push_back({id, StoreFailureKind::stamps_deferred,
                          std::to_string(o.asked - o.found) + " of " + std::to_string(o.asked) +
                              " records are not stored yet"});
        break;
      case StampsOutcome::Result::applied: break;
    }
  }
  records_.clear();
  record_ids_.clear();
  patches_.clear();
  return failed;
}

}  // namespace overhead::pipe
