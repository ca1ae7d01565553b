#!/usr/bin/env python3
"""Judges the peer part of bench/run_e2e_bench.sh: ours against zongji.

  peer_report.py WORKLOAD ZONGJI_JSON|'' CLI_JSON TOUCH_JSON MIN_RATIO

Each JSON is one run's figures or a list of runs (the rounds of one
benchmark run, interleaved). Each contender is judged by its best round:
the highest rows/s and, for ours, the lowest server CPU per row; every
round's figures are printed and kept beside them. Prints one JSON line on
stdout and a readable line per ratio on stderr. Exit 0 when both ratios reach
MIN_RATIO or there is no zongji figure (npm could not provide it: nothing to
compare), 3 otherwise.
"""
import json
import sys


def best_of(runs):
    """The best figures of a list of runs (or of one run), with the rounds."""
    if isinstance(runs, dict):
        runs = [runs]
    best = dict(max(runs, key=lambda r: r["rows_per_s"]))
    if all("server_cpu_us_per_row" in r for r in runs):
        best["server_cpu_us_per_row"] = min(r["server_cpu_us_per_row"] for r in runs)
    best["rounds"] = runs
    return best


def cpu_text(d):
    cpus = [r["server_cpu_us_per_row"] for r in d["rounds"]]
    text = f"server {d['server_cpu_us_per_row']:.2f} us CPU/row"
    if len(cpus) > 1:
        text += f"; rounds {' '.join(f'{c:.2f}' for c in cpus)}"
    return text


def rate_text(d):
    rates = [r["rows_per_s"] for r in d["rounds"]]
    if len(rates) == 1:
        return f"{d['rows_per_s']:.0f} rows/s"
    return f"{d['rows_per_s']:.0f} rows/s (best of {' '.join(f'{r:.0f}' for r in rates)})"


def main() -> int:
    workload, zongji, cli, touch, minimum = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
    cli, touch = best_of(json.loads(cli)), best_of(json.loads(touch))
    out = {"mode": "peer", "workload": workload, "canal_cli": cli, "touch_columns": touch}
    ok = True
    if zongji:
        z = best_of(json.loads(zongji))
        out["zongji"] = z
        for name, d in (("canal_cli", cli), ("touch_columns", touch)):
            ratio = d["rows_per_s"] / z["rows_per_s"]
            out[name + "_over_zongji"] = round(ratio, 2)
            met = ratio >= minimum
            ok = ok and met
            print(f"peer {workload}: {name} {rate_text(d)} ({cpu_text(d)}), zongji {rate_text(z)}: "
                  f"{ratio:.2f}x (target >= {minimum:g}x: {'met' if met else 'MISSED'})", file=sys.stderr)
    else:
        for name, d in (("canal_cli", cli), ("touch_columns", touch)):
            print(f"peer {workload}: {name} {rate_text(d)} ({cpu_text(d)})", file=sys.stderr)
        print(f"peer {workload}: no zongji figure; ratios not judged", file=sys.stderr)
    firsts = [r["first_row_ms"] for r in touch["rounds"] if r.get("first_row_ms", -1) >= 0]
    if firsts:
        # From the server's process start to the first row in the client's hands (e2e_client).
        out["first_row_ms"] = min(firsts)
        print(f"peer {workload}: time to first row from canal-server's start {min(firsts):.0f} ms "
              f"(rounds {' '.join(f'{f:.0f}' for f in firsts)}; target < 100 ms)", file=sys.stderr)
    print(json.dumps(out, separators=(",", ":")))
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
