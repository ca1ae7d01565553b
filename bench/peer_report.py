#!/usr/bin/env python3
"""Judges one peer run of bench/run_e2e_bench.sh: ours against zongji.

  peer_report.py WORKLOAD ZONGJI_JSON|'' CLI_JSON TOUCH_JSON MIN_RATIO

Prints one JSON line (the figures and both ratios) on stdout and a readable
line per ratio on stderr. Exit 0 when both ratios reach MIN_RATIO or there is
no zongji figure (npm could not provide it: nothing to compare), 3 otherwise.
"""
import json
import sys


def main() -> int:
    workload, zongji, cli, touch, minimum = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
    cli, touch = json.loads(cli), json.loads(touch)
    out = {"mode": "peer", "workload": workload, "canal_cli": cli, "touch_columns": touch}
    ok = True
    if zongji:
        z = json.loads(zongji)
        out["zongji"] = z
        for name, d in (("canal_cli", cli), ("touch_columns", touch)):
            ratio = d["rows_per_s"] / z["rows_per_s"]
            out[name + "_over_zongji"] = round(ratio, 2)
            met = ratio >= minimum
            ok = ok and met
            print(f"peer {workload}: {name} {d['rows_per_s']:.0f} rows/s "
                  f"(server {d['server_cpu_us_per_row']:.2f} us CPU/row), zongji {z['rows_per_s']:.0f} rows/s: "
                  f"{ratio:.2f}x (target >= {minimum:g}x: {'met' if met else 'MISSED'})", file=sys.stderr)
    else:
        print(f"peer {workload}: no zongji figure; ratios not judged", file=sys.stderr)
    print(json.dumps(out, separators=(",", ":")))
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
