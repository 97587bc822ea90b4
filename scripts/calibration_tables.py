#!/usr/bin/env python3
"""The per-row tables of docs/cost-model.md ("Every row" and "Every row of the other engines").

Reads the calibration table and the predictions CSV that tests/cost/calibration_fit.cpp writes,
and prints one Markdown table: the fitted family's rows (TensorRT-LLM and NIM) or the other
engines' (vLLM, SGLang, LMDeploy), each row's setup from the table and its prediction:
    build/tests/cost/overhead_calibration_fit data predictions.csv --check
    scripts/calibration_tables.py data/calibration/published.csv predictions.csv base
    scripts/calibration_tables.py data/calibration/published.csv predictions.csv others
"""
import csv
import sys

OTHER_ENGINES = ("vllm", "sglang", "lmdeploy")  # as tests/cost/published_table.cpp's engine_family


def number(v):
    """A predicted figure at the precision the measured ones are given in."""
    v = float(v)
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def load_text(row):
    load = row["concurrency"]
    if load == "max":
        return f"offline, {row['requests']} requests"
    if load.startswith("batch:"):
        return f"fixed batch {load[6:]}"
    if load.startswith("rate:"):
        return f"Poisson {load[5:]}/s, {row['requests']} requests"
    return f"{load} clients"


def pair(measured, predicted):
    return f"{number(measured)} / {number(predicted)}" if measured else ""


def lengths(row):
    return f"{float(row['input_tokens']):.0f}/{float(row['output_tokens']):.0f}"


def main(table_file, predictions_file, which):
    predictions = {p["id"]: p for p in csv.DictReader(open(predictions_file))}
    other = which == "others"
    head = ["row", "split", "GPUs", "in/out", "load" if other else "concurrency", "measured tok/s", "predicted", "error"]
    head += ["TTFT ms meas/pred", "TPOT ms meas/pred"] if other else ["TPOT ms meas/pred", "TTFT ms meas/pred"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in csv.DictReader(open(table_file)):
        if row["engine"].startswith(OTHER_ENGINES) != other:
            continue
        p = predictions.get(row["id"])
        if p is None or not p["predicted_tokens_per_s"]:
            cells = [row["id"], row["split"], f"{row['gpus']} x {row['gpu']} TP{row['tp']}",
                     lengths(row), load_text(row), number(row["output_tokens_per_s"]),
                     "not priced", "", "", ""]
        else:
            ttft = pair(row["ttft_ms"], p["predicted_ttft_ms"])
            tpot = pair(row["tpot_ms"], p["predicted_tpot_ms"])
            cells = [row["id"], row["split"], f"{row['gpus']} x {row['gpu']} TP{row['tp']}",
                     lengths(row), load_text(row), number(row["output_tokens_per_s"]),
                     number(p["predicted_tokens_per_s"]), f"{float(p['error']) * 100:+.1f}%"]
            cells += [ttft, tpot] if other else [tpot, ttft]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in ("base", "others"):
        sys.exit(__doc__)
    main(*sys.argv[1:])
