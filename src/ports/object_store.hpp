// Object storage for whole files (a port; case 1's CSV). The adapters live in src/backends/
// (`file:DIR` writes DIR/KEY) and are opened by URL there (backends/open.hpp); S3 fits the same
// interface (PutObject/GetObject by key).
//
// Contract every backend keeps:
//   - Thread-safety: every member may be called from several threads at once on one object.
//   - Atomic objects: a reader sees the whole old object or the whole new one, never a part.
//   - Keys: relative, '/'-separated, without ".."; a bad key is std::invalid_argument.
//   - Deadlines: no call blocks longer than the per-call timeout (URL parameter `timeout_ms`,
//     default kDefaultCallTimeout) plus the time to move the bytes.
//   - Errors: ObjectStoreError naming the URL, transient (throttled, timed out, connection lost)
//     or permanent (access denied, no such object or bucket) (errors.hpp).
//   - url() is the URL with any password replaced by "***" (BackendUrl::redacted).
//   - A writer's object appears whole at finish(), as a put's does; a writer dropped before it
//     leaves no object and the old one, if any, as it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ports/backend_url.hpp"  // kDefaultCallTimeout
#include "ports/errors.hpp"

namespace overhead::ports {

// One object written in pieces, for objects too large to hold (a batch's output, a file put
// together from the parts of an upload): memory is bounded by the backend's piece, not the object.
class ObjectWriter {
 public:
  virtual ~ObjectWriter() = default;
  virtual void append(std::string_view bytes) = 0;
  // Makes the object appear, whole. Nothing may be appended after.
  virtual void finish() = 0;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;
  // Writes the whole object, replacing any object under the key.
  virtual void put(const std::string& key, std::string_view bytes) = 0;
  // The whole object; ObjectStoreError (permanent) when there is none.
  [[nodiscard]] virtual std::string get(const std::string& key) = 0;
  // Up to `max_bytes` of the object from byte `offset` (empty at or past its end), so that a large
  // object is read in pieces with bounded memory (the Batch API's input files). The default reads
  // the whole object; a backend that can read a range (a file's seek, S3's Range) overrides it.
  [[nodiscard]] virtual std::string get_range(const std::string& key, std::uint64_t offset, std::size_t max_bytes) {
    const std::string all = get(key);
    return offset >= all.size() ? std::string() : all.substr(static_cast<std::size_t>(offset), max_bytes);
  }
  // A writer of the object under `key`, which must not outlive this store. The default holds the
  // pieces and puts them at finish(); a backend that can write in pieces (a file, S3's multipart
  // upload) overrides it.
  [[nodiscard]] virtual std::unique_ptr<ObjectWriter> write(const std::string& key);
  // Deletes the object; false when the backend cannot delete (the object is left) or there was none.
  virtual bool remove(const std::string& /*key*/) { return false; }
  [[nodiscard]] virtual const std::string& url() const = 0;
};

}  // namespace overhead::ports
