// Registration of the subcommands. Each add_* function adds its subcommand(s) to `app`; when one
// runs, it stores its process exit code (0 ok, 1 failure, 2 usage) in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace overhead::cli {

void add_tokenize_command(CLI::App& app, int& exit_code);
void add_bench_tokenize_command(CLI::App& bench, int& exit_code);
void add_template_command(CLI::App& app, int& exit_code);
void add_bench_template_command(CLI::App& bench, int& exit_code);
// run, enqueue, worker, consume (run_commands.cpp)
void add_run_commands(CLI::App& app, int& exit_code);
// `status`: depth, in flight, dead letters and oldest age of queues (ports::Queue::status).
void add_status_command(CLI::App& app, int& exit_code);
void add_analyze_command(CLI::App& app, int& exit_code);
// `serve`: the OpenAI-compatible HTTP gateway (src/serve/).
void add_serve_command(CLI::App& app, int& exit_code);
void add_batch_command(CLI::App& app, int& exit_code);
// `cost`: the cost model T = E(x) + D(y|x) over shipped GPU, model and price profiles (src/cost/).
void add_cost_command(CLI::App& app, int& exit_code);
// `simulate`: the discrete-event capacity simulator over the same E fit and profiles (src/cost/).
void add_simulate_command(CLI::App& app, int& exit_code);
// `calibrate`: measures an OpenAI-compatible engine into a profile for --engine-profile.
void add_calibrate_command(CLI::App& app, int& exit_code);

// `lambda`: the consumer as an AWS Lambda custom runtime (lambda_command.cpp, aws/lambda_runtime.hpp).
void add_lambda_command(CLI::App& app, int& exit_code);
// `keys`: the gateway's API keys, create / list / revoke, in the store `serve --store` uses.
void add_keys_command(CLI::App& app, int& exit_code);
// `aws-init`: the seed's queues, DLQs, table and bucket on AWS or the emulators (aws_init.hpp).
void add_aws_init_command(CLI::App& app, int& exit_code);

}  // namespace overhead::cli
