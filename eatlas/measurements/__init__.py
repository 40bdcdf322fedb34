"""Measurements for Hugging Face ``evaluate`` (modules in evaluate's format, one folder each, loaded offline with
``evaluate.load(eatlas.measurement_path("weat"), "<model id>")``)."""
