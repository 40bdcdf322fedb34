"""A run reports its phases with totals (expanding, encoding N texts, testing M tests) to its progress callback."""
import io

import numpy as np

from eatlas.encoders import StaticEncoder
from eatlas.registry.stimuli import build_test
from eatlas.run.runner import RunConfig, evaluate


def toy_encoder():
    words = "rose tulip daisy lily ant moth wasp flea happy gentle lucky honest ugly rotten sick evil".split()
    return StaticEncoder(words, np.random.default_rng(0).normal(size=(len(words), 8)), model_id="toy",
                         family="test", fingerprint="toy", lowercase=False)


def test_the_runner_reports_each_phase_with_its_total(mini):
    seen = []
    out = evaluate(RunConfig(tests=["t1"], levels=("word", "sent"), n_samples=200, use_cache=False),
                   registry=mini.root, encoder=toy_encoder(), progress=seen.append)
    phases = list(dict.fromkeys(e.name for e in seen))
    assert phases == ["expanding", "encoding", "testing"]
    last = {e.name: e for e in seen}
    assert last["expanding"].total == 2 and last["expanding"].done == 2
    reg = mini.load()
    n_texts = len({s.text for lv in ("word", "sent") for c in build_test(reg, reg.tests["t1"], lv).concepts.values()
                   for s in c.stimuli})
    assert last["encoding"].total == n_texts and last["encoding"].done == n_texts
    assert last["testing"].total == len(out.results) == 2 and last["testing"].done == 2
    # every report of a phase carries its total, and 'done' never goes back
    for name in phases:
        evs = [e for e in seen if e.name == name]
        assert all(e.total == evs[0].total is not None for e in evs)
        assert [e.done for e in evs] == sorted(e.done for e in evs)


def test_the_cli_progress_shows_phase_totals(mini):
    from rich.console import Console

    from eatlas.cli.run_cmds import _phases, _progress

    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=150)
    with _progress(con, False) as prog:
        evaluate(RunConfig(tests=["t1"], levels=("word", "sent"), n_samples=200, use_cache=False),
                 registry=mini.root, encoder=toy_encoder(), progress=_phases(prog, "toy"))
        descs = [t.description for t in prog.tasks]
        totals = [t.total for t in prog.tasks]
    assert descs[0].startswith("expanding 2 test/level pairs") and totals[0] == 2
    assert descs[1].startswith("encoding ") and totals[1] > 0
    assert descs[2].startswith("testing 2 tests") and totals[2] == 2
    assert "?" not in "".join(descs)
