// Run ids: the name every run (`overhead run`, a `worker` process) writes into its records, so
// the records of one run can be told from those of earlier or concurrent runs of the same
// experiment in the same store. A UTC timestamp (sortable, readable) plus a random suffix (two
// runs started in the same second on different hosts still differ).
#pragma once

#include <string>
#include <string_view>

namespace overhead::pipe {

// "20261203T133000Z-1a2b3c4d": the wall-clock second it was made, then 32 random bits in hex.
[[nodiscard]] std::string new_run_id();

// Empty when `id` is usable as a run id (1..64 characters of A-Z a-z 0-9 . _ : -, so it is safe in
// file names, URLs and messages); otherwise what is wrong with it.
[[nodiscard]] std::string run_id_error(std::string_view id);

}  // namespace overhead::pipe
