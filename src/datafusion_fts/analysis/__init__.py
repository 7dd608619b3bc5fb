"""Text analysis: analyzer configurations and the vectorized tokenizer (docs/design.md:
"Analysis")."""

from .analyzer import (
    ANALYZER_OPTIONS,
    NAMED_ANALYZERS,
    Analyzer,
    AnalyzerConfig,
    TokenStream,
    analyzer_for,
    make_analyzer_config,
)

__all__ = [
    "ANALYZER_OPTIONS",
    "NAMED_ANALYZERS",
    "Analyzer",
    "AnalyzerConfig",
    "TokenStream",
    "analyzer_for",
    "make_analyzer_config",
]
