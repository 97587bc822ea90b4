// The simulator against measured runs it was not fitted on (tests/cost/fixtures/, made by
// scripts/make_cost_fixtures.sh): case 5 on the embedded default (and on Redis + PostgreSQL, redis/,
// and the SQS + DynamoDB emulators, sqs/) in six configurations, each run
// in several rounds back to back. On a shared 2-core machine one run of a configuration swings by
// 30% and more with the neighbours' load, so the measured figures compared are the medians over
// the rounds (rounds.tsv). The fit of the base run (1 worker, batch 10, prefetch off, half a of
// the records: its fits.json, model b per tokenizer) and its spread around that fit predict the
// total time and the p50/p99 cycle time of the others. A prediction of the fitted run itself
// would prove nothing (an OLS fit with an intercept reproduces the sum of its own data), so it is
// only a sanity check. Which figures meet 10% and which do not, and why: tests/cost/fixtures/README.md.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "cost/closed_batch.hpp"
#include "cost/replay_inputs.hpp"
#include "cost/timeline.hpp"
#include "ports/record.hpp"
#include "report/item_table.hpp"

namespace overhead::cost {
namespace {

// The embedded default's fixtures; those of Redis + PostgreSQL are in its redis/ folder.
const std::string kFixtures = std::string(OVERHEAD_SOURCE_DIR) + "/tests/cost/fixtures/";
const std::string kRedisFixtures = kFixtures + "redis/";
const std::string kSqsFixtures = kFixtures + "sqs/";

struct RunConfig {
  const char* name;
  int workers;
  std::size_t batch;
  bool prefetch;
};
constexpr RunConfig kBase = {"a_w1_b10_off", 1, 10, false};  // half a of the records, 1 worker, batch 10, no prefetch

struct Figures {
  double total_s = 0, p50_us = 0, p99_us = 0;
};

// Medians over the rounds of rounds.tsv (round, name, total_s, p50_us, p99_us).
Figures measured_medians(const std::string& dir, const std::string& name) {
  std::ifstream in(dir + "rounds.tsv");
  std::string line;
  std::vector<double> total, p50, p99;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string round, run;
    double t = 0, a = 0, b = 0;
    if (!(row >> round >> run >> t >> a >> b)) continue;
    if (run != name) continue;
    total.push_back(t);
    p50.push_back(a);
    p99.push_back(b);
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  return {median(total), median(p50), median(p99)};
}

struct Errors {
  double total = 0, p50 = 0, p99 = 0;  // predicted / measured - 1
};

// The CPU share of a fixture folder: the median other_per_item of its cpu.tsv (round, total_s,
// process and worker CPU per item, other_per_item) and the cores its runs.tsv names ("N cores").
// No cpu.tsv: off (cores 0).
CpuShare measured_share(const std::string& dir) {
  std::ifstream in(dir + "cpu.tsv");
  std::vector<double> other;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("round", 0) == 0) continue;
    std::istringstream row(line);
    double round = 0, total = 0, process = 0, worker = 0, ratio = 0;
    if (row >> round >> total >> process >> worker >> ratio) other.push_back(ratio);
  }
  CpuShare share;
  if (other.empty()) return share;
  std::sort(other.begin(), other.end());
  share.other_per_item = other.size() % 2 ? other[other.size() / 2] : (other[other.size() / 2 - 1] + other[other.size() / 2]) / 2;
  std::ifstream runs(dir + "runs.tsv");
  while (std::getline(runs, line))
    if (const auto at = line.find(" cores"); line[0] == '#' && at != std::string::npos) {
      share.cores = std::stod(line.substr(line.rfind(' ', at - 1) + 1));
      break;
    }
  return share;
}

std::vector<TimelineItem> timeline(const char* name, const std::string& dir = kFixtures) {
  return read_timeline(dir + name + ".timeline.csv.gz");
}

// Predicts `target` from the fit and spread of `fitted`; `spread` false gives E exactly as fitted
// and `turnover` false drops the batch-boundary term (the naive models).
// `against_own_run` compares with the target's kept run instead of the medians over rounds.
Errors predict(const RunConfig& target, const RunConfig& fitted, bool spread = true, bool turnover = true,
               bool against_own_run = false, const std::string& dir = kFixtures, CpuShare cpu = {}) {
  auto fits = e_batch_from_fits(dir + fitted.name + ".fits.json", 5);
  const auto base = timeline(fitted.name, dir);
  ClosedBatchConfig c;
  c.workers = target.workers;
  c.batch = target.batch;
  c.prefetch = target.prefetch;
  c.replications = 20;
  cpu.fitted_workers = fitted.workers;
  c.cpu = cpu;
  if (spread) {
    const auto pools = spread_pools(base, fits);
    c.spread = pools.plain;
    c.turnover_spread = pools.turnover;
  }
  if (!turnover)
    for (auto& [name, e] : fits) e.turnover_us = 0;
  const auto run = timeline(target.name, dir);
  const auto in = replay_items(run, fits);
  const auto p = simulate_closed_batch(in.items, in.fits, c);
  Figures m;
  if (against_own_run) {
    const auto own = measure(run);
    m = {own.total_s, own.cycle_us.p50, own.cycle_us.p99};
  } else {
    m = measured_medians(dir, target.name);
  }
  EXPECT_GT(m.total_s, 0) << target.name << ": no measured figures";
  const Errors e{p.total_s / m.total_s - 1, p.cycle_us.p50 / m.p50_us - 1, p.cycle_us.p99 / m.p99_us - 1};
  std::printf("%s%-14s from %-14s%s%s%s: total %.4f s vs %.4f (%+.1f%%), p50 %.1f us vs %.1f (%+.1f%%), p99 %.0f us vs %.0f (%+.1f%%)\n",
              dir == kFixtures ? "" : dir == kRedisFixtures ? "redis " : "sqs ", target.name, fitted.name, spread ? "" : " (no spread)", turnover ? "" : " (no turnover term)",
              cpu.cores > 0 ? (" (" + std::to_string(static_cast<int>(cpu.cores)) + " cores, x" + std::to_string(p.cpu_stretch).substr(0, 4) + ")").c_str() : "", p.total_s,
              m.total_s, 100 * e.total, p.cycle_us.p50, m.p50_us, 100 * e.p50, p.cycle_us.p99, m.p99_us, 100 * e.p99);
  return e;
}

