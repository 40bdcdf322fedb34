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


def _tiny_causal_lm(out):
    """A random 1-layer GPT-2 with its LM head and a byte-level BPE trained on the LLM IAT's template."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from tests.conftest import ROOT
    from tests.hub_cache import gpt2_tokenizer

    tok = gpt2_tokenizer([(ROOT / "templates" / "bai2024_llm_iat.yaml").read_text(encoding="utf-8")], vocab_size=400)
    tok.save_pretrained(out)
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=1024, n_embd=16, n_layer=1, n_head=2,
                               bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id)).save_pretrained(out)
    return out


def test_an_llm_iat_run_reports_loading_then_each_response_and_each_continuation(tmp_path):
    """The LLM IAT reports the model's loading, then one phase over every prompt of the run (generated text) or
    every scored continuation (log-probability), with its total, advancing to it."""
    model = _tiny_causal_lm(tmp_path / "lm")
    for scoring, name, total in (("generate", "generating", 3), ("logprob", "scoring", 3 * 2 * 16)):
        seen = []
        evaluate(RunConfig(method="llm-iat", model=str(model), tests=["bai2024_age"], n_boot=100,
                           options={"llm_iat_scoring": scoring, "llm_iat_prompts": 3, "llm_iat_batch_size": 1,
                                    "llm_iat_max_new_tokens": 2}), progress=seen.append)
        assert [e.name for e in seen][0] == "loading"
        own = [e for e in seen if e.name == name]
        assert own and all(e.total == total for e in own) and own[-1].done == total
        assert [e.done for e in own] == sorted(e.done for e in own) and len(own) >= 4
        assert own[-1].item == "bai2024_age"


def test_an_llm_iat_run_in_a_pipe_prints_plain_progress_lines(tmp_path, capsys):
    """Standard error is no terminal here (as in a pipe or a log): the loading line and the responses' progress are
    plain lines, each with its count."""
    from eatlas.cli import main

    model = _tiny_causal_lm(tmp_path / "lm")
    rc = main(["run", "--method", "llm-iat", "--model", str(model), "--tests", "bai2024_age", "--db",
               str(tmp_path / "r.duckdb"), "--llm-iat-prompts", "3", "--llm-iat-batch-size", "1",
               "--llm-iat-max-new-tokens", "2", "--n-boot", "100"])
    err = capsys.readouterr().err
    assert rc == 0, err
    lines = err.splitlines()
    assert lines[0] == f"loading {model} ..."
    assert "generating 3 responses: 0/3" in lines
    assert "generating 3 responses: bai2024_age: 3/3" in " ".join(lines)


def test_the_llm_iat_log_probability_bar_advances_within_a_batch(tmp_path):
    """Every prompt of a batch read side by side (here 3 prompts, 96 continuations, in one batch of 8): the bar
    still advances after each pass of ROWS_PER_PASS continuations, never in one jump at the batch's end."""
    from eatlas.methods.llm_iat import ROWS_PER_PASS

    model = _tiny_causal_lm(tmp_path / "lm")
    seen = []
    evaluate(RunConfig(method="llm-iat", model=str(model), tests=["bai2024_age"], n_boot=100,
                       options={"llm_iat_scoring": "logprob", "llm_iat_prompts": 3, "llm_iat_batch_size": 8}),
             progress=seen.append)
    done = [e.done for e in seen if e.name == "scoring"]
    assert done[0] == 0 and done[-1] == 3 * 2 * 16
    steps = [b - a for a, b in zip(done, done[1:]) if b > a]
    assert len(steps) >= 2 and max(steps) <= ROWS_PER_PASS, done


def test_plain_lines_come_at_least_every_few_seconds_with_the_time_left():
    """In a pipe a phase whose tenth takes minutes still prints a line every PLAIN_EVERY seconds while it advances,
    with the time left at the rate so far."""
    from rich.console import Console

    from eatlas.progress import PLAIN_EVERY, _plain_line
    from eatlas.run.runner import Phase

    buf = io.StringIO()
    con, said = Console(file=buf, width=200), {}
    for t, done in ((0, 0), (PLAIN_EVERY / 2, 1), (PLAIN_EVERY, 2), (PLAIN_EVERY * 1.5, 3), (PLAIN_EVERY * 2, 4)):
        _plain_line(con, Phase("scoring", 1600, done, unit="continuations"), "scoring 1600 continuations", said, t)
    lines = buf.getvalue().splitlines()
    assert lines == ["scoring 1600 continuations: 0/1600",
                     f"scoring 1600 continuations: 2/1600 ({PLAIN_EVERY:.0f} s, about "
                     f"{PLAIN_EVERY * 1598 / 2:.0f} s left)",
                     f"scoring 1600 continuations: 4/1600 ({2 * PLAIN_EVERY:.0f} s, about "
                     f"{2 * PLAIN_EVERY * 1596 / 4:.0f} s left)"]
