"""Causal language models for prompting: chat formatting, generation, log-probabilities of continuations.

A run that prompts a generative model (``eatlas run --method llm-iat``) loads its ``--model`` like any
other (``eatlas.encoders.load_encoder``: a loader entry, a folder, a ``.gguf`` file or a hub id resolved through
huggingface_hub's cache, ``eatlas.encoders.hub``) and asks :func:`causal_lm` for the model with its
language-modelling head: a GGUF file (``eatlas.encoders.gguf``) is one already; a transformers folder (a hub
id's snapshot too) is loaded again with
``AutoModelForCausalLM`` when its ``config.json`` names a causal-LM architecture (``...ForCausalLM``,
``...LMHeadModel``), and refused otherwise, never given a head it does not have. torch and transformers
are imported inside the functions that use them.

Decoding is explicit and recorded: greedy (temperature 0) by default, or sampling at a temperature with a
seed per batch (``torch.manual_seed``). Batches are padded on the left (a decoder continues from the last
real token), with an attention mask.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ..errors import EatlasError

CAUSAL_SUFFIXES = ("ForCausalLM", "LMHeadModel")


@dataclass
class Generation:
    text: str                 # the decoded continuation, special tokens removed
    n_tokens: int             # tokens generated (up to and including the end-of-sequence token)
    finished: bool            # ended with an end-of-sequence token (False: stopped at max_new_tokens)


class CausalLM:
    """A causal LM and its tokenizer. ``name``: the model as the run records it."""

    def __init__(self, model, tokenizer, *, name: str, device: str = "cpu"):
        self.model, self.tokenizer, self.name, self.device = model, tokenizer, name, device
        eos = model.generation_config.eos_token_id if getattr(model, "generation_config", None) else None
        eos = eos if eos is not None else tokenizer.eos_token_id
        n_vocab = len(tokenizer)
        # an id outside the vocabulary (a config's default left unset, e.g. GPT-2's 50256 in a smaller model) is none
        self.eos_ids = [e for e in (eos if isinstance(eos, list) else [eos]) if e is not None and 0 <= e < n_vocab]
        if not self.eos_ids and tokenizer.eos_token_id is not None:
            self.eos_ids = [tokenizer.eos_token_id]
        pad = tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else (self.eos_ids[0] if self.eos_ids else 0)

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def format(self, prompt: str, system: str | None = None) -> str:
        """The text the model reads: the tokenizer's chat template with a system and a user message and the
        assistant's turn opened, or, for a model without a chat template, the prompt and a newline."""
        if not self.has_chat_template:
            return prompt + "\n"
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        try:
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except Exception:   # noqa: BLE001 - a template without a system role raises its own error (jinja2, ValueError)
            if not system:
                raise
            return self.tokenizer.apply_chat_template(messages[1:], tokenize=False, add_generation_prompt=True)

    def _ids(self, text: str) -> list[int]:
        # the chat template already wrote the special tokens it wants; a plain prompt gets the tokenizer's own
        add = not self.has_chat_template
        return list(self.tokenizer(text, add_special_tokens=add)["input_ids"])

    def generate(self, texts: list[str], *, max_new_tokens: int, temperature: float = 0.0, seed: int = 0,
                 batch_size: int = 8, progress=None) -> list[Generation]:
        """One continuation per text, in batches; greedy when ``temperature`` is 0."""
        torch = _torch()
        out: list[Generation] = []
        for start in range(0, len(texts), batch_size):
            chunk = [self._ids(t) for t in texts[start:start + batch_size]]
            width = max(len(c) for c in chunk)
            ids = torch.tensor([[self.pad_id] * (width - len(c)) + c for c in chunk], device=self.device)
            mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in chunk], device=self.device)
            kwargs = {"do_sample": False} if temperature == 0 else {"do_sample": True, "temperature": temperature,
                                                                     "top_k": 0, "top_p": 1.0}
            torch.manual_seed(seed + start)
            with torch.inference_mode():
                gen = self.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens,
                                          pad_token_id=self.pad_id, eos_token_id=self.eos_ids or None, **kwargs)
            for row in gen[:, width:].tolist():
                n, finished = len(row), False
                for k, tok in enumerate(row):
                    if tok in self.eos_ids:
                        n, finished = k + 1, True
                        break
                text = self.tokenizer.decode(row[:n], skip_special_tokens=True)
                out.append(Generation(text=text, n_tokens=n, finished=finished))
            if progress:
                progress(len(out))
        return out

    @property
    def context_length(self) -> int | None:
        """The positions the model can read (prompt and generation together), from its config; None: unknown."""
        cfg = getattr(self.model, "config", None)
        cfg = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
        for key in ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length"):
            v = getattr(cfg, key, None)
            if isinstance(v, int) and v > 0:
                return v
        return None

    def n_tokens(self, text: str) -> int:
        """The tokens the model reads for ``text`` (as :meth:`generate` and :meth:`continuation_logprobs` encode it)."""
        return len(self._ids(text))

    def _pairs(self, contexts, continuations) -> list[tuple[list[int], int]]:
        seqs = []
        for ctx, cont in zip(contexts, continuations):
            c_ids, full = self._ids(ctx), self._ids(ctx + cont)
            if full[:len(c_ids)] != c_ids or len(full) == len(c_ids):
                full = c_ids + list(self.tokenizer(cont, add_special_tokens=False)["input_ids"])
            if not c_ids:
                raise EatlasError("an empty context cannot be scored", hint="give the model a prompt")
            if self.context_length and len(full) > self.context_length:
                raise EatlasError(f"a context and its continuation are {len(full)} tokens, and model {self.name!r} "
                                  f"reads at most {self.context_length} positions", field="--model",
                                  hint="a model with a longer context, or a shorter prompt")
            seqs.append((full, len(c_ids)))
        return seqs

    def warm_up(self) -> None:
        """One forward pass over a few tokens, so that the model's first-call costs (its weights paged in, the
        kernels chosen; 50 s for SmolLM2 on a loaded 2-core machine) fall before a progress bar starts, not in its
        first step, whose rate would then make the time left far too long. Whatever it raises is left to the real
        work, which keeps what it did."""
        torch = _torch()
        try:
            with torch.inference_mode():
                self.model(input_ids=torch.tensor([[self.pad_id] * 4], device=self.device))
        except Exception:   # noqa: BLE001, S110 - the work that follows meets the same error and reports it
            pass

    def continuation_logprobs(self, contexts: list[str], continuations: list[str], *, batch_size: int = 16,
                              shared: list[str] | None = None, progress=None, prompts_per_pass: int = 32,
                              rows_per_pass: int = 256) -> np.ndarray:
        """log P(continuation | context) for each pair: the sum of the log-probabilities of the continuation's
        tokens. The pair is tokenized as one text; where the context's own tokens are not a prefix of it (a
        token merged across the boundary), the two are tokenized apart and joined.

        ``shared``: per pair, a text its context begins with (e.g. the prompt several attribute words follow).
        Pairs with the same shared text are scored together: the tokens all their sequences begin with (found on
        the token ids) are read once, ``prompts_per_pass`` such prefixes side by side (left-padded, positions
        counted from each one's first token), and the model's cache of them (past key values) is reused for every
        sequence, which then reads only its own few tokens (``rows_per_pass`` at a time); log-softmax is taken only
        at the continuation's positions. Without ``shared`` each context is its own prefix. The values agree with
        :meth:`continuation_logprobs_whole` up to float rounding. ``progress(done)``: pairs scored so far, called
        after each pass of ``rows_per_pass`` sequences (so a bar advances every few seconds, not once a chunk)."""
        seqs = self._pairs(contexts, continuations)
        out = np.empty(len(seqs))
        groups: dict[str, list[int]] = {}
        for i, key in enumerate(shared if shared is not None else contexts):
            groups.setdefault(key, []).append(i)
        todo = list(groups.values())
        done = 0

        def tick(n: int) -> None:
            nonlocal done
            done += n
            if progress:
                progress(done)
        for start in range(0, len(todo), max(1, prompts_per_pass)):
            chunk = todo[start:start + max(1, prompts_per_pass)]
            self._score_prefixed(seqs, chunk, out, batch_size, max(1, rows_per_pass), tick)
        return out

    def _score_prefixed(self, seqs, groups: list[list[int]], out: np.ndarray, batch_size: int,
                        rows_per_pass: int, tick=lambda n: None) -> None:
        """Score ``groups`` (lists of sequences sharing a prefix) into ``out``: their prefixes in one pass, the
        cache then expanded to every sequence of each group for the sequences' own tokens. ``tick(n)``: n more
        sequences scored."""
        torch = _torch()
        heads = []                       # (group, prefix length)
        for rows in groups:
            first = seqs[rows[0]][0]
            common = len(first)
            for i in rows[1:]:
                full, k = seqs[i][0], 0
                top = min(common, len(full))
                while k < top and full[k] == first[k]:
                    k += 1
                common = k
            # every position whose logits are read (n_ctx - 1 onwards) is in the sequences' own part
            n_pre = min(common, min(seqs[i][1] for i in rows) - 1)
            if n_pre < 1:
                self._score_whole(seqs, rows, out, batch_size)
                tick(len(rows))
            else:
                heads.append((rows, n_pre))
        if not heads:
            return
        params = self._forward_params()
        keep = {"logits_to_keep": 1} if "logits_to_keep" in params else {}     # the prefix's logits are never read
        cache_arg = "cache" if "cache" in params else "past_key_values"       # transformers 5 renamed it
        width = max(n for _, n in heads)
        ids = torch.tensor([[self.pad_id] * (width - n) + seqs[rows[0]][0][:n] for rows, n in heads],
                           device=self.device)
        mask = torch.tensor([[0] * (width - n) + [1] * n for _, n in heads], device=self.device)
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            pre = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, **keep)
        cache = getattr(pre, "cache", None) or getattr(pre, "past_key_values", None)
        if cache is None or not hasattr(cache, "batch_select_indices"):
            for rows, _ in heads:
                self._score_whole(seqs, rows, out, batch_size)
                tick(len(rows))
            return
        jobs = [(g, i) for g, (rows, _) in enumerate(heads) for i in rows]   # (prefix row, sequence)
        for start in range(0, len(jobs), rows_per_pass):
            part = jobs[start:start + rows_per_pass]
            tails = [seqs[i][0][heads[g][1]:] for g, i in part]
            tw = max(len(t) for t in tails)
            t_ids = torch.tensor([t + [self.pad_id] * (tw - len(t)) for t in tails], device=self.device)
            owner = torch.tensor([g for g, _ in part], device=self.device)
            t_mask = torch.cat([mask[owner], torch.tensor([[1] * len(t) + [0] * (tw - len(t)) for t in tails],
                                                          device=self.device)], dim=1)
            t_pos = torch.tensor([[heads[g][1] + k for k in range(tw)] for g, _ in part], device=self.device)
            past = copy.deepcopy(cache)
            past.batch_select_indices(owner)
            with torch.inference_mode():
                logits = self.model(input_ids=t_ids, attention_mask=t_mask, position_ids=t_pos, use_cache=True,
                                    **{cache_arg: past}).logits
            # the positions read: for each sequence, those predicting its continuation's tokens
            r_idx, p_idx, targets, counts = [], [], [], []
            for r, (g, i) in enumerate(part):
                full, n_ctx = seqs[i]
                n_pre = heads[g][1]
                counts.append(len(full) - n_ctx)
                for k in range(n_ctx - 1, len(full) - 1):
                    r_idx.append(r)
                    p_idx.append(k - n_pre)
                    targets.append(full[k + 1])
            # float32 as the whole-sequence computation (a float64 log-softmax would differ from it by ~1e-5)
            picked = logits[torch.tensor(r_idx), torch.tensor(p_idx)].float()           # (tokens, vocabulary)
            tok_lp = torch.log_softmax(picked, dim=-1).gather(-1, torch.tensor(targets).unsqueeze(-1)).squeeze(-1)
            at = 0
            for (_, i), n in zip(part, counts):
                out[i] = float(tok_lp[at:at + n].sum())
                at += n
            tick(len(part))

    def _forward_params(self) -> set[str]:
        import inspect

        try:
            return set(inspect.signature(self.model.forward).parameters)
        except (TypeError, ValueError):
            return set()

    def continuation_logprobs_whole(self, contexts: list[str], continuations: list[str], *, batch_size: int = 16
                                    ) -> np.ndarray:
        """The same values as :meth:`continuation_logprobs`, computed the plain way: every sequence read whole,
        log-softmax at every position (the reference the faster path is checked against, and the benchmark's
        "before")."""
        seqs = self._pairs(contexts, continuations)
        out = np.empty(len(seqs))
        self._score_whole(seqs, list(range(len(seqs))), out, batch_size)
        return out

    def _score_whole(self, seqs, rows: list[int], out: np.ndarray, batch_size: int) -> None:
        torch = _torch()
        order = sorted(rows, key=lambda i: len(seqs[i][0]))
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            width = max(len(seqs[i][0]) for i in chunk)
            ids = torch.tensor([seqs[i][0] + [self.pad_id] * (width - len(seqs[i][0])) for i in chunk],
                               device=self.device)
            mask = torch.tensor([[1] * len(seqs[i][0]) + [0] * (width - len(seqs[i][0])) for i in chunk],
                                device=self.device)
            with torch.inference_mode():
                logits = self.model(input_ids=ids, attention_mask=mask).logits.float()
            logp = torch.log_softmax(logits[:, :-1], dim=-1)
            target = ids[:, 1:]
            tok_lp = logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
            for r, i in enumerate(chunk):
                full, n_ctx = seqs[i]
                out[i] = float(tok_lp[r, n_ctx - 1:len(full) - 1].sum())


