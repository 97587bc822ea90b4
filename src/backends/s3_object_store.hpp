// The Amazon S3 object store (`s3://BUCKET[/PREFIX][?region=R&endpoint=URL&timeout_ms=]`): the
// ObjectStore port over S3's REST API, signed with SigV4 (aws/sigv4.hpp) including the payload
// hash (x-amz-content-sha256), sent on the pooled HTTP client (aws/http_client.hpp).
//   put   PutObject of PREFIX/KEY (S3 replaces an object whole, so readers never see half);
//   get   GetObject of PREFIX/KEY; get_range the same with a Range header (206 Partial Content);
//   write  a multipart upload (CreateMultipartUpload, UploadPart per 8 MiB, CompleteMultipartUpload;
//          AbortMultipartUpload when dropped unfinished), or one PutObject when it stays under a part;
//   remove  DeleteObject of PREFIX/KEY.
// Addressing: without `endpoint`, virtual-hosted style on AWS (https://BUCKET.s3.REGION.amazonaws.com/KEY;
// a bucket name with a dot falls back to path style, since it would not match the TLS wildcard);
// with `endpoint` (an emulator, MinIO, a VPC endpoint) path style, ENDPOINT/BUCKET/KEY.
// Errors: throttling (SlowDown, 503, 429), 5xx and a lost connection are retried with capped
// backoff and jitter, then thrown transient; NoSuchBucket, NoSuchKey, AccessDenied, a refused key
// or signature and a wrong region are permanent, with a hint of what to check. No error text holds
// a secret: only the S3 error code and message, the object key and the URL.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "ports/backend_url.hpp"
#include "ports/object_store.hpp"

namespace overhead::backends {

// Where the requests of an s3:// URL go, worked out once when the store is opened.
struct S3Addressing {
  std::string bucket;
  std::string prefix;     // without leading or trailing '/'; empty = the bucket's root
  std::string region;
  std::string base_url;   // "https://BUCKET.s3.REGION.amazonaws.com", or the endpoint
  std::string host;       // the Host header (signed)
  bool path_style = false;  // the bucket is the first path segment
  std::chrono::milliseconds call_timeout{ports::kDefaultCallTimeout};
};

// Checks the URL's bucket, prefix and parameters (std::invalid_argument naming what is wrong).
[[nodiscard]] S3Addressing s3_addressing(const ports::BackendUrl& url);

// The percent-encoded request path of object KEY under the prefix ("/BUCKET/PREFIX/KEY" in path
// style, "/PREFIX/KEY" virtual-hosted); this is also the path SigV4 signs for S3.
[[nodiscard]] std::string s3_object_path(const S3Addressing& where, const std::string& key);

// The `s3` arm of open_object_store. Throws std::invalid_argument for a bad URL or parameter.
// Opening makes no call: the first put or get finds out whether the bucket is there.
std::unique_ptr<ports::ObjectStore> open_s3_object_store(const ports::BackendUrl& url);

}  // namespace overhead::backends
