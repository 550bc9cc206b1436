"""gpuscope.whatif: the same document as `gpuscope whatif --json`, and the CLI's messages for changes that cannot be."""
import json

import pytest

import gpuscope


def cli_json(cli, *args):
    return json.loads(cli(*args).stdout)


def test_whatif_of_a_trace_is_the_cli_whatif(synth, cli):
    path = synth("padded.gscope", "--kernels", "20000", "--padding-share", "0.2", "--bn-slowdown", "2", "--no-overlap")
    expected = cli_json(cli, "whatif", "--json", path, "--remove", "padding", "--scale", "normalization=0.5",
                        "--overlap-allreduce")
    w = gpuscope.whatif(gpuscope.open(path), remove=["padding"], scale={"normalization": 0.5}, overlap_allreduce=True)
    assert w == expected
    assert gpuscope.whatif(path, remove="padding", scale=["normalization=0.5"], overlap_allreduce=True) == expected
    assert w["schema"] == "gpuscope.whatif/1"
    assert w["predicted"]["simulated"] is True
    assert w["predicted"]["step_ns"] < w["replayed"]["step_ns"]
    assert w["replayed"]["error"] <= 0.02
    assert [c["change"] for c in w["changes"]] == ["--remove padding", "--scale normalization=0.5",
                                                   "--overlap-allreduce"]
    assert all(c["matched"] > 0 for c in w["changes"])
    # Each change alone, in the order applied.
    assert [e["change"] for e in w["each_change"]] == [c["change"] for c in w["changes"]]
    assert all(e["simulated"] and e["step_ns"] < w["replayed"]["step_ns"] for e in w["each_change"])


def test_whatif_without_changes_predicts_the_replay(real_trace, cli):
    path = real_trace("kineto-resnet50-v100-workers0.json.gz")
    w = gpuscope.whatif(path)
    assert w == cli_json(cli, "whatif", "--json", path)
    assert w["predicted"]["step_ns"] == w["replayed"]["step_ns"]
    assert w["changes"] == [] and w["each_change"] == []


def test_whatif_says_when_a_change_makes_the_graph_cyclic(real_trace, cli):
    path = real_trace("hta-sampled-rank0.json.gz")
    w = gpuscope.whatif(path, overlap_allreduce=True)
    assert w == cli_json(cli, "whatif", "--json", path, "--overlap-allreduce")
    assert w["predicted"]["simulated"] is False
    assert w["predicted"]["cycles"] > 0
    assert "cycle" in w["predicted"]["not_simulated"]


@pytest.mark.parametrize("kwargs, flags", [
    ({"remove": ["nosuchcategory"]}, ["--remove", "nosuchcategory"]),
    ({"scale": {"normalization": 2000}}, ["--scale", "normalization=2000.0"]),
    ({"overlap_update": True}, ["--overlap-update"]),
])
def test_whatif_errors_are_the_cli_errors(real_trace, cli, kwargs, flags):
    path = real_trace("hta-event-sync.json.gz")
    p = cli("whatif", path, *flags, check=False)
    assert p.returncode == 2
    message = p.stderr.strip().removeprefix("gpuscope: error: ")
    with pytest.raises(ValueError) as e:
        gpuscope.whatif(path, **kwargs)
    assert str(e.value) == message


def test_whatif_takes_one_trace():
    with pytest.raises(TypeError, match="one gpuscope.Trace or a path"):
        gpuscope.whatif(["a.gscope", "b.gscope"])
