// The shared output rules of every family (stream.hpp).
#include "agent/stream.hpp"

#include <nlohmann/json.hpp>

namespace overhead::agent::detail {

namespace stream {

// Arguments are released only as a JSON object: what a client's json.loads(arguments) expects.
bool is_json_object(std::string_view s) {
  if (s.empty() || s.front() != '{') return false;
  return nlohmann::json::accept(s);
}

}  // namespace stream

void Stream::append(std::string_view text) {
  // Drop what no one needs any more: consumed text before an open call's region.
  const std::size_t keep_from = region_ == kNone ? pos_ : region_;
  if (keep_from > 0 && keep_from >= buf_.size() / 2) {
    buf_.erase(0, keep_from);
    pos_ -= keep_from;
    if (region_ != kNone) region_ -= keep_from;
  }
  buf_.append(text);
}

void Stream::emit_text(Delta::Kind kind, std::string_view s) {
  if (s.empty()) return;
  if (!sink_->empty() && sink_->back().kind == kind) {
    sink_->back().text.append(s);
    return;
  }
  Delta d;
  d.kind = kind;
  d.text.assign(s);
  sink_->push_back(std::move(d));
}

void Stream::emit_call(std::size_t index, std::string_view name, std::string_view args) {
  Delta d;
  d.kind = Delta::Kind::tool_call;
  d.index = index;
  d.id = call_id(id_prefix_, index);
  d.name.assign(name);
  d.text.assign(args);
  sink_->push_back(std::move(d));
}

void Stream::content(std::string_view s) {
  content_.text(s, [this](std::string_view t) { emit_text(Delta::Kind::content, t); });
}

void Stream::reasoning(std::string_view s) {
  reasoning_.text(s, [this](std::string_view t) { emit_text(Delta::Kind::reasoning, t); });
}

void Stream::open_region() {
  region_ = pos_;
  begun_ = false;
  name_.clear();
  args_.clear();
}

void Stream::begin_call(std::string_view name) {
  begun_ = true;
  name_.assign(name);
  args_.clear();
  if (release_ == CallRelease::streamed) {
    content_.boundary();
    index_ = next_index_++;
    emit_call(index_, name_, {});
  }
}

void Stream::arguments(std::string_view fragment) {
  args_.append(fragment);
  if (release_ != CallRelease::streamed || fragment.empty()) return;
  if (!sink_->empty() && sink_->back().kind == Delta::Kind::tool_call && sink_->back().index == index_) {
    sink_->back().text.append(fragment);
    return;
  }
  Delta d;
  d.kind = Delta::Kind::tool_call;
  d.index = index_;
  d.text.assign(fragment);
  sink_->push_back(std::move(d));
}

bool Stream::end_call(bool syntax_ok) {
  const bool ok = syntax_ok && begun_ && stream::is_json_object(args_);
  if (release_ == CallRelease::streamed && begun_) {
    if (!ok) bad_calls_.push_back(index_);
    content_.boundary();
  } else if (ok) {
    content_.boundary();
    emit_call(next_index_++, name_, args_);
  } else {
    release_region_as_content(pos_);
  }
  region_ = kNone;
  begun_ = false;
  return ok;
}

void Stream::reject_region() {
  if (begun_ && release_ == CallRelease::streamed) {
    end_call(false);
    return;
  }
  release_region_as_content(pos_);
  region_ = kNone;
  begun_ = false;
}

void Stream::release_region_as_content(std::size_t end) {
  if (region_ == kNone) return;
  const std::size_t start = region_;
  region_ = kNone;  // content() must not see a region
  content(std::string_view(buf_).substr(start, end - start));
}

void Stream::close_at_end() {
  if (region_ != kNone) {
    pos_ = buf_.size();
    if (begun_ && release_ == CallRelease::streamed) {
      bad_calls_.push_back(index_);
      region_ = kNone;
      begun_ = false;
    } else {
      release_region_as_content(buf_.size());
      begun_ = false;
    }
  }
  reasoning_.flush([this](std::string_view t) { emit_text(Delta::Kind::reasoning, t); });
  content_.flush([this](std::string_view t) { emit_text(Delta::Kind::content, t); });
}

}  // namespace overhead::agent::detail
