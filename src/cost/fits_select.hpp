// Which fits.json prices a request: `--fits` may be given once per backend (one `overhead analyze`
// per run), and `--backend NAME --case N` picks the file whose runs were on that backend and that
// holds a cycle fit for that case. A fits.json names its backend by a top-level "backend" key when
// present, else by the scheme of its "source" store URL (sqlite, postgres, redis, dynamodb, mem).
// A pair that no file holds is an error that lists what every file does hold.
#pragma once

#include <string>
#include <vector>

namespace overhead::cost {

struct FitsHolding {
  std::string file, backend, source;
  std::vector<int> cases;                // cases with an OLS cycle fit (model a)
  std::vector<std::string> tokenizers;   // tokenizers of those fits, without "all"
};

// Reads each file's backend and cases. Throws CostError naming a file that cannot be read.
FitsHolding fits_holding(const std::string& file);

// The file to take E from: with `backend` empty, the only file given (several need --backend);
// else the one file whose backend is `backend` and that holds `case_number`.
std::string select_fits(const std::vector<std::string>& files, const std::string& backend, int case_number);

// "a.json: backend sqlite (sqlite:out/records.db), cases 1, 5, tokenizers phi-4" for errors.
std::string describe(const FitsHolding& h);

}  // namespace overhead::cost
