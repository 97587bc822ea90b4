// CallObjectReader and CallSection (call_object.hpp).
#include "agent/call_object.hpp"

#include <nlohmann/json.hpp>

#include "agent/family.hpp"
#include "agent/markers.hpp"

namespace overhead::agent::detail {

std::size_t CallObjectReader::feed(std::string_view in, Stream& s) {
  std::size_t i = 0;
  while (i < in.size() && status_ == Status::running) {
    const char c = in[i];
    if (state_ != State::in_key && state_ != State::value && is_space(c)) {
      ++i;
      continue;
    }
    switch (state_) {
      case State::open:
        if (c != '{') {
          status_ = Status::error;
          return i;
        }
        ++i;
        state_ = State::key_or_close;
        break;
      case State::key_or_close:
      case State::key:
        if (c == '}' && state_ == State::key_or_close) {
          ++i;
          close(s);
        } else if (c == '"') {
          ++i;
          key_text_.clear();
          state_ = State::in_key;
        } else {
          status_ = Status::error;
          return i;
        }
        break;
      case State::in_key: {
        std::size_t j = i;
        while (j < in.size()) {
          if (key_escape_) {
            key_escape_ = false;
          } else if (in[j] == '\\') {
            key_escape_ = true;
          } else if (in[j] == '"') {
            break;
          }
          ++j;
        }
        key_text_.append(in.substr(i, j - i));
        i = j;
        if (j < in.size()) {  // the closing quote
          ++i;
          key_ = key_text_ == "name"                                   ? Key::name
                 : (key_text_ == "arguments" || key_text_ == "parameters") ? Key::arguments
                                                                           : Key::other;
          state_ = State::colon;
        }
        break;
      }
      case State::colon:
        if (c != ':') {
          status_ = Status::error;
          return i;
        }
        ++i;
        state_ = State::value;
        scanner_.reset();
        if (key_ == Key::name) {
          if (has_name_) {
            status_ = Status::error;
            return i;
          }
          value_.clear();
        } else if (key_ == Key::arguments) {
          if (has_args_) {
            status_ = Status::error;
            return i;
          }
          has_args_ = true;
          if (has_name_) {
            s.begin_call(name_);
            begun_ = true;
          }
        }
        break;
      case State::value: {
        scratch_.clear();
        i += scanner_.feed(in.substr(i), scratch_);
        if (key_ == Key::name) {
          value_.append(scratch_);
        } else if (key_ == Key::arguments) {
          if (begun_) {
            s.arguments(scratch_);
          } else {
            held_args_.append(scratch_);
          }
        }
        if (scanner_.state() == JsonScanner::State::error) {
          status_ = Status::error;
          return i;
        }
        if (scanner_.state() == JsonScanner::State::done) {
          value_done(s);
          if (status_ == Status::error) return i;
          state_ = State::comma_or_close;
        }
        break;
      }
      case State::comma_or_close:
        if (c == ',') {
          ++i;
          state_ = State::key;
        } else if (c == '}') {
          ++i;
          close(s);
        } else {
          status_ = Status::error;
          return i;
        }
        break;
    }
  }
  return i;
}

void CallObjectReader::value_done(Stream& s) {
  if (key_ != Key::name) return;
  const auto parsed = nlohmann::json::parse(value_, nullptr, false);
  if (!parsed.is_string() || parsed.get_ref<const std::string&>().empty()) {
    status_ = Status::error;
    return;
  }
  name_ = parsed.get<std::string>();
  has_name_ = true;
  value_.clear();
  if (has_args_ && !begun_) {  // the arguments came first and were held for the name
    s.begin_call(name_);
    begun_ = true;
    s.arguments(held_args_);
    held_args_.clear();
  }
}

void CallObjectReader::close(Stream& s) {
  if (!has_name_ || (require_arguments_ && !has_args_)) {
    status_ = Status::not_a_call;
    return;
  }
  if (!begun_) {
    s.begin_call(name_);
    begun_ = true;
    s.arguments(has_args_ ? std::string_view(held_args_) : std::string_view("{}"));
  }
  status_ = Status::done;
}

bool CallSection::step(Stream& s) {
  bool progress = false;
  while (status_ == Status::running) {
    switch (state_) {
      case State::start: {
        if (!skip_space(s, progress)) return progress;
        const char c = s.pending().front();
        if (c == '[' && form_.array) {
          s.consume(1);
          in_array_ = true;
          state_ = State::array_object;
        } else if (c == '{' && form_.object) {
          reader_.reset(form_.require_arguments);
          state_ = State::object;
        } else {
          s.reject_region();
          status_ = Status::rejected;
        }
        progress = true;
        break;
      }
      case State::array_object:
      case State::bare_object: {
        if (!skip_space(s, progress)) return progress;
        if (s.pending().front() == '{') {
          if (!s.region_open()) s.open_region();
          reader_.reset(form_.require_arguments);
          state_ = State::object;
        } else if (state_ == State::array_object) {
          s.reject_region();
          status_ = Status::rejected;
        } else {
          status_ = Status::done;
        }
        progress = true;
        break;
      }
      case State::object: {
        const std::size_t n = reader_.feed(s.pending(), s);
        s.consume(n);
        if (n > 0) progress = true;
        switch (reader_.status()) {
          case CallObjectReader::Status::running:
            return progress;
          case CallObjectReader::Status::done:
            if (s.end_call(true)) {
              state_ = in_array_ ? State::after_array_object : State::after_bare_object;
            } else {
              status_ = Status::rejected;  // its text is content now; what follows is too
            }
            break;
          case CallObjectReader::Status::not_a_call:
          case CallObjectReader::Status::error:
            s.reject_region();
            status_ = Status::rejected;
            break;
        }
        progress = true;
        break;
      }
      case State::after_array_object: {
        const std::size_t w = after_space(s, {",", "]"});
        if (w == kWait) return progress;
        if (w == 0) {
          s.consume(1);
          state_ = State::array_object;
        } else {
          if (w == 1) s.consume(1);
          status_ = Status::done;
        }
        progress = true;
        break;
      }
      case State::after_bare_object: {
        const std::size_t w = form_.separator == '\0'
                                  ? MarkerScan::kNone
                                  : after_space(s, {std::string_view(&form_.separator, 1)});
        if (w == kWait) return progress;
        if (w == 0) {
          s.consume(1);
          state_ = State::bare_object;
        } else {
          status_ = Status::done;
        }
        progress = true;
        break;
      }
    }
  }
  return progress;
}

}  // namespace overhead::agent::detail