TEST(Validation, MeasuredFiguresFollowTheAnalysisDefinitions) {
  // The same run through report::build_item_table (what `overhead analyze` fits on) and through
  // cost::measure must give the same cycles and wall time.
  const auto run = timeline(kBase.name);
  std::vector<ports::Record> records;
  for (std::size_t i = 0; i < run.size(); ++i) {
    ports::Record r;
    r.experiment = "validation";
    r.tokenizer = run[i].tokenizer;
    r.experiment_tokenizer = r.experiment + "#" + r.tokenizer;
    r.id = std::to_string(i);
    r.case_number = 5;
    r.worker = run[i].worker;
    r.seq = run[i].seq;
    r.batch = run[i].batch;
    r.batch_boundary = run[i].boundary;
    r.token_count = static_cast<std::int64_t>(run[i].tokens);
    r.received = 1'000'000 + run[i].start_us * 1000;  // 0 would read as "no stamp"
    r.input_deleted = 1'000'000 + run[i].last_us * 1000;
    records.push_back(r);
  }
  const auto table = report::build_item_table(records);
  const auto m = measure(run);
  ASSERT_EQ(table.runs.size(), 1u);
  EXPECT_NEAR(table.runs[0].wall_us / 1e6, m.total_s, 1e-9);
  for (std::size_t i = 0; i < run.size(); ++i) {
    ASSERT_EQ(std::isfinite(table.cycle_us[i]), std::isfinite(m.cycles_us[i])) << i;
    if (std::isfinite(m.cycles_us[i])) {
      EXPECT_DOUBLE_EQ(table.cycle_us[i], m.cycles_us[i]) << i;
    }
    EXPECT_EQ(table.turnover[i] != 0, m.turnover[i]) << i;
  }
}

TEST(Validation, TheFittedRunItself) {
  // Not a proof (see the top): the deterministic total of the fitted run comes out exactly.
  EXPECT_NEAR(predict(kBase, kBase, false, true, true).total, 0, 1e-3);
}

}  // namespace
}  // namespace overhead::cost

