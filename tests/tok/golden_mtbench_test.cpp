// Exactness against HF tokenizers on every MT-Bench message content (13,568 texts, 8 MB): the
// golden holds, per message, the id count and the FNV-1a 64 digest of the ids, which pins every id
// without storing hundreds of MB. Labelled slow (the sanitizer run skips it); `make test` runs it.
#include <gtest/gtest.h>

#include <string>

#include "golden_support.hpp"
#include "tok/tokenizer.hpp"
#include "util/hash.hpp"
#include "util/line_reader.hpp"

namespace overhead::tok::golden {
namespace {

class GoldenMtBenchTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenMtBenchTest, EveryMessageCountAndDigest) {
  const std::string& name = GetParam();
  const auto tok = Tokenizer::load(name);
  const auto& messages = mtbench_messages();
  const std::string path = golden_path(name, "mtbench.tsv.gz");
  util::LineReader reader(path);
  std::string line;
  std::size_t index = 0;
  int mismatches = 0;
  Ids ids;
  while (reader.next(line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << path << ": line " << reader.line_number() << ": no tab";
    ASSERT_LT(index, messages.size()) << path << " has more lines than there are MT-Bench messages";
    const std::size_t want_count = std::stoul(line.substr(0, tab));
    const std::string want_digest = line.substr(tab + 1);
    const MtBenchMessage& m = messages[index];
    ids.clear();
    tok->encode_into(m.text, ids, true);
    const std::string got_digest = util::ids_digest(ids);
    if ((ids.size() != want_count || got_digest != want_digest) && ++mismatches <= kMaxReported) {
      ADD_FAILURE() << name << ": MT-Bench message " << index << " (record " << m.record << ", message " << m.message
                    << ", golden line " << reader.line_number() << ") " << excerpt(m.text) << ": expected "
                    << want_count << " ids digest " << want_digest << ", got " << ids.size() << " ids digest "
                    << got_digest;
    }
    ++index;
  }
  EXPECT_EQ(index, messages.size()) << path << " does not cover every MT-Bench message; run scripts/make_tok_goldens.sh";
  EXPECT_EQ(mismatches, 0) << name << ": " << mismatches << " of " << index << " MT-Bench messages differ";
}

INSTANTIATE_TEST_SUITE_P(AllTokenizers, GoldenMtBenchTest, ::testing::ValuesIn(golden_tokenizer_names()),
                         gtest_name_of);

}  // namespace
}  // namespace overhead::tok::golden
