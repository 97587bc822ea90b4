// The object store contract (contract/object_store_contract.hpp) on the `file:` backend.
#include "object_store_contract.hpp"

namespace overhead::pipe::contract {
INSTANTIATE_TEST_SUITE_P(File, ObjectStoreSemantics,
                         ::testing::Values(url_object_store_backend(
                             "file", [](const std::filesystem::path& dir, const std::string& space) {
                               return "file:" + (dir / space).string();
                             })),
                         ObjectStoreBackendName{});
}  // namespace overhead::pipe::contract
