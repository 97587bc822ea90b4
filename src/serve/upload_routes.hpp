// The Uploads API's routes, as OpenAI's clients call them (`client.uploads`): POST /v1/uploads,
// POST /v1/uploads/{id}/parts (multipart, the part in `data`), POST /v1/uploads/{id}/complete
// (`part_ids` in order, optional `md5`), POST /v1/uploads/{id}/cancel. The work is
// BatchUploads' (batch_uploads.hpp); an upload belongs to the API key that created it.
#pragma once

namespace overhead::serve::http {
class Routes;
}

namespace overhead::serve {

class BatchUploads;
class KeyAdmission;

// `uploads` and `admission` must outlive the server.
void add_upload_routes(http::Routes& routes, BatchUploads& uploads, const KeyAdmission& admission);

}  // namespace overhead::serve
