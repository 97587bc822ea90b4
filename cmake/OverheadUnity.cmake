# The unity build of src/ (OVERHEAD_UNITY): the files that must stay out of their module's batches.
# Each defines, in its anonymous namespace, a name another file of the same library defines too
# (two helpers or constants of one name, each right for its own file); in one translation unit
# they would clash. Kept out, each is compiled alone, as without unity. A new clash shows as a
# "redefinition" error in `make run`'s build: rename one of the two, or list the file here.
set(overhead_unity_excluded
  backends/s3_object_store.cpp         # hint(), as dynamodb_store.cpp
  cli/serve_command.cpp                # kMaxThreads, as run_commands.cpp
  cli/simulate_command.cpp             # percentiles_json(), as cost_command.cpp
  cli/simulate_command_replay.cpp      # percentiles_json(), as cost_command.cpp
  cli/bench_template_command.cpp       # run_bench(), as bench_tokenize_command.cpp
  cost/worker_front.cpp                # struct Worker, as closed_batch.cpp
  report/cost_section.cpp              # kLeft, kWidth, as figures.cpp and simulation_figures.cpp
  report/simulation_figures.cpp        # kLeft, kTop, ..., as figures.cpp
  report/item_table.cpp                # kNan, as analysis.cpp
  serve/completion_stream.cpp)         # one_choice(), as completion_json.cpp
foreach(file IN LISTS overhead_unity_excluded)
  get_filename_component(dir ${file} DIRECTORY)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/src/${file} DIRECTORY ${CMAKE_SOURCE_DIR}/src/${dir}
                              PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endforeach()
