// The decoder section of the report: absent when no record has D stamps (a --decoder none report
// is as it was), else E, TTFT, D, output tokens and E's share of T per case and tokenizer.
#include "report/decoder_section.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "report/write_report.hpp"
#include "support/record_generator.hpp"

namespace overhead::report {
namespace {

namespace fs = std::filesystem;

ports::Record decoded(const std::string& tokenizer, std::int64_t e_us, std::int64_t ttft_us, std::int64_t d_us,
                     std::int64_t tokens) {
  ports::Record r;
  r.case_number = 5;
  r.tokenizer = tokenizer;
  r.render_start = 1'000'000;
  r.encode_end = r.render_start + e_us * 1000;
  r.decode_start = r.encode_end + 5000;
  r.first_token = tokens ? r.decode_start + ttft_us * 1000 : 0;
  r.decode_end = r.decode_start + d_us * 1000;
  r.output_tokens = tokens;
  return r;
}

TEST(DecoderSection, NoneWithoutDecoderStamps) {
  testing::GeneratorOptions o;
  o.cases = {5};
  o.items_per_tokenizer = 20;
  EXPECT_FALSE(decoder_section(testing::generate_records(o)).has_value());
}

TEST(DecoderSection, ShowsDNextToEPerCaseAndTokenizer) {
  const std::vector<ports::Record> records = {decoded("phi-4", 100, 2000, 10000, 50), decoded("phi-4", 300, 4000, 30000, 150),
                                             decoded("gemma", 200, 0, 1000, 0)};
  const auto s = decoder_section(records);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->tables.size(), 1u);
  const Table& t = s->tables[0];
  EXPECT_EQ(t.name, "decoder");
  ASSERT_EQ(t.rows.size(), 2u);
  // (5, gemma): no token came, TTFT n/a.
  EXPECT_EQ(t.rows[0][1], "gemma");
  EXPECT_EQ(t.rows[0][4], "n/a");
  // (5, phi-4): E mean 200 µs, TTFT 3 ms, D 20 ms, 100 tokens, E share 200 / 20200.
  EXPECT_EQ(t.rows[1], (std::vector<std::string>{"5", "phi-4", "2", "200.0", "3.000", "20.000", "100.0",
                                                 percent(200.0 / 20200.0, 3)}));
  EXPECT_NE(s->markdown.find("## The decoder stage"), std::string::npos);
}

TEST(DecoderSection, TheReportHasItOnlyWhenADecoderRan) {
  testing::GeneratorOptions o;
  o.cases = {5};
  o.items_per_tokenizer = 50;
  auto records = testing::generate_records(o);
  ReportOptions ro;
  ro.png = false;
  ro.out_dir = (fs::path(::testing::TempDir()) / "overhead_report_decoder_none").string();
  fs::remove_all(ro.out_dir);
  (void)write_report(records, ro);
  EXPECT_FALSE(fs::exists(fs::path(ro.out_dir) / "decoder.csv"));
  for (auto& r : records) {
    r.decode_start = r.encode_end + 1000;
    r.first_token = r.decode_start + 2'000'000;
    r.decode_end = r.first_token + 8'000'000;
    r.output_tokens = 40;
  }
  ro.out_dir = (fs::path(::testing::TempDir()) / "overhead_report_decoder_sim").string();
  fs::remove_all(ro.out_dir);
  const ReportSummary s = write_report(records, ro);
  EXPECT_TRUE(fs::exists(fs::path(ro.out_dir) / "decoder.csv"));
  std::ifstream in(s.markdown_path);
  std::stringstream md;
  md << in.rdbuf();
  EXPECT_NE(md.str().find("## The decoder stage: D next to E"), std::string::npos);
}

}  // namespace
}  // namespace overhead::report
