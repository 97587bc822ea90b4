// `overhead calibrate`'s measuring: drives an OpenAI-compatible engine through the asynchronous
// openai decoder (one thread, every request of a wave in flight at once), with prompts of chosen
// lengths rendered and counted with our tokenizer, in rounds until the budget, each one request at
// a time at rising prompt lengths (TTFT against prompt length) and then waves of rising
// concurrency (time per output token against sequences in flight and context). The fit is
// cost/engine_profile.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost/engine_profile.hpp"

namespace overhead::cli {

struct CalibrationPlan {
  std::string base_url;  // the API base, e.g. http://127.0.0.1:8000/v1
  std::string model;     // empty: the first model /v1/models lists
  std::string tokenizer;
  int max_concurrency = 8;
  double budget_s = 120;
  std::vector<int> prefill_lengths = {16, 64, 128, 256, 512, 1024};
  // Tokens each lone prompt generates: its first token times the prefill, the rest a lone decode at
  // that prompt's context (six contexts where the waves give two; the lone step's slope in the
  // context, fitted to two points, differed by half between two calibrations).
  int prefill_output_tokens = 16;
  std::vector<int> decode_lengths = {32, 512};  // two contexts, so the per-context term is identified
  int decode_tokens = 32;
};

struct Calibration {
  nlohmann::json models;  // the engine's /v1/models
  std::string model;
  int slots = 0;            // generations the engine runs at once, when its /v1/models says (else 0)
  int batch_tokens = 0;     // tokens the engine takes in one step, when its /v1/models says (else 0)
  int max_concurrency = 0;  // the most requests in flight calibrated: the plan's, at most the slots
  std::vector<cost::PrefillSample> prefill;
  std::vector<cost::DecodeSample> decode;
  std::vector<cost::DecodeSample> lone_decode;  // the lone prompts' tokens after their first
  std::vector<cost::ConcurrentTtftSample> concurrent;  // the TTFTs of the waves of 2 or more
  nlohmann::json raw = nlohmann::json::array();  // every request: phase, concurrency, tokens, stamps
  double elapsed_s = 0;
};

// GET base_url/models. Throws std::runtime_error: unreachable, not an OpenAI list, or `model`
// (when not empty) not among its ids.
nlohmann::json fetch_models(const std::string& base_url, const std::string& model);

// The engine's slots as its /v1/models entry for `model` states them (llama.cpp-style
// "meta": {"sequences": N}); 0 when it does not.
int slots_of(const nlohmann::json& models, const std::string& model);

// The tokens the engine evaluates in one step ("meta": {"n_batch": N}, llama.cpp's name for its
// logical batch); 0 when it does not say.
int batch_tokens_of(const nlohmann::json& models, const std::string& model);

// Runs the plan, at concurrency up to the plan's maximum or the engine's slots, the smaller (more
// requests than slots only queue: they measure the queue, not the step). `progress` (may be empty) gets one line per wave. Throws std::runtime_error
// naming the failure (the engine's message for a refused request; a stream without usage).
Calibration measure_engine(const CalibrationPlan& plan, const std::function<void(const std::string&)>& progress);

}  // namespace overhead::cli
