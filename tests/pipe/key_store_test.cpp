// The key store contract (contract/key_store_contract.hpp) over sqlite:, and how open_key_store
// opens: a missing file only when asked to make one, no reader's access, and only the schemes
// of a record store that keeps keys.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "backends/open.hpp"
#include "key_store_contract.hpp"
#include "ports/errors.hpp"
#include "test_util.hpp"

namespace overhead::pipe {
namespace {

// The database file and its write-ahead log as bytes: a key's row is in one or the other.
std::string sqlite_file_text(const std::string& url) {
  const std::string path = url.substr(std::string("sqlite:").size());
  std::string out;
  for (const std::string& file : {path, path + "-wal"}) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    out += bytes.str();
  }
  return out;
}

using contract::KeyStoreTest;

INSTANTIATE_TEST_SUITE_P(Backends, KeyStoreTest,
                         ::testing::Values(contract::KeyStoreBackend{
                             "sqlite",
                             [](const std::filesystem::path& dir, const std::string& name) {
                               return "sqlite:" + (dir / (name + ".db")).string();
                             },
                             &sqlite_file_text, nullptr}),
                         contract::KeyStoreBackendName{});

TEST(KeyStoreOpen, AMissingFileIsMadeOnlyWhenCreating) {
  const auto dir = testing::temp_dir("key-store-open");
  const std::string url = "sqlite:" + (dir / "store.db").string();
  EXPECT_THROW((void)backends::open_key_store(url, backends::Access::existing), ports::StoreError);
  EXPECT_FALSE(std::filesystem::exists(dir / "store.db"));
  backends::open_key_store(url)->create(contract::make_key("k"));
  EXPECT_EQ(backends::open_key_store(url, backends::Access::existing)->list().size(), 1u);
  // The record store of the same URL is there too, with its table.
  EXPECT_TRUE(backends::open_store(url, backends::Access::read_only) != nullptr);
  std::filesystem::remove_all(dir);
}

TEST(KeyStoreOpen, BadSchemesParametersAndAccessAreRefused) {
  EXPECT_THROW((void)backends::open_key_store("mem:x"), std::invalid_argument);
  EXPECT_THROW((void)backends::open_key_store("sqlite:"), std::invalid_argument);
  EXPECT_THROW((void)backends::open_key_store("sqlite:/tmp/x.db?tabel=1"), std::invalid_argument);
  EXPECT_THROW((void)backends::open_key_store("sqlite:/tmp/x.db", backends::Access::read_only), std::invalid_argument);
}

}  // namespace
}  // namespace overhead::pipe
