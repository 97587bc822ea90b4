// GET /v1/usage: what the caller's key has used, summed from the records it was charged on
// (ports::KeyStore::usage): {"object":"usage","key","requests","prompt_tokens",
// "completion_tokens","cost_usd","by_model":[...],"by_day":[...]}, each bucket with the same
// sums. A key sees its own usage only; the figures are the store's, so a record still on its way
// to the store (the consumer's lag, a store outage) shows once it is stored.
#pragma once

namespace overhead::ports {
class KeyStore;
}

namespace overhead::serve::http {
class Routes;
}

namespace overhead::serve {

class KeyAdmission;

// `store` and `admission` must outlive the server.
void add_usage_routes(http::Routes& routes, ports::KeyStore& store, const KeyAdmission& admission);

}  // namespace overhead::serve
