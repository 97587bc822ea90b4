// The Batch API's routes, as OpenAI's clients call them: files (POST /v1/files multipart upload
// with purpose=batch, GET /v1/files/{id}, GET /v1/files/{id}/content, DELETE /v1/files/{id}) and
// batches (POST /v1/batches, GET /v1/batches/{id}, GET /v1/batches paged by `after` and `limit`,
// POST /v1/batches/{id}/cancel). The work is the runner's (batch_runner.hpp).
//
// On a gateway with API keys, files and batches belong to the key that made them: another key
// sees none of them (404, as for an id that does not exist), a batch is refused once its key's
// budget is spent, its lines may name only the key's models, and its items are charged to the key
// (its spend and /v1/usage; not its per-minute limits, which are for interactive traffic).
#pragma once

namespace overhead::serve::http {
class Routes;
}

namespace overhead::serve {

class BatchRunner;
class KeyAdmission;

// `runner` and `admission` must outlive the server.
void add_batch_routes(http::Routes& routes, BatchRunner& runner, KeyAdmission& admission);

}  // namespace overhead::serve
