// libFuzzer target: arbitrary bytes as a tokenizer.json. Loading must either succeed or throw
// LoadError (naming the file and JSON path); anything else (a crash, a sanitizer report, another
// exception type, memory past -rss_limit_mb) is a bug. A tokenizer that loads is then used a
// little, since a loader that accepts inconsistent data (ids out of range, dangling merges) tends
// to fail only at encode time; there an EncodeError (a text its normalizer would grow past the
// bound) is expected of a hostile file.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "fuzz_support.hpp"
#include "tok/errors.hpp"
#include "tok/tokenizer.hpp"

namespace {

// One private folder per fuzzing process; the loader reads <dir>/tokenizer.json.
const std::string& work_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/overhead-fuzz-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) overhead::fuzz::fail("mkdtemp failed");
    return templ;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = work_dir() + "/tokenizer.json";
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size > 0 && std::fwrite(data, 1, size, f) != size) overhead::fuzz::fail("cannot write " + path);
    std::fclose(f);
  } else {
    overhead::fuzz::fail("cannot open " + path);
  }
  try {
    const auto tok = overhead::tok::Tokenizer::load(work_dir());
    for (const char* text : {"Hello world", "  \n\n\t x's 12345 日本語 \xF0\x9F\x91\x8D", "<bos><|eot_id|><td>\xE2\x96\x81\xE2\x96\x81", "\xFF\xC0"}) {
      try {
        const auto ids = tok->encode(text, true);
        (void)tok->count(text, false);
        (void)tok->decode(ids, false);
        (void)tok->decode(ids, true);
      } catch (const overhead::tok::EncodeError&) {
        // A normalizer that grows text past its bound refuses the text: expected of hostile files.
      }
    }
  } catch (const overhead::tok::LoadError&) {
    // The expected outcome for nearly every mutation.
  } catch (const std::exception& e) {
    overhead::fuzz::fail(std::string("exception other than LoadError: ") + e.what());
  }
  return 0;
}
