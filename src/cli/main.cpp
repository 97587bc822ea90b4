// `overhead`: the non-GPU path of LLM serving, measured. See README.md for the subcommands.
#include <cstdio>
#include <exception>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"overhead: tokenizer, chat templates and the serving pipeline around the GPU, measured"};
  app.require_subcommand(1);
  int exit_code = 0;
  overhead::cli::add_tokenize_command(app, exit_code);
  overhead::cli::add_run_commands(app, exit_code);
  overhead::cli::add_status_command(app, exit_code);
  overhead::cli::add_template_command(app, exit_code);
  overhead::cli::add_analyze_command(app, exit_code);
  overhead::cli::add_serve_command(app, exit_code);
  overhead::cli::add_cost_command(app, exit_code);
  overhead::cli::add_simulate_command(app, exit_code);
  overhead::cli::add_calibrate_command(app, exit_code);
  overhead::cli::add_lambda_command(app, exit_code);
  overhead::cli::add_aws_init_command(app, exit_code);
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks of single components");
  bench->require_subcommand(1);
  overhead::cli::add_bench_tokenize_command(*bench, exit_code);
  overhead::cli::add_bench_template_command(*bench, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
