"""`gpuscope check --junit`: the XML parses (as CI systems read it), one testcase per check, numbers in messages."""
import xml.etree.ElementTree as ET


def test_junit_parses_with_one_testcase_per_check(synth, cli, tmp_path):
    base = synth("junit-base.gscope", "--kernels", "12000", "--gpus", "2")
    cand = synth("junit-cand.gscope", "--kernels", "12000", "--gpus", "2", "--padding-share", "0.25")
    out = tmp_path / "check.xml"
    p = cli("check", base, cand, "--max-share-increase", "padding=2", "--max-share-increase", "gemm=5",
            "--fail-on", "new-critical", "--fail-on", "new-finding", "--junit", out,
            "--allow-different-runs",  # the synth command lines differ: the padding is the change under test
            check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["step-time", "share:padding", "share:gemm", "new-critical",
                                              "new-finding"]
    assert suite.get("tests") == "5" and root.get("tests") == "5"
    failed = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert set(failed) >= {"step-time", "share:padding", "new-critical"}
    assert suite.get("failures") == str(len(failed))
    assert "points" in failed["share:padding"].get("message")
    assert "%" in failed["step-time"].get("message")
    assert "padding-hotspot" in failed["new-critical"].get("message")
    passed = [c for c in cases if c.find("failure") is None]
    assert all(c.find("system-out").text for c in passed)
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["baseline"] == base and props["candidate"] == cand
    assert props["step_threshold"].endswith("%")
