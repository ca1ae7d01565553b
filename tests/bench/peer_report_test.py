#!/usr/bin/env python3
"""bench/peer_report.py: each contender judged by its best round, every round kept.

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


def ours(rate, cpu):
    return {"rows": 1000, "seconds": 1000 / rate, "rows_per_s": rate, "server_cpu_us_per_row": cpu}


def peer(rate):
    return {"rows": 1000, "seconds": 1000 / rate, "rows_per_s": rate}


class PeerReportTest(unittest.TestCase):
    def test_best_rate_and_lowest_cpu_are_judged_and_every_round_is_kept(self):
        rc, out, err = run([peer(100), peer(120), peer(90)],
                           [ours(500, 0.72), ours(600, 0.55), ours(550, 0.53)],
                           [ours(480, 0.60), ours(470, 0.58), ours(490, 0.61)])
        self.assertEqual(rc, 0, err)
        self.assertEqual(out["zongji"]["rows_per_s"], 120)
        self.assertEqual(out["canal_cli"]["rows_per_s"], 600)
        self.assertEqual(out["canal_cli"]["server_cpu_us_per_row"], 0.53)
        self.assertEqual(out["touch_columns"]["server_cpu_us_per_row"], 0.58)
        self.assertEqual(len(out["canal_cli"]["rounds"]), 3)
        self.assertEqual(out["canal_cli_over_zongji"], 5.0)
        self.assertEqual(out["touch_columns_over_zongji"], round(490 / 120, 2))
        self.assertIn("rounds 0.72 0.55 0.53", err)

    def test_a_ratio_under_the_target_fails_even_if_one_round_of_the_peer_was_slow(self):
        # zongji's best round, not its slowest, is the bar.
        rc, out, err = run([peer(50), peer(200)], [ours(700, 0.5), ours(650, 0.5)], [ours(900, 0.5), ours(800, 0.5)])
        self.assertEqual(rc, 3)
        self.assertEqual(out["canal_cli_over_zongji"], 3.5)
        self.assertIn("MISSED", err)

    def test_one_run_as_an_object_still_reads(self):
        rc, out, err = run(peer(100), ours(500, 0.5), ours(450, 0.6))
        self.assertEqual(rc, 0, err)
        self.assertEqual(out["canal_cli"]["rounds"], [ours(500, 0.5)])
        self.assertNotIn("rounds", err)

    def test_without_zongji_nothing_is_judged_but_our_figures_are_printed(self):
        rc, out, err = run(None, [ours(500, 0.5)], [ours(450, 0.6)])
        self.assertEqual(rc, 0)
        self.assertNotIn("zongji", out)
        self.assertIn("canal_cli 500 rows/s", err)
        self.assertIn("ratios not judged", err)


if __name__ == "__main__":
    unittest.main()
