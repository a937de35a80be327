#!/usr/bin/python3
"""bench/verdict_noise/rules.py (the nightly verdict rules mirrored in numpy) against the
behaviour of the C++ it names (its unit tests' cases, and what its code does where they have
none): node blame with most partners, a link named when only one partner is
low, both directions as one finding, the server's two-partner rule, each link's noise and
threshold, streaks and the drain's persistence and fraction guard; and the noise model's fit
recovers the parameters it drew from.
Usage: verdict_noise_rules_test.py BENCH_DIR"""
import math
import sys
import unittest

import numpy as np

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else "bench/verdict_noise")
import noise_model  # noqa: E402
import rules  # noqa: E402


def matrix(n, bad_cells):
    b = np.zeros((n, n), dtype=bool)
    for i, j in bad_cells:
        b[i, j] = True
    return b


class FleetFloor(unittest.TestCase):
    def test_uniform_fleet_floor_is_the_min_drop(self):
        # MAD floored at 1 %: exp(-0.03) = 0.970 > 0.9, so the 10 % drop is the floor.
        x = np.full((6, 6), 100.0)
        self.assertAlmostEqual(rules.fleet_floor(x), 90.0, places=4)

    def test_one_slow_cell_is_low_and_its_neighbours_are_not(self):
        x = np.full((6, 6), 100.0)
        x[1, 2] = 85.0
        x[3, 4] = 91.0
        low = rules.judge_low(x)
        self.assertTrue(low[1, 2])
        self.assertFalse(low[3, 4])
        self.assertEqual(int(low.sum()), 1)

    def test_absolute_check_with_a_port_rate(self):
        x = np.full((4, 4), 100.0)
        self.assertFalse(rules.judge_low(x, expected=np.full((4, 4), 110.0)).any())
        self.assertTrue(rules.judge_low(x, expected=np.full((4, 4), 112.0))[0, 1])


class Blame(unittest.TestCase):
    def test_node_low_with_most_partners_is_the_node(self):
        # node 3 of 4: its 6 cells low (blame_test NodeLowWithEveryPartner).
        bad = matrix(4, [(3, j) for j in range(3)] + [(j, 3) for j in range(3)])
        others, links = rules.blame([bad])
        self.assertEqual(others, [("node", "n3")])
        self.assertEqual(links.size, 0)

    def test_one_low_pair_both_ways_is_one_link(self):
        bad = matrix(4, [(1, 2), (2, 1)])
        others, links = rules.blame([bad])
        self.assertEqual(others, [])
        self.assertEqual([rules.link_name(c, 4, 1) for c in links], ["n1<->n2"])

    def test_half_of_the_cells_is_not_most(self):
        # 3 of 6 cells: not more than half.
        bad = matrix(4, [(0, 1), (0, 2), (0, 3)])
        others, links = rules.blame([bad])
        self.assertEqual(others, [])
        self.assertEqual(sorted(rules.link_name(c, 4, 1) for c in links), ["n0->n1", "n0->n2", "n0->n3"])

    def test_a_node_on_some_rails_is_its_nic(self):
        bad0 = matrix(4, [(3, j) for j in range(3)] + [(j, 3) for j in range(3)])
        others, _ = rules.blame([bad0, np.zeros((4, 4), dtype=bool)])
        self.assertEqual(others, [("nic", "n3 rail 0")])

    def test_most_nodes_of_one_rail_beside_a_clean_rail_is_the_rail(self):
        bad0 = rules.off_diagonal(4).copy()
        others, links = rules.blame([bad0, np.zeros((4, 4), dtype=bool)])
        self.assertEqual(others, [("rail", "rail 0")])
        self.assertEqual(links.size, 0)

    def test_two_nodes_of_four_are_not_most_of_the_rail(self):
        # Every cell but 0->1: n2 and n3 are bad with all partners (accepted at once); then n0
        # and n1 have 1 bad cell of the 2 left: 2 of 4 nodes, not most: their NICs.
        bad0 = rules.off_diagonal(4).copy()
        bad0[0, 1] = False
        others, links = rules.blame([bad0, np.zeros((4, 4), dtype=bool)])
        self.assertEqual(others, [("nic", "n2 rail 0"), ("nic", "n3 rail 0")])
        self.assertEqual([rules.link_name(c, 4, 2) for c in links], ["n1->n0 rail 0"])


    def test_every_cell_of_every_rail_is_the_fleet(self):
        others, _ = rules.blame([rules.off_diagonal(3), rules.off_diagonal(3)])
        self.assertEqual(sorted(others), [("fleet", "every node on rail 0"), ("fleet", "every node on rail 1")])


