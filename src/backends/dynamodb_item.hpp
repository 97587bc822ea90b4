// A Record as a DynamoDB item and back, attribute by attribute from the record field table
// (ports/record_fields.hpp), with the seed's table's names and types:
//   text              S   (the keys experiment_tokenizer and id are the table's S hash and range keys)
//   integer           N   (decimal digits)
//   optional_integer  N, or no attribute when the value is absent (api_input/api_output without usage)
//   boolean           BOOL
//   real              N   (the shortest decimal of the double; a price in USD)
// Reading is lenient only where the seed's own items differ from ours: a missing attribute is the
// field's empty value (the seed's Lambda wrote 10 of our 24 fields), and missing experiment /
// tokenizer are taken from experiment_tokenizer ("<experiment>#<tokenizer>"). An attribute of the
// wrong type is an error naming it, never a silent zero.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "ports/record.hpp"

namespace overhead::backends {

// Appends the item's attribute map, {"experiment_tokenizer":{"S":"..."},...}, as JSON text.
void append_dynamodb_item(std::string& out, const ports::Record& r);
// A real field's N text: the shortest decimal that reads back as the same double.
[[nodiscard]] std::string dynamodb_number(double v);
// Appends {"experiment_tokenizer":{"S":"..."},"id":{"S":"..."}}.
void append_dynamodb_key(std::string& out, std::string_view experiment_tokenizer, std::string_view id);
// Appends a whole BatchWriteItem request: {"RequestItems":{"TABLE":[{"PutRequest":{"Item":...}},...]}}.
void append_batch_write_request(std::string& out, std::string_view table, std::span<const ports::Record* const> records);
// The item's size as DynamoDB counts it against its 400 KB limit (attribute names plus values).
[[nodiscard]] std::size_t dynamodb_item_size(const ports::Record& r);
// The limit itself.
inline constexpr std::size_t kDynamoDbMaxItemBytes = 400 * 1024;

// The record an item holds. Throws std::invalid_argument naming the attribute and its type when
// one does not fit its field, or when a key attribute is missing.
[[nodiscard]] ports::Record record_from_dynamodb_item(const nlohmann::json& item);

}  // namespace overhead::backends
