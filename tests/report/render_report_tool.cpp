// Writes a report from generated records (three tokenizers, five cases, a batch hump) into the
// folder given, PNGs included: the input of render_html_test.sh.
#include <cstdio>
#include <exception>

#include "report/write_report.hpp"
#include "support/record_generator.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    overhead::testing::GeneratorOptions o;
    o.cases = {1, 2, 3, 4, 5};
    o.items_per_tokenizer = 600;
    o.workers = 2;
    overhead::report::ReportOptions ro;
    ro.out_dir = argv[1];
    ro.compare_seed = true;
    ro.source = "generated records";
    const auto summary = overhead::report::write_report(overhead::testing::generate_records(o), ro);
    overhead::report::print_headline(summary);
    return summary.warnings.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "render_report_tool: %s\n", e.what());
    return 1;
  }
}
