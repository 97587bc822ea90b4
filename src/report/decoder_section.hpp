// The decoder stage next to E: when records carry the D stamps (`--decoder sim:` or `openai:`),
// a report section with, per case and tokenizer, E (render + encode), TTFT, D, the output tokens
// and E's share of T = E + D. Records without a decoder give no section, so a `--decoder none`
// report is as it was.
#pragma once

#include <optional>
#include <span>

#include "ports/record.hpp"
#include "report/section.hpp"

namespace overhead::report {

// Empty when no record has a decode_end stamp.
[[nodiscard]] std::optional<ReportSection> decoder_section(std::span<const ports::Record> records);

}  // namespace overhead::report
