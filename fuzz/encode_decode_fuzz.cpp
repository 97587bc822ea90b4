// libFuzzer target: encode arbitrary bytes with small real-shaped tokenizers (fuzz/tokenizers),
// decode, and check what must always hold:
//   - no crash, no sanitizer report, every id below vocab_size();
//   - count(text) == encode(text).size(), with and without special tokens;
//   - invalid UTF-8 is handled as documented: encode(bytes) == encode(repair_utf8(bytes));
//   - decode(encode(text, no special)) == text for valid UTF-8 on the byte-level tokenizer (for the
//     SentencePiece-style one when the text has no U+2581, which decodes to a space; for the
//     lstrip/rstrip one when it holds no special-token text, whose spaces are absorbed);
//   - decode() of arbitrary ids (unknown ones included) does not crash.
// The first input byte picks the tokenizer, the rest is the text.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "tok/tokenizer.hpp"

namespace {

using overhead::tok::Ids;
using overhead::tok::Tokenizer;

struct Fixture {
  const char* kind;
  std::shared_ptr<const Tokenizer> tok;
};

std::vector<Fixture>& fixtures() {
  static std::vector<Fixture> all = [] {
    std::vector<Fixture> v;
    for (const char* kind : {"bytelevel", "bytelevel_tiny", "spm", "spm_tiny"}) {
      v.push_back({kind, Tokenizer::load(overhead::fuzz::fixture_dir(kind))});
    }
    return v;
  }();
  return all;
}

std::string show(const Ids& ids) {
  std::string s = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + "]";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using overhead::fuzz::fail;
  if (size == 0) return 0;
  const Fixture& f = fixtures()[data[0] % fixtures().size()];
  const Tokenizer& tok = *f.tok;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string kind = f.kind;

  const Ids with = tok.encode(text, true);
  const Ids plain = tok.encode(text, false);
  for (const Ids* ids : {&with, &plain}) {
    for (const auto id : *ids) {
      if (id >= tok.vocab_size()) fail(kind + ": id " + std::to_string(id) + " >= vocab_size " + std::to_string(tok.vocab_size()));
    }
  }
  if (tok.count(text, true) != with.size()) fail(kind + ": count(add_special) != encode().size()");
  if (tok.count(text, false) != plain.size()) fail(kind + ": count(no special) != encode().size()");

  const std::string repaired = overhead::fuzz::repair_utf8(text);
  if (repaired != text) {
    const Ids of_repaired = tok.encode(repaired, false);
    if (of_repaired != plain) fail(kind + ": encode(invalid utf-8) " + show(plain) + " != encode(repaired) " + show(of_repaired));
  } else {
    const bool bytelevel = kind.rfind("bytelevel", 0) == 0;
    const bool strips = kind == "bytelevel_tiny" && text.find("<|") != std::string_view::npos;
    const bool spm_space = !bytelevel && text.find("\xE2\x96\x81") != std::string_view::npos;
    if (!strips && !spm_space) {
      const std::string back = tok.decode(plain, false);
      if (back != text) fail(kind + ": decode(encode(text)) != text; ids " + show(plain) + " decoded \"" + back + "\"");
    }
  }
  (void)tok.decode(with, true);

  // Decode of arbitrary ids, in range and out of it.
  Ids ids;
  for (std::size_t i = 1; i + 1 < size; i += 2) ids.push_back(static_cast<std::uint32_t>(data[i] | (data[i + 1] << 8)) % (tok.vocab_size() + 16));
  (void)tok.decode(ids, false);
  (void)tok.decode(ids, true);
  return 0;
}
