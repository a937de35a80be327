#!/usr/bin/env python3
"""cmake/check-dependencies on graphs CMake itself wrote.

The fixtures (tests/testdata/cmake-graphviz/, README there) are `cmake
--graphviz` output of this tree at two commits; the forbidden edges added
below are lines in the same format (CMakeGraphVizOptions, CMake 3.25).

  python3 tests/unit/cmake/check_dependencies_test.py SOURCE_DIR
"""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import sys
import tempfile
import unittest

SOURCE = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else
                         os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DATA = os.path.join(SOURCE, "tests", "testdata", "cmake-graphviz")


def load_checker():
    path = os.path.join(SOURCE, "cmake", "check-dependencies")
    loader = importlib.machinery.SourceFileLoader("check_dependencies", path)
    spec = importlib.util.spec_from_loader("check_dependencies", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


cd = load_checker()


def read(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


def with_edges(text, *edges):
    """The graph plus `a -> b` edges written as CMake writes them (new nodes
    declared first when the graph lacks them)."""
    lines = text.rstrip().splitlines()
    assert lines[-1] == "}"
    body = lines[:-1]
    ids = {}
    for line in body:
        m = cd.NODE.match(line)
        if m:
            ids[m.group(2)] = m.group(1)
    for a, b in edges:
        for name in (a, b):
            if name not in ids:
                ids[name] = "node%d" % (1000 + len(ids))
                body.append('    "%s" [ label = "%s", shape = octagon ];' % (ids[name], name))
        body.append('    "%s" -> "%s" [ style = dotted ] // %s -> %s' % (ids[a], ids[b], a, b))
    return "\n".join(body + ["}"]) + "\n"


def violations(text):
    deps, names = cd.parse_graph(text)
    return cd.check(deps, names)


class TheTree(unittest.TestCase):
    def test_tree_passes(self):
        self.assertEqual(violations(read("tree.dot")), [])

    def test_preflight_report_model_is_below_the_agent_and_the_controller(self):
        deps, _ = cd.parse_graph(read("tree.dot"))
        self.assertIn("gdrbench_report_preflight", deps["gdrbench_agent_preflight"])
        self.assertIn("gdrbench_report_preflight", deps["gdrbench_controller_cli"])
        self.assertEqual(deps["gdrbench_report_preflight"], set())

    def test_server_and_controller_share_the_report_library(self):
        deps, _ = cd.parse_graph(read("tree.dot"))
        for user in ("gdrbench_server_history", "gdrbench_server_web", "gdrbench_controller_report",
                     "gdrbench_controller_server_client"):
            self.assertIn("gdrbench_report", deps[user], user)
        self.assertEqual(deps["gdrbench_report"], {"gdrbench_proto", "gdrbench_common"})

    def test_server_reaching_run_through_sweep_is_allowed(self):
        deps, _ = cd.parse_graph(read("tree.dot"))
        self.assertIn("gdrbench_controller_sweep", deps["gdrbench_server_sweeps"])
        self.assertIn("gdrbench_controller_run", deps["gdrbench_controller_sweep"])


class ForbiddenEdges(unittest.TestCase):
    def test_server_linking_the_cli_before_step_1_fails(self):
        found = violations(read("server-links-cli.dot"))
        self.assertIn("server-not-cli: gdrbench_server_sweeps -> gdrbench_controller_cli "
                      "(the server never links the CLI: what both use lives below both)", found)
        self.assertIn("server-not-cli: gdrbench-server -> gdrbench_server_api -> gdrbench_server_sweeps "
                      "-> gdrbench_controller_cli (the server never links the CLI: what both use "
                      "lives below both)", found)

    def test_server_linking_run_directly_fails(self):
        found = violations(with_edges(read("tree.dot"), ("gdrbench_server_api", "gdrbench_controller_run")))
        self.assertEqual(found, ["server-not-run: gdrbench_server_api -> gdrbench_controller_run "
                                 "(the server runs sweeps through controller/sweep, never drives "
                                 "rounds itself)"])

    def test_controller_linking_an_agent_library_fails(self):
        found = violations(with_edges(read("tree.dot"), ("gdrbench_controller_run", "gdrbench_agent_bench")))
        self.assertIn("controller-not-agent: gdrbench_controller_run -> gdrbench_agent_bench "
                      "(the controller never links the agent's libraries (verbs, CUDA))", found)
        # The server reaches it through controller/sweep: one more, not a different, finding.
        self.assertIn("server-not-agent: gdrbench_server_sweeps -> gdrbench_controller_sweep -> "
                      "gdrbench_controller_run -> gdrbench_agent_bench (the server never links the "
                      "agent's libraries (verbs, CUDA))", found)

    def test_hardware_library_reaching_grpc_fails(self):
        found = violations(with_edges(read("tree.dot"), ("gdrbench_agent_verbs", "gdrbench_common_rpc")))
        self.assertIn("hardware-not-grpc: gdrbench_agent_verbs -> gdrbench_common_rpc (hardware "
                      "libraries build without gRPC or protobuf (the gpu preset))", found)
        # Nothing past the first forbidden target is reported again.
        self.assertFalse([v for v in found if "gdrbench_common_rpc -> " in v], found)
        # What links verbs is reported through it: memory, bench, preflight, the tool.
        self.assertIn("hardware-not-grpc: gdrbench-preflight -> gdrbench_agent_preflight -> "
                      "gdrbench_agent_verbs -> gdrbench_common_rpc (hardware libraries build "
                      "without gRPC or protobuf (the gpu preset))", found)

    def test_hardware_library_through_a_raw_library_path_fails(self):
        found = violations(with_edges(read("tree.dot"),
                                      ("gdrbench_agent_cuda", "/usr/lib/x86_64-linux-gnu/libgrpc++.so")))
        self.assertIn("hardware-not-grpc: gdrbench_agent_cuda -> /usr/lib/x86_64-linux-gnu/libgrpc++.so "
                      "(hardware libraries build without gRPC or protobuf (the gpu preset))", found)

    def test_agent_service_may_use_grpc(self):
        deps, _ = cd.parse_graph(read("tree.dot"))
        self.assertIn("gdrbench_proto", deps["gdrbench_agent_service"])
        self.assertEqual(violations(read("tree.dot")), [])

    def test_product_linking_a_testing_library_fails(self):
        found = violations(with_edges(read("tree.dot"),
                                      ("gdrbench_controller_run", "gdrbench_controller_run_testing")))
        why = " (test doubles stay out of the shipped binaries and their libraries)"
        self.assertIn("product-not-testing: gdrbench_controller_run -> gdrbench_controller_run_testing" + why,
                      found)
        self.assertIn("product-not-testing: gdrbench -> gdrbench_controller_cli -> "
                      "gdrbench_controller_run -> gdrbench_controller_run_testing" + why, found)
        self.assertIn("product-not-testing: gdrbench-server -> gdrbench_server_api -> gdrbench_server_sweeps "
                      "-> gdrbench_controller_sweep -> gdrbench_controller_run -> "
                      "gdrbench_controller_run_testing" + why, found)

    def test_benches_and_tests_may_link_testing_libraries(self):
        text = with_edges(read("tree.dot"),
                          ("gdrbench-controller-bench", "gdrbench_controller_run_testing"),
                          ("gdrbench_controller_run_testing", "gdrbench_controller_run"))
        self.assertEqual(violations(text), [])

    def test_tests_may_link_testing_libraries_and_anything(self):
        text = with_edges(read("tree.dot"),
                          ("controller_runner_test", "gdrbench_controller_run_testing"),
                          ("gdrbench_controller_run_testing", "gdrbench_controller_run"),
                          ("agent_verbs_test", "gdrbench_proto"),
                          ("gdrbench_controller_run_test", "gdrbench_agent_verbs"),
                          ("gdrbench_server_api_test", "gdrbench_controller_cli"),
                          ("gdrbench_server_test_support", "gdrbench_controller_run_testing"))
        self.assertEqual(violations(text), [])


class TheReportLibrary(unittest.TestCase):
    BELOW = (" (the report library is below the controller, the server and the agent: proto/ and "
             "common/ only)")

    def test_report_linking_a_controller_library_fails(self):
        found = violations(with_edges(read("tree.dot"), ("gdrbench_report", "gdrbench_controller_analysis")))
        self.assertEqual(found, ["report-below-all: gdrbench_report -> gdrbench_controller_analysis" + self.BELOW])

    def test_report_reaching_the_controller_through_common_fails(self):
        text = with_edges(read("tree.dot"), ("gdrbench_report", "gdrbench_common_rpc"),
                          ("gdrbench_common_rpc", "gdrbench_controller_client"))
        self.assertIn("report-below-all: gdrbench_report -> gdrbench_common_rpc -> gdrbench_controller_client"
                      + self.BELOW, violations(text))

    def test_report_linking_a_server_library_fails(self):
        found = violations(with_edges(read("tree.dot"), ("gdrbench_report", "gdrbench_server_store")))
        self.assertEqual(found, ["report-below-all: gdrbench_report -> gdrbench_server_store" + self.BELOW])

    def test_preflight_model_linking_an_agent_library_fails(self):
        found = violations(with_edges(read("tree.dot"), ("gdrbench_report_preflight", "gdrbench_agent_topology")))
        self.assertIn("report-below-all: gdrbench_report_preflight -> gdrbench_agent_topology" + self.BELOW,
                      found)
        # The CLI links the model, so it would reach the agent through it.
        self.assertIn("controller-not-agent: gdrbench_controller_cli -> gdrbench_report_preflight -> "
                      "gdrbench_agent_topology (the controller never links the agent's libraries (verbs, CUDA))",
                      found)

    def test_preflight_model_reaching_protobuf_fails(self):
        found = violations(with_edges(read("tree.dot"), ("gdrbench_report_preflight", "gdrbench_report")))
        self.assertIn("report-preflight-not-grpc: gdrbench_report_preflight -> gdrbench_report -> gdrbench_proto "
                      "(the preflight report model builds without gRPC or protobuf (gdrbench-preflight, the gpu "
                      "preset))", found)
        self.assertIn("hardware-not-grpc: gdrbench-preflight -> gdrbench_agent_preflight -> "
                      "gdrbench_report_preflight -> gdrbench_report -> gdrbench_proto (hardware libraries build "
                      "without gRPC or protobuf (the gpu preset))", found)

    def test_report_may_link_proto_common_and_itself(self):
        text = with_edges(read("tree.dot"), ("gdrbench_report", "gdrbench_common_rpc"),
                          ("gdrbench_report", "gdrbench_report_preflight"))
        self.assertEqual(violations(text), [])

    def test_report_tests_may_link_anything(self):
        text = with_edges(read("tree.dot"), ("report_test", "gdrbench_controller_report"),
                          ("gdrbench_report_test", "gdrbench_server_web"))
        self.assertEqual(violations(text), [])


class Parsing(unittest.TestCase):
    def test_reads_every_target_of_the_fixture(self):
        deps, names = cd.parse_graph(read("tree.dot"))
        self.assertIn("gdrbench-agent", names)
        self.assertEqual(deps["gdrbench"], {"gdrbench_controller_cli"})
        self.assertNotIn("Executable", names)  # the legend is not a target

    def test_line_it_does_not_understand_is_an_error(self):
        text = read("tree.dot")
        edge = next(line for line in text.splitlines() if cd.EDGE.match(line))
        text = text.replace(edge, edge.replace(" -> ", " => ", 1), 1)
        with self.assertRaisesRegex(cd.GraphError, r"line \d+ not understood"):
            cd.parse_graph(text)

    def test_not_a_digraph_is_an_error(self):
        with self.assertRaisesRegex(cd.GraphError, "not a CMake graphviz digraph"):
            cd.parse_graph("graph G {\n}\n")
        with self.assertRaisesRegex(cd.GraphError, "not a CMake graphviz digraph"):
            cd.parse_graph("")

    def test_edge_to_an_undeclared_node_is_an_error(self):
        text = read("tree.dot").rstrip()[:-1] + '    "node3" -> "node9999"\n}\n'
        with self.assertRaisesRegex(cd.GraphError, "edge between undeclared nodes node3 -> node9999"):
            cd.parse_graph(text)

    def test_exit_codes(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.dot")
            with open(bad, "w") as f:
                f.write(with_edges(read("tree.dot"), ("gdrbench_server_api", "gdrbench_controller_run")))
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                self.assertEqual(cd.main(["--graph", os.path.join(DATA, "tree.dot")]), 0)
                self.assertEqual(cd.main(["--graph", bad]), 1)
                self.assertEqual(cd.main(["--graph", os.path.join(tmp, "absent.dot")]), 2)
            self.assertIn("FORBIDDEN server-not-run: gdrbench_server_api -> gdrbench_controller_run",
                          err.getvalue())


if __name__ == "__main__":
    unittest.main(verbosity=2)
