// Opening a backend from its URL: the one place that knows every adapter. The CLI (and any other
// front) opens the queues, the store and the object store here and hands them to the pipeline,
// which sees only the ports (ports/queue.hpp, ports/store.hpp, ports/object_store.hpp).
//
// Each function is one file (open_queue.cpp, open_store.cpp, open_object_store.cpp); the stores'
// files hold a table with one arm per scheme, the queue schemes are registered once, with their
// URL forms and sibling-name rules, in queue_schemes.cpp. A new backend is its adapter file plus
// one arm or entry there. The URL
// is parsed once (ports::BackendUrl) and the adapter checks its own parameters, so an unknown
// parameter is an error naming it. Errors never show a password.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ports/batch_store.hpp"
#include "ports/clock.hpp"
#include "ports/decoder.hpp"
#include "ports/key_store.hpp"
#include "ports/object_store.hpp"
#include "ports/queue.hpp"
#include "ports/queue_family.hpp"
#include "ports/store.hpp"

namespace overhead::backends {

// What opening may do. `create` makes a missing file-backed queue or store (a run, a worker,
// the gateway); `existing` refuses one that is not there (analyze, status), so a mistyped path is
// an error naming it, not a new empty database. Network backends are reached either way.
// `read_only` is a reader's (analyze): the store must exist and is opened so that nothing in it
// changes, not even on a foreign or corrupt file (for sqlite: SQLITE_OPEN_READONLY, no table made,
// no journal mode set; for postgres: no CREATE, ALTER or index, a READ ONLY session, a missing
// table an error; for dynamodb: create=1 refused).
enum class Access { create, existing, read_only };

// The queue schemes, their URL forms and parameters are registered in queue_schemes.cpp
// (queue_url_forms() lists them; docs/backends.md shows the same forms, checked by a test).
// `clock` replaces the backend's millisecond clock (tests); empty = the real one.
// Throws std::invalid_argument for an unknown scheme or a bad or unknown parameter, and
// ports::QueueError when `access` is `existing` and the queue's file is not there.
[[nodiscard]] std::shared_ptr<ports::Queue> open_queue(std::string_view url, ports::ClockMs clock = {},
                                                      Access access = Access::create);

// The family of the queue at `input_url` (ports/queue_family.hpp): its siblings opened by name
// under the same credentials and parameters, their names by the rules of queue_siblings.hpp, and
// whether other processes share it (the scheme's registry entry). Opens nothing itself. Throws
// std::invalid_argument for an unknown scheme.
[[nodiscard]] std::shared_ptr<const ports::QueueFamily> open_queue_family(const std::string& input_url);

// sqlite:PATH[?timeout_ms=]
// postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?table=records&schema=S&timeout_ms=]
// dynamodb://TABLE[?region=R&endpoint=URL&create=0&tokenizers=A,B&timeout_ms=]
// Throws std::invalid_argument for an unknown scheme or parameter, and ports::StoreError when
// `access` is `existing` and the store's file is not there.
[[nodiscard]] std::unique_ptr<ports::Store> open_store(std::string_view url, Access access = Access::create);

// The API keys kept beside the record store of the same URL (ports/key_store.hpp; one file,
// open_key_store.cpp): sqlite:PATH (table keys), postgres://... (table <table>_keys, same schema),
// dynamodb://TABLE (table TABLE-keys; create=1 makes it). Opens the record store of the URL first,
// so its parameters are checked and its records table is made or brought up to date. `access`:
// create or existing (a missing sqlite file is then a StoreError); read_only is refused
// (std::invalid_argument): opening makes the keys table. Throws as open_store.
[[nodiscard]] std::unique_ptr<ports::KeyStore> open_key_store(std::string_view url, Access access = Access::create);
// The Batch API's state in the database of the record store at `store_url` (same URL, other
// tables; one file, open_batch_store.cpp): sqlite:PATH (tables batch_files, batches),
// postgres://... (tables <table>_batch_files, <table>_batches, same schema), dynamodb://TABLE
// (table TABLE-batches; create=1 makes it). Opens the record store of the URL first, as
// open_key_store. Throws std::invalid_argument for a store that keeps no batches, and as open_store.
[[nodiscard]] std::unique_ptr<ports::BatchStore> open_batch_store(std::string_view store_url);

// file:DIR (DIR empty = the working directory)
// s3://BUCKET[/PREFIX][?region=R&endpoint=URL&timeout_ms=]
// Throws std::invalid_argument as above.
[[nodiscard]] std::unique_ptr<ports::ObjectStore> open_object_store(std::string_view url);

// The URL form of each scheme the functions above open, in their tables' order (for --help).
[[nodiscard]] std::vector<std::string> queue_url_forms();
[[nodiscard]] std::vector<std::string_view> store_url_forms();
[[nodiscard]] std::vector<std::string_view> object_store_url_forms();

// The decoder stage (`--decoder`, open_decoder.cpp):
// none                                       no decoder: a null pointer
// sim:prefill=TOK_S,decode=TOK_S[,ttft_ms=MS] the modelled D, waited (sim_decoder.hpp)
// openai:URL[,model=NAME][,timeout_ms=MS][,usage=required]   a real OpenAI-compatible server (openai_decoder.hpp)
// Throws std::invalid_argument naming the bad part.
[[nodiscard]] std::shared_ptr<const ports::Decoder> open_decoder(std::string_view spec);
// Checks `spec` as open_decoder would, without making the decoder (no client, no thread): for a
// flag's validation, before the command opens it once. Throws std::invalid_argument.
void check_decoder(std::string_view spec);

}  // namespace overhead::backends