namespace overhead::cost {
namespace {

constexpr RunConfig kTargets[] = {
    {"a_w2_b10_off", 2, 10, false},  // 2 workers from the 1-worker fit
    {"a_w1_b5_off", 1, 5, false},    // batch 5 from batch 10
    {"a_w1_b10_on", 1, 10, true},    // prefetch on from off
    {"b_w1_b10_off", 1, 10, false},  // the other half of the records
    {"b_w2_b10_on", 2, 10, true},    // all at once: other half, 2 workers, prefetch on (the default)
};

// What meets 10% on these fixtures (measured on a quiet machine, load average 0.4-0.8; README.md
// beside them has the figures), against the medians over 8 rounds: the totals of batch 5, of
// prefetch on and of the other half of the records, and the p50 cycle of batch 5 and of prefetch
// on. What misses: two workers (total -35% and -40%), because on 2 cores the consumer, the
// publishers and a second busy worker slow each worker's own cycle, which a model of independent
// workers with the 1-worker E cannot know; the p50 of the other half (+16%: its prompts are
// shorter than the fit's beta carries to the median); and every p99 (-15% to -63%), the tail being
// the scheduler's.
TEST(Validation, PredictsRunsItWasNotFittedOn) {
  std::map<std::string, Errors> errors;
  for (const auto& target : kTargets) errors[target.name] = predict(target, kBase);
  for (const char* name : {"a_w1_b5_off", "a_w1_b10_on", "b_w1_b10_off"})
    EXPECT_LE(std::fabs(errors[name].total), 0.10) << name << ": total";
  for (const char* name : {"a_w1_b5_off", "a_w1_b10_on"})
    EXPECT_LE(std::fabs(errors[name].p50), 0.10) << name << ": p50 cycle";
}

TEST(Validation, NaiveModelsMiss) {
  // E as fitted, without the fitted run's spread: every item costs its mean, so the p50 lands far
  // above the measured one (most items are fast; the mean carries the rare descheduled ones) and
  // the p99 far below. The comparison above can fail, and does for this model.
  const Errors naive = predict({"b_w1_b10_off", 1, 10, false}, kBase, false);
  EXPECT_GT(naive.p50, 0.5);
  EXPECT_LT(naive.p99, -0.5);
  // Without the batch-boundary term, batch 5 costs what batch 10 does: the total falls by the
  // fitted alpha2 per extra turnover.
  const Errors with_term = predict({"a_w1_b5_off", 1, 5, false}, kBase, false);
  const Errors without = predict({"a_w1_b5_off", 1, 5, false}, kBase, false, false);
  EXPECT_LT(without.total, with_term.total);
}

// Two workers on the fixtures' 2 cores, with the consumer's and the publishers' CPU beside the
// workers' (cpu.tsv: 0.76 of the worker's per item, measured on later runs of the base
// configuration, not on these targets). Without the share the simulator runs two independent
// workers at the one-worker E and predicts -35% and -40%; with it the two workers want
// 2 x 1.76 = 3.5 cores of 2 and each runs 1.76 times slower, while the one-worker fit (1.76 of 2)
// ran unslowed. The share removes most of the miss and overshoots a_w2 a little: not everything
// the other threads do is on the workers' path at the same instant.
TEST(Validation, TwoWorkersShareTheCores) {
  const CpuShare share = measured_share(kFixtures);
  ASSERT_EQ(share.cores, 2);
  ASSERT_GT(share.other_per_item, 0.5);
  for (const RunConfig& target : {RunConfig{"a_w2_b10_off", 2, 10, false}, RunConfig{"b_w2_b10_on", 2, 10, true}}) {
    const Errors independent = predict(target, kBase);
    const Errors shared = predict(target, kBase, true, true, false, kFixtures, share);
    EXPECT_LT(independent.total, -0.30) << target.name;
    EXPECT_LT(std::fabs(shared.total), std::fabs(independent.total) / 2) << target.name;
    EXPECT_LE(std::fabs(shared.total), 0.20) << target.name;
  }
  // One worker is not slowed: 1.76 cores wanted of 2, as in the fitted run.
  const Errors one = predict({"a_w1_b5_off", 1, 5, false}, kBase, true, true, false, kFixtures, share);
  const Errors one_plain = predict({"a_w1_b5_off", 1, 5, false}, kBase);
  EXPECT_DOUBLE_EQ(one.total, one_plain.total);
}


// The same six configurations measured on Redis Streams + PostgreSQL (fixtures/redis/, made by
// `BACKEND=redis bash scripts/make_cost_fixtures.sh`), each predicted from that backend's own
// 1-worker fit, whose alpha2 carries the Redis round trips. Within 10% (redis/README.md has the
// figures): the other half of the records (total and p50) and the p50 cycle of batch 5 and of
// prefetch on. Their totals miss (+30%, -25%): each turnover is a real round trip here, and the fit's
// alpha2 over batch-10 turnovers is not what a batch-5 turnover costs, nor does the simulator's
// prefetch know the stamp patch that precedes each delete. Two workers miss as on the embedded default.
TEST(ValidationRedis, PredictsRunsItWasNotFittedOn) {
  std::map<std::string, Errors> errors;
  for (const auto& target : kTargets) errors[target.name] = predict(target, kBase, true, true, false, kRedisFixtures);
  EXPECT_LE(std::fabs(errors["b_w1_b10_off"].total), 0.10) << "b_w1_b10_off: total";
  for (const char* name : {"b_w1_b10_off", "a_w1_b5_off", "a_w1_b10_on"})
    EXPECT_LE(std::fabs(errors[name].p50), 0.10) << name << ": p50 cycle";
}

// The same six configurations on the SQS and DynamoDB emulators (fixtures/sqs/, `BACKEND=sqs bash
// scripts/make_cost_fixtures.sh`; local-aws-sqs and dynalite behind their SigV4 proxies, so the
// figures are the emulators', not AWS's). Within 10% (sqs/README.md): batch 5 and the other half of
// the records, total, p50 and p99 alike, since the emulators' per-call latency (milliseconds) dwarfs
// the machine's noise. Prefetch on (-38%) misses: the model hides one round trip per turnover,
// while local-aws-sqs answers a receive from a 10 ms polling timer and the settling chain is three
// calls; two workers miss by 12% and 40%.
TEST(ValidationSqs, PredictsRunsItWasNotFittedOn) {
  std::map<std::string, Errors> errors;
  for (const auto& target : kTargets) errors[target.name] = predict(target, kBase, true, true, false, kSqsFixtures);
  for (const char* name : {"a_w1_b5_off", "b_w1_b10_off"}) {
    EXPECT_LE(std::fabs(errors[name].total), 0.10) << name << ": total";
    EXPECT_LE(std::fabs(errors[name].p50), 0.10) << name << ": p50 cycle";
    EXPECT_LE(std::fabs(errors[name].p99), 0.10) << name << ": p99 cycle";
  }
}

}  // namespace
}  // namespace overhead::cost
