// Reading one call written as a JSON object, {"name": ..., "arguments"|"parameters": {...}}, as
// it streams in (internal to agent/): the form of the llama3_json, hermes, mistral (array form)
// and phi4 families. The name is reported once read whole, the arguments fragment by fragment
// through a JsonScanner, compacted. Other keys ("type", "id") are skipped. Arguments before the
// name are held until the name comes. An object without "name" is no call; one without
// arguments is a call with {}, unless the family requires them (llama3_json, whose bare JSON
// answers have no marker: {"name": "Alice", "age": 3} is an answer, not a call).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "agent/json_scan.hpp"
#include "agent/stream.hpp"

namespace overhead::agent::detail {

class CallObjectReader {
 public:
  enum class Status { running, done, not_a_call, error };
  // Consumes from `in` (s.pending() or a part of it), reporting the call on `s`
  // (begin_call/arguments). Returns the bytes consumed; on error the offending byte is not.
  std::size_t feed(std::string_view in, Stream& s);
  [[nodiscard]] Status status() const { return status_; }
  void reset(bool require_arguments = false) {
    *this = CallObjectReader{};
    require_arguments_ = require_arguments;
  }

 private:
  enum class State { open, key_or_close, key, in_key, colon, value, comma_or_close };
  enum class Key { name, arguments, other };
  void value_done(Stream& s);
  void close(Stream& s);

  State state_ = State::open;
  Status status_ = Status::running;
  Key key_ = Key::other;
  std::string key_text_;
  bool key_escape_ = false;
  JsonScanner scanner_;
  std::string value_;      // the name's JSON text
  std::string held_args_;  // arguments that came before the name
  std::string scratch_;
  std::string name_;
  bool has_name_ = false;
  bool has_args_ = false;
  bool begun_ = false;
  bool require_arguments_ = false;
};

// A run of call objects after a family's opening marker: one object, or a JSON array of them,
// or (llama3_json) objects separated by `;`. The first call's region is the family's (opened at
// its marker); each later object opens its own.
class CallSection {
 public:
  struct Form {
    bool array = true;       // [ {...}, {...} ]
    bool object = true;      // {...}
    char separator = '\0';   // bare objects: the byte between two (';'), or none: one object
    bool require_arguments = false;  // an object without "arguments"/"parameters" is no call
  };
  enum class Status { running, done, rejected };
  explicit CallSection(Form form) : form_(form) {}
  // Makes progress on s.pending(); returns false when it must wait for more text.
  bool step(Stream& s);
  [[nodiscard]] Status status() const { return status_; }
  void reset() {
    state_ = State::start;
    status_ = Status::running;
    reader_.reset();
  }

 private:
  enum class State { start, array_object, object, after_array_object, after_bare_object, bare_object };
  Form form_;
  State state_ = State::start;
  Status status_ = Status::running;
  bool in_array_ = false;
  CallObjectReader reader_;
};

}  // namespace overhead::agent::detail