def _torch():
    import torch
    return torch


def causal_architecture(config: dict) -> str | None:
    """The causal-LM architecture a config.json names (None: none)."""
    archs = config.get("architectures") or []
    return next((a for a in archs if isinstance(a, str) and a.endswith(CAUSAL_SUFFIXES)), None)


def causal_lm(encoder) -> CausalLM:
    """The causal LM behind a loaded encoder (refused, in one line, for a model that is not one)."""
    own = getattr(encoder, "causal_lm", None)
    if callable(own):
        return own()
    from .hf import TransformersEncoder, _json
    if not isinstance(encoder, TransformersEncoder):
        raise EatlasError(f"model {encoder.model_id!r} is not a causal language model ({type(encoder).__name__})",
                          field="--model", hint="prompting needs a causal LM: a GGUF loader entry such as "
                                                "smollm2-135m, or a transformers folder of a ...ForCausalLM model")
    config = _json(encoder.path / "config.json", required=True)
    arch = causal_architecture(config)
    if arch is None:
        raise EatlasError(f"model {encoder.model_id!r} has no language-modelling head: its config.json names "
                          f"{', '.join(config.get('architectures') or ['no architecture'])}", file=str(encoder.path),
                          field="architectures",
                          hint="prompting needs a causal LM (an architecture ending in ForCausalLM or LMHeadModel)")
    torch = _torch()
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    # the same rules as the encoder's own loading: safetensors, or pickled weights only through torch's weights_only
    # loader; a folder's (or hub repository's) code only when --trust-remote-code names it (checked when the
    # encoder was made)
    weights = encoder._weights_options() if hasattr(encoder, "_weights_options") else {}
    try:
        tok = AutoTokenizer.from_pretrained(encoder.path, local_files_only=True,
                                            trust_remote_code=encoder.trust_remote_code)
        model = AutoModelForCausalLM.from_pretrained(encoder.path, local_files_only=True, dtype=torch.float32,
                                                     trust_remote_code=encoder.trust_remote_code, **weights)
    except EatlasError:
        raise
    except Exception as e:   # noqa: BLE001 - whatever the loaders raise, one line naming the folder
        if hasattr(encoder, "_failed"):
            raise encoder._failed(e) from None
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise EatlasError(f"could not load the causal LM: {type(e).__name__}: {first[:300]}", file=str(encoder.path),
                          hint="is the folder a complete transformers model (config.json, weights, tokenizer)?"
                          ) from None
    model.to(encoder.device).eval()
    return CausalLM(model, tok, name=encoder.model_id, device=encoder.device)
