// A record as the worker writes one (every field set, a realistic model and timestamps), shared by
// the client benchmarks so that their figures are for the same bytes.
#pragma once

#include <string>

#include "ports/record.hpp"

namespace overhead::bench {

inline ports::Record worker_record(int i) {
  ports::Record r;
  r.experiment = "bench-case5";
  r.tokenizer = "microsoft/phi-4";
  r.experiment_tokenizer = r.experiment + "#" + r.tokenizer;
  r.id = "question-" + std::to_string(i);
  r.model = "gpt-4";
  r.start_time = "2026-12-03T12:00:00.123456Z";
  r.end_time = "2026-12-03T12:00:00.124567Z";
  r.token_count = 118 + i;
  r.api_input = 103;
  r.api_output = 420;
  r.case_number = 5;
  r.worker = "worker-0";
  r.seq = i;
  r.batch = i / 10;
  r.batch_boundary = i % 10 == 0;
  r.received = 1764763200123456789;
  r.render_start = r.received + 1000;
  r.render_end = r.received + 21000;
  r.encode_end = r.received + 61000;
  r.publish_start = r.received + 62000;
  r.prompt_chars = 512;
  r.prompt_bytes = 640;
  return r;
}

}  // namespace overhead::bench
