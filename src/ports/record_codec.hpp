// Records on the wire (log queue bodies) and on disk (CSV of case 1). JSON is written by hand
// into a reused buffer (no DOM) and read back with simdjson, because the log queue carries one
// record per item and this is on every item's path.
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ports/record.hpp"

namespace overhead::ports {

// Appends the record as one JSON object (fields named as in the seed's table plus ours).
void append_record_json(std::string& out, const Record& r);
// Appends {"stamps":[{"experiment_tokenizer":..,"id":..,"publish_acked":..,"input_deleted":..},..]}.
void append_stamps_json(std::string& out, std::span<const StampPatch> patches);

// A log-queue body: either a record or a stamp patch list.
using LogMessage = std::variant<Record, std::vector<StampPatch>>;
// Throws std::runtime_error naming `origin` when the body is neither.
LogMessage parse_log_message(std::string_view body, const std::string& origin);

// CSV with a header line; every field of the record, RFC 4180 quoting.
void write_records_csv(std::ostream& out, std::span<const Record> records);

}  // namespace overhead::ports
