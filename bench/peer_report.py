#!/usr/bin/env python3
"""Judges the peer part of bench/run_e2e_bench.sh: ours against zongji.

  peer_report.py WORKLOAD ZONGJI_JSON|'' CLI_JSON TOUCH_JSON MIN_RATIO

Each JSON is one run's figures or a list of runs (the rounds of one
benchmark run, interleaved: round i of each contender ran in the same
minutes). Each round is a cold start of every contender, so each round gives
its own ratio (ours / zongji of that round); the median round's ratio is
judged, and every round's figures are printed beside it. CPU per row is
canal-server's plus the client's (the issue's figure), median of the rounds.
Prints one JSON line on stdout and a readable line per ratio on stderr. Exit
0 when both ratios reach MIN_RATIO or there is no zongji figure (npm could
not provide it: nothing to compare), 3 otherwise.
"""
import json
import statistics
import sys


def rounds_of(runs):
    return [runs] if isinstance(runs, dict) else list(runs)


def summary(runs):
    """The median figures of a list of runs, with the rounds."""
    runs = rounds_of(runs)
    out = {"rows": runs[0]["rows"], "rows_per_s": statistics.median(r["rows_per_s"] for r in runs),
           "best_rows_per_s": max(r["rows_per_s"] for r in runs), "rounds": runs}
    if all("server_cpu_us_per_row" in r for r in runs):
        out["server_cpu_us_per_row"] = statistics.median(r["server_cpu_us_per_row"] for r in runs)
    if all("client_cpu_us_per_row" in r for r in runs):
        out["client_cpu_us_per_row"] = statistics.median(r["client_cpu_us_per_row"] for r in runs)
        out["cpu_us_per_row"] = statistics.median(
            r["server_cpu_us_per_row"] + r["client_cpu_us_per_row"] for r in runs)
    return out


def cpu_text(d):
    if "cpu_us_per_row" not in d:
        return f"server {d['server_cpu_us_per_row']:.2f} us CPU/row"
    per = [r["server_cpu_us_per_row"] + r["client_cpu_us_per_row"] for r in d["rounds"]]
    return (f"server + client {d['cpu_us_per_row']:.2f} us CPU/row (server {d['server_cpu_us_per_row']:.2f}, "
            f"client {d['client_cpu_us_per_row']:.2f}; rounds {' '.join(f'{c:.2f}' for c in per)})")


def rate_text(d):
    rates = [r["rows_per_s"] for r in d["rounds"]]
    if len(rates) == 1:
        return f"{d['rows_per_s']:.0f} rows/s"
    return f"{d['rows_per_s']:.0f} rows/s (median; rounds {' '.join(f'{r:.0f}' for r in rates)})"


def main() -> int:
    workload, zongji, cli, touch, minimum = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
    cli, touch = summary(json.loads(cli)), summary(json.loads(touch))
    out = {"mode": "peer", "workload": workload, "canal_cli": cli, "touch_columns": touch}
    ok = True
    if zongji:
        z = summary(json.loads(zongji))
        out["zongji"] = z
        for name, d in (("canal_cli", cli), ("touch_columns", touch)):
            pairs = list(zip(d["rounds"], z["rounds"]))
            per_round = [o["rows_per_s"] / p["rows_per_s"] for o, p in pairs]
            ratio = statistics.median(per_round)
            out[name + "_over_zongji"] = round(ratio, 2)
            out[name + "_over_zongji_rounds"] = [round(r, 2) for r in per_round]
            met = ratio >= minimum
            ok = ok and met
            print(f"peer {workload}: {name} {rate_text(d)} ({cpu_text(d)}), zongji from its connect "
                  f"{rate_text(z)}: {ratio:.2f}x (rounds {' '.join(f'{r:.2f}' for r in per_round)}; "
                  f"target >= {minimum:g}x: {'met' if met else 'MISSED'})", file=sys.stderr)
    else:
        for name, d in (("canal_cli", cli), ("touch_columns", touch)):
            print(f"peer {workload}: {name} {rate_text(d)} ({cpu_text(d)})", file=sys.stderr)
        print(f"peer {workload}: no zongji figure; ratios not judged", file=sys.stderr)
    firsts = [r["first_row_ms"] for r in touch["rounds"] if r.get("first_row_ms", -1) >= 0]
    if firsts:
        # From the server's process start to the first row in the client's hands (e2e_client).
        out["first_row_ms"] = statistics.median(firsts)
        print(f"peer {workload}: time to first row from canal-server's start {statistics.median(firsts):.0f} ms "
              f"(median; rounds {' '.join(f'{f:.0f}' for f in firsts)}; target < 100 ms)", file=sys.stderr)
    print(json.dumps(out, separators=(",", ":")))
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
