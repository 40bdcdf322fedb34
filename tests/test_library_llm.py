"""The LLM IAT through the library: eatlas.run(method="llm-iat") returns Results whose default table is the
method's own (a tiny random GPT-2, as tests/test_llm_iat.py builds it)."""
from __future__ import annotations

from test_llm_iat import tiny_gpt2  # noqa: F401 - the fixture

import eatlas


def test_an_llm_iat_run_comes_back_as_results(tiny_gpt2, tmp_path):  # noqa: F811
    res = eatlas.run(str(tiny_gpt2), tests=["bai2024_racism"], method="llm-iat", llm_iat_prompts=2,
                     llm_iat_max_new_tokens=8, llm_iat_min_parse_rate=0.0, n_boot=200, progress=False)
    assert res.default_table() == "llm_iat_results" and len(res.to_pandas()) == 1
    assert {"llm_iat_prompts", "llm_iat_responses"} <= set(res.table_names)
    assert "<table" in res._repr_html_()
    db = res.save(tmp_path / "r.duckdb")
    assert eatlas.connect(db).execute("SELECT count(*) FROM llm_iat_results").fetchone()[0] == 1
