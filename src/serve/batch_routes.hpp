// The Batch API's routes, as OpenAI's clients call them: files (POST /v1/files multipart upload
// with purpose=batch, GET /v1/files/{id}, GET /v1/files/{id}/content, DELETE /v1/files/{id}) and
// batches (POST /v1/batches, GET /v1/batches/{id}, GET /v1/batches paged by `after` and `limit`,
// POST /v1/batches/{id}/cancel). The work is the runner's (batch_runner.hpp).
#pragma once

namespace overhead::serve::http {
class Routes;
}

namespace overhead::serve {

class BatchRunner;

// `runner` must outlive the server.
void add_batch_routes(http::Routes& routes, BatchRunner& runner);

}  // namespace overhead::serve
