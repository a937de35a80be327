#!/usr/bin/python3
"""bench/scaling_report.py (bench/scaling.sh's table and fits): the fit recovers the exponent
and the factor it was given, a figure not measured ("-") is left out of its fit, one point gives
no exponent, and a table without one of the columns is refused by name.
Usage: scaling_report_test.py BENCH_DIR"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else "bench")
import scaling_report as sr  # noqa: E402


def tsv(rows, columns=sr.COLUMNS):
    f = tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False)
    f.write("\t".join(columns) + "\n")
    for r in rows:
        f.write("\t".join(str(r.get(c, "-")) for c in columns) + "\n")
    f.close()
    return f.name


def row(nodes, plan, tests, **figures):
    r = {"nodes": nodes, "plan": plan, "rails": 8, "tests": tests, "rounds": 1, "load_1m": 1.0}
    r.update(figures)
    return r


class Fit(unittest.TestCase):
    def test_recovers_exponent_and_factor(self):
        tests = [100, 1000, 10000, 100000]
        a, b = sr.fit(tests, [3e-6 * t ** 1.25 for t in tests])
        self.assertAlmostEqual(b, 1.25, places=6)
        self.assertAlmostEqual(a, 3e-6, delta=1e-9)

    def test_one_test_count_gives_no_fit(self):
        self.assertIsNone(sr.fit([500], [1.0]))
        self.assertIsNone(sr.fit([500, 500], [1.0, 2.0]))


class Fits(unittest.TestCase):
    def test_per_plan_and_per_test_at_the_largest_n(self):
        rows = sr.load(tsv([
            row(64, "all-pairs", 1000, ctl_wall_s=0.002, journal_bytes=110000),
            row(256, "all-pairs", 16000, ctl_wall_s=0.032, journal_bytes=1760000),
            row(64, "ring", 512, ctl_wall_s=0.5, journal_bytes=56320),
            row(256, "ring", 2048, ctl_wall_s=0.5, journal_bytes=225280),
        ]))
        got = {(f["plan"], f["figure"]): f for f in sr.fits(rows)}
        wall = got[("all-pairs", "ctl_wall_s")]
        self.assertAlmostEqual(wall["fit"][1], 1.0, places=6)
        self.assertAlmostEqual(wall["per_test"], 2.0)  # us/test at N=256
        self.assertEqual(wall["at_nodes"], 256)
        self.assertAlmostEqual(got[("ring", "ctl_wall_s")]["fit"][1], 0.0, places=6)  # a fixed cost
        self.assertAlmostEqual(got[("ring", "journal_bytes")]["per_test"], 110.0)
        self.assertNotIn(("ring", "ingest_sqlite_s"), got)  # not measured: no fit

    def test_a_row_not_run_is_left_out(self):
        rows = sr.load(tsv([
            row(64, "all-pairs", 1000, ingest_sqlite_s=0.1),
            row(256, "all-pairs", 16000, ingest_sqlite_s=1.6),
            row(4096, "all-pairs", 134184960, note="not run"),
        ]))
        f = next(f for f in sr.fits(rows) if f["figure"] == "ingest_sqlite_s")
        self.assertEqual(f["rows"], 2)
        self.assertEqual(f["at_nodes"], 256)
        text = "\n".join(sr.fit_lines(sr.fits(rows)))
        self.assertIn("ingest_sqlite_s", text)
        self.assertIn("100 us/test (N=256)", text)

    def test_table_has_every_column(self):
        rows = sr.load(tsv([row(64, "ring", 512, ctl_wall_s=0.1)]))
        head = sr.table(rows)[0].split()
        self.assertEqual(head, sr.COLUMNS)


class Load(unittest.TestCase):
    def test_missing_column_is_named(self):
        path = tsv([row(64, "ring", 512)], [c for c in sr.COLUMNS if c != "journal_bytes"])
        with self.assertRaisesRegex(ValueError, "no column journal_bytes"):
            sr.load(path)

    def test_short_row_is_refused(self):
        path = tsv([])
        with open(path, "a") as f:
            f.write("64\tring\n")
        with self.assertRaisesRegex(ValueError, ":2: 2 fields"):
            sr.load(path)


if __name__ == "__main__":
    unittest.main()
