#!/usr/bin/env python3
"""bench/peer_report.py: each round its own ratio, the median round judged, every round kept.

Run by CTest (label unit): python3 tests/bench/peer_report_test.py
"""
import json
import os
import subprocess
import sys
import unittest

REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "peer_report.py")


def run(zongji, cli, touch, minimum="4"):
    args = [sys.executable, REPORT, "bulk", json.dumps(zongji) if zongji is not None else "",
            json.dumps(cli), json.dumps(touch), minimum]
    p = subprocess.run(args, capture_output=True, text=True, check=False)
    return p.returncode, json.loads(p.stdout), p.stderr


def ours(rate, cpu, client_cpu=None):
    run = {"rows": 1000, "seconds": 1000 / rate, "rows_per_s": rate, "server_cpu_us_per_row": cpu}
    if client_cpu is not None:
        run["client_cpu_us_per_row"] = client_cpu
    return run


def peer(rate):
    return {"rows": 1000, "seconds": 1000 / rate, "rows_per_s": rate}


class PeerReportTest(unittest.TestCase):
    def test_each_round_is_its_own_ratio_and_the_median_round_is_judged(self):
        rc, out, err = run([peer(100), peer(120), peer(90)],
                           [ours(500, 0.72, 0.3), ours(600, 0.55, 0.3), ours(550, 0.53, 0.2)],
                           [ours(480, 0.60, 0.2), ours(470, 0.58, 0.2), ours(490, 0.61, 0.2)])
        self.assertEqual(rc, 0, err)
        # Rounds 5.0, 5.0, 6.11: the median is 5.0.
        self.assertEqual(out["canal_cli_over_zongji_rounds"], [5.0, 5.0, 6.11])
        self.assertEqual(out["canal_cli_over_zongji"], 5.0)
        # Touch: 4.8, 3.92, 5.44: the median 4.8 (the best pairing, 490/120, would say 4.08).
        self.assertEqual(out["touch_columns_over_zongji"], 4.8)
        self.assertEqual(out["zongji"]["rows_per_s"], 100)
        self.assertEqual(out["canal_cli"]["rows_per_s"], 550)
        self.assertEqual(out["canal_cli"]["best_rows_per_s"], 600)
        self.assertEqual(out["canal_cli"]["server_cpu_us_per_row"], 0.55)
        # Server plus client, per round: 1.02, 0.85, 0.73.
        self.assertAlmostEqual(out["canal_cli"]["cpu_us_per_row"], 0.85)
        self.assertEqual(len(out["canal_cli"]["rounds"]), 3)
        self.assertIn("rounds 1.02 0.85 0.73", err)
        self.assertIn("zongji from its connect", err)

    def test_a_median_under_the_target_fails_even_if_one_round_met_it(self):
        rc, out, err = run([peer(50), peer(200), peer(200)],
                           [ours(700, 0.5), ours(650, 0.5), ours(640, 0.5)],
                           [ours(900, 0.5), ours(800, 0.5), ours(820, 0.5)])
        self.assertEqual(rc, 3)
        self.assertEqual(out["canal_cli_over_zongji_rounds"], [14.0, 3.25, 3.2])
        self.assertEqual(out["canal_cli_over_zongji"], 3.25)
        self.assertIn("MISSED", err)

    def test_one_run_as_an_object_still_reads(self):
        rc, out, err = run(peer(100), ours(500, 0.5), ours(450, 0.6))
        self.assertEqual(rc, 0, err)
        self.assertEqual(out["canal_cli"]["rounds"], [ours(500, 0.5)])
        self.assertEqual(out["canal_cli_over_zongji"], 5.0)
        self.assertIn("server 0.50 us CPU/row", err)  # no client CPU: the server's alone

    def test_without_zongji_nothing_is_judged_but_our_figures_are_printed(self):
        rc, out, err = run(None, [ours(500, 0.5)], [ours(450, 0.6)])
        self.assertEqual(rc, 0)
        self.assertNotIn("zongji", out)
        self.assertIn("canal_cli 500 rows/s", err)
        self.assertIn("ratios not judged", err)


if __name__ == "__main__":
    unittest.main()
