// --backend NAME --case N: the fits.json of that backend that holds that case, E read from it, and
// an error that lists what every file holds when no file has the pair.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cost/cost_model.hpp"
#include "cost/fits_select.hpp"

namespace overhead::cost {
namespace {

namespace fs = std::filesystem;

// A fits.json as `overhead analyze` writes it, reduced to what E needs: one OLS cycle fit of
// model a per case, with the given alpha.
// Named after the running test, as CTest runs the tests of this file in parallel.
std::string write_fits(const std::string& name, const std::string& header, const std::vector<std::pair<int, double>>& fits) {
  const fs::path p = fs::path(::testing::TempDir()) /
                     (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" + name);
  std::ofstream out(p);
  out << "{" << header << ", \"fits\": [";
  for (std::size_t i = 0; i < fits.size(); ++i) {
    out << (i ? "," : "") << "{\"case\": " << fits[i].first
        << ", \"tokenizer\": \"phi-4\", \"target\": \"cycle\", \"model\": \"a\", \"method\": \"ols\", \"n\": 100, "
           "\"coefficients\": [{\"name\": \"const\", \"estimate\": "
        << fits[i].second << "}, {\"name\": \"tokens\", \"estimate\": 0.5}]}";
  }
  // A failed fit carries "error" and no coefficients: it holds nothing.
  out << ", {\"case\": 9, \"tokenizer\": \"phi-4\", \"target\": \"cycle\", \"model\": \"a\", \"method\": \"ols\", \"error\": \"too few\"}";
  out << "]}";
  return p.string();
}

struct Files {
  std::string sqlite = write_fits("fs_sqlite.json", "\"source\": \"sqlite:out/records.db\"", {{1, 10}, {5, 50}});
  std::string postgres = write_fits("fs_pg.json", "\"source\": \"postgresql://127.0.0.1:5432/overhead (run r1)\"", {{5, 500}});
  std::string labelled = write_fits("fs_redis.json", "\"source\": \"postgres://h/db\", \"backend\": \"redis+pg\"", {{5, 700}});
};

TEST(FitsSelect, BackendFromTheSourceSchemeOrTheBackendKey) {
  const Files f;
  EXPECT_EQ(fits_holding(f.sqlite).backend, "sqlite");
  EXPECT_EQ(fits_holding(f.postgres).backend, "postgres");  // postgresql:// and postgres:// are one backend
  EXPECT_EQ(fits_holding(f.labelled).backend, "redis+pg");
  EXPECT_EQ(fits_holding(f.sqlite).cases, (std::vector<int>{1, 5}));  // the failed case 9 is not held
}

TEST(FitsSelect, PicksTheFileOfTheBackendAndCase) {
  const Files f;
  const std::vector<std::string> all = {f.sqlite, f.postgres, f.labelled};
  EXPECT_EQ(select_fits(all, "postgres", 5), f.postgres);
  EXPECT_EQ(select_fits(all, "sqlite", 1), f.sqlite);
  EXPECT_EQ(select_fits(all, "redis+pg", 5), f.labelled);
  EXPECT_DOUBLE_EQ(e_from_fits(select_fits(all, "postgres", 5), 5, "").alpha_us, 500);
  EXPECT_DOUBLE_EQ(e_from_fits(select_fits(all, "sqlite", 5), 5, "").alpha_us, 50);
  EXPECT_EQ(select_fits({f.sqlite}, "", 5), f.sqlite);  // one file needs no --backend
}

TEST(FitsSelect, MissingPairListsWhatTheFilesHold) {
  const Files f;
  try {
    select_fits({f.sqlite, f.postgres}, "postgres", 1);
    FAIL() << "no throw";
  } catch (const CostError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no fits file holds backend postgres with case 1"), std::string::npos) << m;
    EXPECT_NE(m.find(f.sqlite + ": backend sqlite (sqlite:out/records.db), cases 1, 5, tokenizers phi-4"), std::string::npos) << m;
    EXPECT_NE(m.find(f.postgres + ": backend postgres"), std::string::npos) << m;
  }
  EXPECT_THROW(select_fits({f.sqlite, f.postgres}, "", 5), CostError);  // several files need --backend
  EXPECT_THROW(select_fits({}, "sqlite", 5), CostError);
  EXPECT_THROW(select_fits({f.sqlite, "no-such.json"}, "sqlite", 5), CostError);
}

TEST(FitsSelect, MissingCaseInOneFileNamesWhatItHolds) {
  const Files f;
  try {
    e_from_fits(f.postgres, 3, "");
    FAIL() << "no throw";
  } catch (const CostError& e) {
    EXPECT_NE(std::string(e.what()).find("no OLS cycle fit for case 3 in " + f.postgres + ": backend postgres"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace overhead::cost
