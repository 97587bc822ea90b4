// `overhead keys create|list|revoke` on a SQLite store, as an operator runs them: the secret is
// printed once, alone on the last line, and the store holds its SHA-256 (checked against
// OpenSSL's, not the program's own); list never shows a secret or a hash; a mistake (an unknown
// key, a taken name, a bad flag) is one line naming it and a non-zero exit.
#include <gtest/gtest.h>
#include <openssl/sha.h>
#include <sqlite3.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;

std::string sha256_hex(const std::string& s) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> d{};
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d.data());
  std::string out;
  char hex[3];
  for (const unsigned char b : d) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    out += hex;
  }
  return out;
}

std::string joined(const RunResult& r) {
  std::string out;
  for (const auto& l : r.lines) out += l + "\n";
  return out;
}

// One text cell of the first row of `sql` on the SQLite file at `path` ("" when none).
std::string sqlite_value(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_text(st, 0))
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

// Runs `sql` on the SQLite file at `path`; false (and the error printed) when it fails.
bool sqlite_exec(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  char* err = nullptr;
  const bool ok = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK &&
                  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK;
  if (!ok) ADD_FAILURE() << (err ? err : sqlite3_errmsg(db));
  sqlite3_free(err);
  sqlite3_close(db);
  return ok;
}

struct KeysStore {
  std::filesystem::path dir = temp_dir("keys");
  std::filesystem::path file = dir / "store.db";
  std::string url = "sqlite:" + file.string();
  ~KeysStore() { std::filesystem::remove_all(dir); }
};

TEST(Keys, CreatePrintsTheSecretAloneOnItsLastLineAndTheStoreHoldsOnlyItsHash) {
  KeysStore s;
  const RunResult r = run_overhead("keys create --store '" + s.url +
                                   "' --name alice --rpm 60 --tpm 5000 --budget-usd 2.5 --models llama-3,phi-4 --expires 2099-01-01");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GE(r.lines.size(), 2u);
  const std::string secret = r.lines.back();
  EXPECT_TRUE(secret.starts_with("sk-ovh-")) << secret;
  EXPECT_EQ(secret.size(), 7u + 43u) << secret;
  const std::string out = joined(r);
  EXPECT_EQ(out.find(secret), out.size() - secret.size() - 1) << "the secret is printed elsewhere too:\n" << out;
  EXPECT_NE(out.find("shown this once"), std::string::npos) << out;
  EXPECT_NE(out.find("2099-01-01T00:00:00Z"), std::string::npos) << out;
  EXPECT_NE(out.find("llama-3,phi-4"), std::string::npos) << out;
  EXPECT_EQ(r.err.find(secret), std::string::npos) << r.err;

  const std::string where = " FROM keys WHERE name = 'alice'";
  EXPECT_EQ(sqlite_value(s.file, "SELECT secret_hash" + where), sha256_hex(secret));
  EXPECT_EQ(sqlite_value(s.file, "SELECT rpm || ' ' || tpm || ' ' || budget_usd || ' ' || expires_unix" + where),
            "60 5000 2.5 4070908800");
  EXPECT_EQ(sqlite_value(s.file, "SELECT models" + where), "[\"llama-3\",\"phi-4\"]");
  EXPECT_EQ(sqlite_value(s.file, "SELECT count(*) FROM keys WHERE secret_hash LIKE '%" + secret.substr(7) + "%'"), "0");
}

