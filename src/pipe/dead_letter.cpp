#include "pipe/dead_letter.hpp"

#include <filesystem>
#include <stdexcept>

#include "util/hash.hpp"
#include "util/json_writer.hpp"
#include "util/utf8.hpp"

namespace overhead::pipe {

const char* kind_name(DeadLetterKind kind) {
  switch (kind) {
    case DeadLetterKind::malformed_json: return "malformed_json";
    case DeadLetterKind::missing_field: return "missing_field";
    case DeadLetterKind::bad_prompt: return "bad_prompt";
    case DeadLetterKind::template_error: return "template_error";
    case DeadLetterKind::unknown_tokenizer: return "unknown_tokenizer";
    case DeadLetterKind::prompt_too_large: return "prompt_too_large";
    case DeadLetterKind::bad_message: return "bad_message";
    case DeadLetterKind::processing_error: return "processing_error";
    case DeadLetterKind::publish_failed: return "publish_failed";
    case DeadLetterKind::stamps_failed: return "stamps_failed";
    case DeadLetterKind::send_failed: return "send_failed";
    case DeadLetterKind::store_failed: return "store_failed";
    case DeadLetterKind::duplicate_id: return "duplicate_id";
    case DeadLetterKind::decode_failed: return "decode_failed";
    case DeadLetterKind::engine_refused: return "engine_refused";
  }
  return "?";
}

bool parse_dead_letter_kind(std::string_view name, DeadLetterKind& out) {
  for (const auto k : kDeadLetterKinds)
    if (name == kind_name(k)) {
      out = k;
      return true;
    }
  return false;
}

DeadLetterSink::DeadLetterSink(std::string path) : path_(std::move(path)) {}

void DeadLetterSink::add(DeadLetter letter) {
  DeadLetterKind known;
  if (!parse_dead_letter_kind(letter.kind, known))
    throw std::logic_error("dead letter of an unlisted kind \"" + letter.kind + "\" (add it to DeadLetterKind)");
  // A huge payload (a 50 MB line) is kept as an excerpt with its size and digest: enough to find
  // the input again, without a copy of it in the file and in memory per letter.
  std::size_t payload_bytes = 0;
  std::string payload_digest;
  if (letter.payload.size() > kMaxPayloadBytes) {
    payload_bytes = letter.payload.size();
    payload_digest = util::text_digest(letter.payload);
    letter.payload = std::string(util::utf8::truncate(letter.payload, kMaxPayloadBytes));
  }
  std::string line;
  if (!path_.empty()) {
    line = "{\"kind\":";
    util::append_json_string(line, letter.kind);
    line += ",\"origin\":";
    util::append_json_string(line, letter.origin);
    line += ",\"tokenizer\":";
    util::append_json_string(line, letter.tokenizer);
    line += ",\"reason\":";
    util::append_json_string(line, letter.reason);
    line += ",\"payload\":";
    util::append_json_string(line, letter.payload);
    if (payload_bytes != 0) {
      line += ",\"payload_bytes\":" + std::to_string(payload_bytes) + ",\"payload_fnv1a64\":";
      util::append_json_string(line, payload_digest);
    }
    line += "}\n";
  }
  std::lock_guard lock(mutex_);
  if (!path_.empty()) {
    if (!file_.is_open()) {
      const auto parent = std::filesystem::path(path_).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent);
      file_.open(path_, std::ios::app | std::ios::binary);
      if (!file_) throw std::runtime_error(path_ + ": cannot open the dead-letter file");
    }
    file_ << line;
    file_.flush();  // a dead letter must outlive a crash that follows it
  }
  ++counts_[letter.kind];
  ++total_;
  if (letters_.size() < kKept) letters_.push_back(std::move(letter));
}

std::size_t DeadLetterSink::total() const {
  std::lock_guard lock(mutex_);
  return total_;
}

std::map<std::string, std::size_t> DeadLetterSink::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

std::vector<DeadLetter> DeadLetterSink::letters() const {
  std::lock_guard lock(mutex_);
  return letters_;
}

}  // namespace overhead::pipe