class Regressions(unittest.TestCase):
    def test_two_cells_with_one_partner_name_the_link_not_the_node(self):
        # 3 nodes: n0 has 4 cells, 2 bad (both with n1): not more than half -> the link.
        bad = matrix(3, [(0, 1), (1, 0)])
        others, links = rules.regressions([bad])
        self.assertEqual(others, [])
        self.assertEqual([rules.link_name(c, 3, 1) for c in links], ["n0<->n1"])

    def test_one_partner_both_ways_of_a_two_node_rail_is_not_a_node(self):
        # 2 nodes: each has 2 cells, both bad (more than half) but one partner only.
        others, links = rules.regressions([matrix(2, [(0, 1), (1, 0)])])
        self.assertEqual(others, [])
        self.assertEqual(links.size, 1)

    def test_node_with_two_partners(self):
        bad = matrix(3, [(0, 1), (1, 0), (0, 2)])
        others, links = rules.regressions([bad])
        self.assertEqual(others, [("node", "n0")])
        self.assertEqual(links.size, 0)


class LinkNoise(unittest.TestCase):
    def test_summary_median_and_scaled_mad(self):
        # link_noise_test: readings 10, 11, 9, 10, 30 -> median 10, MAD 1, noise 0.14826.
        med, noise = rules.link_summary(np.array([[10, 11, 9, 10, 30]], dtype=np.float64))
        self.assertAlmostEqual(med[0], 10)
        self.assertAlmostEqual(noise[0], 0.14826)

    def test_threshold_is_the_tolerance_until_min_history(self):
        np.testing.assert_allclose(rules.threshold(np.array([4, 5, 5]), np.array([0.1, 0.1, 0.01])),
                                   [0.05, 0.3, 0.05])


class Persistence(unittest.TestCase):
    def test_streaks_count_consecutive_runs(self):
        one = rules.streaks(([("node", "n1")], np.array([4, 8])), None)
        two = rules.streaks(([("node", "n1")], np.array([8, 12])), one)
        self.assertEqual(two[0], {("node", "n1"): 2})
        self.assertEqual(dict(zip(two[1].tolist(), two[2].tolist())), {8: 2, 12: 1})
        three = rules.streaks(([], np.array([12])), two)
        self.assertEqual(three[0], {})

    def test_drain_at_streak_two_and_the_fraction_guard(self):
        none = np.zeros(0, np.int64)
        self.assertEqual(rules.drain(({("node", "n1"): 1}, none, none), 8), (set(), False))
        self.assertEqual(rules.drain(({("nic", "n1 rail 2"): 2}, none, none), 8), ({"n1"}, False))
        three = {("node", "n%d" % k): 2 for k in range(3)}
        self.assertEqual(rules.drain((three, none, none), 8), (set(), True))  # 3 > 0.25 x 8


class Fit(unittest.TestCase):
    def test_fit_recovers_a_drawn_model(self):
        rng = np.random.default_rng(7)
        s, c = 40, 60
        a = rng.standard_normal(c) * 0.1
        b = rng.standard_normal(s) * 0.05
        e = rng.standard_t(3.0, (s, c)) * 0.04
        m = noise_model.fit(a[None, :] + b[:, None] + e)
        self.assertAlmostEqual(m.link_sd, 0.1, delta=0.03)
        self.assertAlmostEqual(m.night_sd, 0.05, delta=0.02)
        self.assertIn(m.df, (2.0, 3.0, 4.0))
        self.assertAlmostEqual(m.scale, 0.04, delta=0.008)

    def test_fit_separates_a_nodes_stalls_from_its_cells(self):
        rng = np.random.default_rng(11)
        s, n = 60, 8
        ends = [(i, j) for i in range(n) for j in range(n) if i != j]
        u = rng.standard_normal((s, n)) * 0.08
        e = rng.standard_normal((s, len(ends))) * 0.03
        y = np.array([[u[k, i] + u[k, j] for i, j in ends] for k in range(s)]) + e
        m = noise_model.fit(y, ends)
        self.assertAlmostEqual(m.node_sd, 0.08, delta=0.02)
        self.assertAlmostEqual(m.scale, 0.03, delta=0.01)
        self.assertEqual(noise_model.fit(y).node_sd, 0.0)

    def test_too_few_sweeps_is_an_error(self):
        with self.assertRaises(ValueError):
            noise_model.fit(np.zeros((2, 12)))
        self.assertTrue(math.isinf(noise_model.NoiseModel(0, 0, 2.0, 0.1).cell_sd()))


if __name__ == "__main__":
    unittest.main()
