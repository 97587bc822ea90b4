// The batch store contract (contract/batch_store_contract.hpp) on the sqlite backend: the tables
// beside the records of a sqlite: store.
#include "batch_store_contract.hpp"

#include "backends/open.hpp"

namespace overhead::pipe::contract {

INSTANTIATE_TEST_SUITE_P(Sqlite, BatchStoreSemantics,
                         ::testing::Values(BatchStoreBackend{"sqlite", [](const std::filesystem::path& dir) {
                                                               return backends::open_batch_store("sqlite:" + (dir / "records.db").string());
                                                             },
                                                             {}}),
                         BatchStoreBackendName{});

}  // namespace overhead::pipe::contract
