// One work item's record: what the worker writes per (experiment, tokenizer, id), as the seed's
// table did, plus the stage stamps that let the analysis break each item's cost down.
// Key: (experiment_tokenizer, id), so a replay overwrites rather than duplicates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace overhead::ports {

struct Record {
  // --- the seed's fields ---
  std::string experiment_tokenizer;  // "<experiment>#<tokenizer>" (hash key)
  std::string id;                    // the source record id (range key)
  std::string model;
  std::string start_time;            // UTC ISO-8601 with microseconds, e.g. 2026-12-02T12:00:00.123456Z
  std::string end_time;
  std::int64_t token_count = 0;      // our count: rendered chat template, add_special_tokens=True
  std::optional<std::int64_t> api_input;   // usage.input of the source record, when present
  std::optional<std::int64_t> api_output;  // usage.output
  std::string experiment;
  std::string tokenizer;

  // --- ours ---
  int case_number = 0;     // 1..5, the seed's case this run was
  std::string worker;      // worker name (process/thread), unique within an experiment
  std::int64_t seq = 0;    // 0-based order of the item within its worker
  std::int64_t batch = 0;  // 0-based index of the input batch within its worker
  bool batch_boundary = false;  // true for the item at which a new input batch was taken

  // Monotonic clock stamps in nanoseconds (CLOCK_MONOTONIC, comparable within one host).
  // `received` is when the worker took the item up (never before its batch arrived).
  // 0 means "stage not taken" (e.g. no input queue in cases 1-4 gives input_deleted == 0).
  std::int64_t received = 0;
  std::int64_t render_start = 0;
  std::int64_t render_end = 0;
  std::int64_t encode_end = 0;
  std::int64_t publish_start = 0;
  std::int64_t publish_acked = 0;
  std::int64_t input_deleted = 0;

  std::int64_t prompt_chars = 0;  // Unicode code points over all message contents
  std::int64_t prompt_bytes = 0;  // UTF-8 bytes over all message contents

  // The run that wrote the record (pipe/run_id.hpp), so a report can cover one run's records of
  // an experiment that earlier runs also wrote into. Empty in rows stored before runs had ids.
  std::string run_id;

  // The decoder stage D(y|x) (ports/decoder.hpp, `--decoder`), same clock as the stamps above:
  // the call to the decoder began (decode_start), its first output token arrived (first_token),
  // its last one (decode_end); and how many tokens it produced. All 0 with `--decoder none`
  // (nothing decodes) and in rows stored before the decoder stage existed.
  std::int64_t decode_start = 0;
  std::int64_t first_token = 0;
  std::int64_t decode_end = 0;
  std::int64_t output_tokens = 0;
  // How the generation ended, as the engine said ("stop", "length", "cancelled", ...); empty
  // without a decoder. And the generated text itself, only when the run keeps it (`--store-text`):
  // the answer is the client's, not the measurement's, so by default it is not stored.
  std::string finish_reason;
  std::string text;
  // The prompt as the engine got it: how many tokens we sent (the ids, or our count of the text
  // as the engine tokenizes it: add_special_tokens=true), and how many the engine said it read
  // (usage.prompt_tokens; null when it did not say). They differ when the engine's tokenizer is
  // not ours (a wrong model, another vocabulary, a double BOS): counted as a mismatch. 0 and null
  // without a decoder that sends a prompt.
  std::int64_t prompt_tokens_sent = 0;
  std::optional<std::int64_t> engine_prompt_tokens;
  // The answer's shape, read as the gateway reads it (agent/answer_parser.hpp): its complete tool
  // calls (only when the request gave tools) and its reasoning in tokens. output_tokens - the
  // reasoning's is about the answer proper. 0 without a decoder or a parser for the template.
  std::int64_t tool_calls = 0;
  std::int64_t reasoning_tokens = 0;
  [[nodiscard]] bool prompt_tokens_mismatch() const {
    return engine_prompt_tokens && *engine_prompt_tokens != prompt_tokens_sent;
  }
  // The structured-output constraint the engine was asked to follow, from the item: "" (none),
  // "json_object", "json_schema" (response_format), "tool_required", "tool_named" (tool_choice).
  std::string constraint;

  // Who paid and what it cost. key_name: the name of the API key a gateway request was charged
  // to (never its secret); empty for a request that came in without a key, or not through a
  // gateway. cost_usd = cost_e_usd + cost_d_usd: the request priced from what was measured, E (its
  // CPU time on the worker at the worker's instance price) and D (its prefill and decode on the
  // GPU); price_source says where the prices came from. 0 and empty when the run was given no price.
  std::string key_name;
  double cost_usd = 0;
  double cost_e_usd = 0;
  double cost_d_usd = 0;
  std::string price_source;
};

// Stamps known only after a record was published: when its publish was acknowledged and when
// its input message was deleted. Added to the contract because the record itself is already on
// its way when these happen; the worker sends them afterwards (one patch per input batch) and
// the store applies them to the stored record by key.
struct StampPatch {
  std::string experiment_tokenizer;
  std::string id;
  std::int64_t publish_acked = 0;
  std::int64_t input_deleted = 0;
};

}  // namespace overhead::ports