TEST(Keys, ListShowsEveryKeyAndNeverASecretOrItsHash) {
  KeysStore s;
  const RunResult a = run_overhead("keys create --store '" + s.url + "' --name alice --budget-usd 1");
  const RunResult b = run_overhead("keys create --store '" + s.url + "' --name bob --models phi-4");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const RunResult revoked = run_overhead("keys revoke --store '" + s.url + "' --name bob");
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_NE(joined(revoked).find("revoked key \"bob\""), std::string::npos) << joined(revoked);

  // Two requests charged to alice, as a gateway's worker records them: her spend is their sum.
  ASSERT_TRUE(sqlite_exec(s.file, "INSERT INTO records (experiment_tokenizer, id, experiment, key_name, cost_usd)"
                                  " VALUES ('e#t', '1', 'e', 'alice', 0.25), ('e#t', '2', 'e', 'alice', 0.5)"));
  const RunResult list = run_overhead("keys list --store '" + s.url + "'");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const std::string out = joined(list) + list.err;
  ASSERT_EQ(list.lines.size(), 4u) << out;  // header, rule, alice, bob
  for (const char* column : {"name", "rpm", "tpm", "budget", "models", "created", "expires", "revoked", "spend"})
    EXPECT_NE(list.lines[0].find(column), std::string::npos) << column << ": " << list.lines[0];
  EXPECT_NE(list.lines[2].find("| alice |"), std::string::npos) << out;
  EXPECT_NE(list.lines[2].find("$1.00"), std::string::npos) << out;    // budget
  EXPECT_NE(list.lines[2].find("$0.7500"), std::string::npos) << out;  // spend
  EXPECT_NE(list.lines[3].find("$0.0000"), std::string::npos) << out;
  EXPECT_NE(list.lines[2].find("| - |"), std::string::npos) << out;  // not revoked
  EXPECT_NE(list.lines[3].find("| bob |"), std::string::npos) << out;
  EXPECT_EQ(list.lines[3].find("| - |"), std::string::npos) << out;  // revoked: a time
  for (const RunResult* created : {&a, &b}) {
    const std::string secret = created->lines.back();
    EXPECT_EQ(out.find(secret.substr(7)), std::string::npos) << out;
    EXPECT_EQ(out.find(sha256_hex(secret)), std::string::npos) << out;
    EXPECT_EQ(out.find(sha256_hex(secret).substr(0, 12)), std::string::npos) << out;
  }
}

TEST(Keys, RevokingAnUnknownKeyFailsNamingItAndRevokingTwiceIsNoError) {
  KeysStore s;
  ASSERT_EQ(run_overhead("keys create --store '" + s.url + "' --name k").exit_code, 0);
  const RunResult unknown = run_overhead("keys revoke --store '" + s.url + "' --name nobody");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no key named \"nobody\""), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("--name"), std::string::npos) << unknown.err;
  ASSERT_EQ(run_overhead("keys revoke --store '" + s.url + "' --name k").exit_code, 0);
  const RunResult again = run_overhead("keys revoke --store '" + s.url + "' --name k");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(joined(again).find("already revoked"), std::string::npos) << joined(again);
}

TEST(Keys, ATakenNameIsRefusedAndTheFirstKeyStays) {
  KeysStore s;
  const RunResult first = run_overhead("keys create --store '" + s.url + "' --name dup");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const RunResult second = run_overhead("keys create --store '" + s.url + "' --name dup");
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_TRUE(second.lines.empty()) << "a secret was printed for a key that was not stored";
  EXPECT_NE(second.err.find("\"dup\" exists already"), std::string::npos) << second.err;
  EXPECT_EQ(sqlite_value(s.file, "SELECT secret_hash FROM keys WHERE name = 'dup'"), sha256_hex(first.lines.back()));
}

TEST(Keys, BadFlagsAreUsageErrorsNamingTheFlag) {
  KeysStore s;
  const std::string create = "keys create --store '" + s.url + "' ";
  for (const auto& [args, flag] : std::initializer_list<std::pair<std::string, std::string>>{
           {create + "--name 'a b'", "--name"},
           {create + "--name k --rpm -1", "--rpm"},
           {create + "--name k --budget-usd nan", "--budget-usd"},
           {create + "--name k --expires 2027-02-30", "--expires"},
           {create + "--name k --expires 2027-01-01T12:00:00+02:00", "--expires"},
           {create + "--name k --expires 2001-01-01", "--expires"},
           {"keys create --name k", "--store"},
           {"keys revoke --store '" + s.url + "'", "--name"}}) {
    const RunResult r = run_overhead(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.lines.empty() || r.lines.back().find("sk-ovh-") == std::string::npos) << args;
  }
  EXPECT_FALSE(std::filesystem::exists(s.file)) << "a refused command made the store";
}

TEST(Keys, ListingAMissingStoreIsOneLineAndMakesNothing) {
  KeysStore s;
  const RunResult r = run_overhead("keys list --store '" + s.url + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no such file"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(s.file));
}

TEST(Keys, EachCommandHasHelp) {
  for (const char* command : {"keys", "keys create", "keys list", "keys revoke"}) {
    const RunResult r = run_overhead(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    if (std::string(command) != "keys") {
      EXPECT_NE(joined(r).find("--store"), std::string::npos) << command;
    }
  }
  const RunResult create = run_overhead("keys create --help");
  for (const char* flag : {"--name", "--rpm", "--tpm", "--budget-usd", "--models", "--expires", "YYYY-MM-DD"})
    EXPECT_NE(joined(create).find(flag), std::string::npos) << flag;
}

}  // namespace
