// The printing of `overhead simulate`: a run of the per-request chain or of the engine simulation
// as text or JSON, and the --plots figures. The numbers come from cost/ (simulate_command.cpp runs
// it); this file only lays them out.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/simulate_command_arrivals.hpp"
#include "cli/simulate_command_options.hpp"
#include "cost/capacity.hpp"
#include "cost/fleet_cost.hpp"
#include "cost/pricing.hpp"
#include "cost/scenario.hpp"
#include "cost/simulator.hpp"

namespace overhead::cli {

// --plots DIR: queue depth over time and the latency percentiles, as SVG files.
void write_simulation_plots(const SimulateOptions& o, const cost::SimResult& r);

nlohmann::json cost_json(const cost::FleetCost& c);

// A run's stages, latencies and queue depth as text; `arrivals` says how the requests came and
// `around` what of the pipeline was modelled (empty: nothing).
void print_text(const SimulateOptions& o, const std::string& arrivals, const std::string& around, const cost::ELinear& e,
                const cost::SimResult& r);

// The engine simulation's run (or --max-rate's run at the rate found), text or JSON.
void print_engine_run(const SimulateOptions& o, const cost::Scenario& sc, const cost::ELinear& e,
                      const cost::EngineSimConfig& config, const cost::SimResult& r, const cost::MaxRate& max_rate,
                      const cost::FleetCost& c, const cost::TokenPrices& per_1m, std::size_t requests_in_workload);

// How the chain's requests arrived, for the text output.
std::string chain_arrivals_text(const SimulateOptions& o, const ArrivalReplay& replayed, const cost::SimResult& r);

// The stage chain's run as JSON.
void print_chain_json(const SimulateOptions& o, const cost::SimConfig& config, const cost::SimResult& r,
                      const ArrivalReplay& replayed, const cost::ELinear& e, int slots, const cost::FleetCost& c,
                      std::size_t requests_in_workload);

// --target-p99's plan (the fleet's cost when it was met), text or JSON.
void print_capacity_plan(const SimulateOptions& o, const cost::CapacityQuery& q, const cost::CapacityPlan& plan, int slots,
                         const cost::FleetCost& c);

}  // namespace overhead::cli
