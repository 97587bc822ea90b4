// The ObjectStore port's default writer: for a backend that writes only whole objects.
#include "ports/object_store.hpp"

namespace overhead::ports {
namespace {

// Holds what is appended and puts it at finish(): memory is the object's size, which is why the
// backends that can write in pieces override ObjectStore::write.
class WholeObjectWriter final : public ObjectWriter {
 public:
  WholeObjectWriter(ObjectStore& store, std::string key) : store_(store), key_(std::move(key)) {}
  void append(std::string_view bytes) override { bytes_.append(bytes); }
  void finish() override { store_.put(key_, bytes_); }

 private:
  ObjectStore& store_;
  std::string key_;
  std::string bytes_;
};

}  // namespace

std::unique_ptr<ObjectWriter> ObjectStore::write(const std::string& key) { return std::make_unique<WholeObjectWriter>(*this, key); }

}  // namespace overhead::ports
