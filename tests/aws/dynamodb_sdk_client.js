// The official AWS SDK for JavaScript (@aws-sdk/client-dynamodb) as a second, independent client of
// the table the dynamodb:// store writes, for tests/aws/dynamodb_store_test.cpp:
//   node dynamodb_sdk_client.js dump ENDPOINT REGION TABLE PARTITION
//       Queries one partition (experiment_tokenizer = PARTITION) two items per page, so the SDK
//       follows LastEvaluatedKey too, and prints each item's attribute map as one JSON line,
//       exactly as it came off the wire ({"S": ...}, {"N": "..."}, {"BOOL": ...}).
//   node dynamodb_sdk_client.js put ENDPOINT REGION TABLE
//       Writes, by BatchWriteItem, an item shaped as the seed's Lambda wrote them (its 10 fields)
//       and one with every record field, the values below; the C++ test reads them back.
// Credentials come from the environment (the emulator checks no signature, the SDK still signs).
"use strict";
const { DynamoDBClient, QueryCommand, BatchWriteItemCommand } = require("@aws-sdk/client-dynamodb");

const [command, endpoint, region, table, partition] = process.argv.slice(2);
if (!command || !endpoint || !region || !table) {
  console.error("usage: node dynamodb_sdk_client.js dump|put ENDPOINT REGION TABLE [PARTITION]");
  process.exit(2);
}
const client = new DynamoDBClient({ endpoint, region, maxAttempts: 3 });

// The seed's Lambda item: its producer's payload as boto3 stores it (strings S, numbers N).
const seedItem = {
  experiment_tokenizer: { S: "sqs_10#microsoft/phi-4" },
  id: { S: "q-81" },
  model: { S: "gpt-4" },
  start_time: { S: "2025-02-01T10:00:00.000001+00:00" },
  end_time: { S: "2025-02-01T10:00:00.004321+00:00" },
  token_count: { N: "118" },
  api_input: { N: "103" },
  api_output: { N: "420" },
  experiment: { S: "sqs_10" },
  tokenizer: { S: "microsoft/phi-4" },
};

// Every field of ours, with values a float64 cannot hold (N travels as a string) and text that
// needs escaping.
const fullItem = {
  experiment_tokenizer: { S: "sdk#google/gemma-2-27b-it" },
  id: { S: "full é" },
  model: { S: "model \"q\"\n" },
  start_time: { S: "2026-12-03T12:00:00.000001Z" },
  end_time: { S: "2026-12-03T12:00:00.000002Z" },
  token_count: { N: "9007199254740993" },
  api_input: { N: "-7" },
  experiment: { S: "sdk" },
  tokenizer: { S: "google/gemma-2-27b-it" },
  case: { N: "5" },
  worker: { S: "こんにちは" },
  seq: { N: "3" },
  batch: { N: "1" },
  batch_boundary: { BOOL: true },
  received: { N: "1000000000000000001" },
  render_start: { N: "1000000000000000002" },
  render_end: { N: "1000000000000000003" },
  encode_end: { N: "1000000000000000004" },
  publish_start: { N: "1000000000000000005" },
  publish_acked: { N: "1000000000000000006" },
  input_deleted: { N: "1000000000000000007" },
  prompt_chars: { N: "12" },
  prompt_bytes: { N: "36" },
};

async function dump() {
  let start;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: "experiment_tokenizer = :p",
        ExpressionAttributeValues: { ":p": { S: partition } },
        ConsistentRead: true,
        Limit: 2,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items || []) process.stdout.write(JSON.stringify(item) + "\n");
    start = page.LastEvaluatedKey;
  } while (start);
}

async function put() {
  let requests = { [table]: [{ PutRequest: { Item: seedItem } }, { PutRequest: { Item: fullItem } }] };
  for (let attempt = 0; attempt < 5 && Object.keys(requests).length; ++attempt) {
    const res = await client.send(new BatchWriteItemCommand({ RequestItems: requests }));
    requests = res.UnprocessedItems || {};
  }
  if (Object.keys(requests).length) throw new Error("items left unprocessed");
}

(command === "dump" ? dump() : command === "put" ? put() : Promise.reject(new Error("unknown command " + command))).catch(
  (err) => {
    console.error(`dynamodb_sdk_client: ${err && err.name ? err.name + ": " : ""}${err && err.message ? err.message : err}`);
    process.exit(1);
  },
);
