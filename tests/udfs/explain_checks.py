"""An independent reading of score_explain()'s JSON: recompute every node's score from
the numbers it reports, with the formulas its documentation gives, and check each one."""

from __future__ import annotations

import math
from typing import Any


def same(a: float, b: float) -> bool:
    """Bit-identical float64 (so 0.0 and -0.0 differ, NaN equals NaN)."""
    return math.copysign(1.0, a) == math.copysign(1.0, b) and (a == b or (math.isnan(a) and math.isnan(b)))


def _norm(node: dict[str, Any]) -> float:
    k1, b = float(node["k1"]), float(node["b"])
    return k1 * ((1.0 - b) + (b * float(node["dl"])) / float(node["avgdl"]))


def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _phrase_score(node: dict[str, Any], phrase: dict[str, Any]) -> float:
    """One matched phrase's unboosted score from its reported numbers (``node`` has the
    column's; ``phrase`` the phrase's own)."""
    idf_sum = 0.0
    for n_df, idf in zip(phrase["df"], phrase["idf"]):
        assert same(_idf(node["N"], n_df), float(idf))
        idf_sum = idf_sum + float(idf)
    assert same(idf_sum, float(phrase["idf_sum"]))
    weight = idf_sum * (float(node["k1"]) + 1.0)
    assert same(weight, float(phrase["weight"]))
    tf = float(phrase["tf"])
    return (weight * tf) / (tf + _norm(node))


def recompute(node: dict[str, Any]) -> float:
    """The node's score from its parts; asserts every reported intermediate number."""
    kind = node["type"]
    if kind == "terms":
        if node["matched"]:
            assert same(_norm(node), float(node["norm"])), node
        total = 0.0
        present = []
        for group in node["groups"]:
            hit = False
            for term in group["terms"]:
                if term["tf"] > 0:
                    hit = True
                    assert same(_idf(node["N"], term["df"]), float(term["idf"])), term
                    weight = float(term["idf"]) * (float(node["k1"]) + 1.0)
                    assert same(weight, float(term["weight"])), term
                    tf = float(term["tf"])
                    contribution = (weight * tf) / (tf + float(node["norm"]))
                    assert same(contribution, float(term["contribution"])), term
                    total = total + contribution
                else:
                    assert float(term["contribution"]) == 0.0
            present.append(hit)
        assert same(total, float(node["sum"])), node
        matched = all(present) and bool(present) if node["operator"] == "and" else any(present)
        assert matched == node["matched"], node
        score = total * float(node["boost"]) if matched else 0.0
    elif kind == "phrase" and "phrases" in node:  # a phrase prefix
        total = 0.0
        matched = False
        for phrase in node["phrases"]:
            if phrase["tf"] > 0:
                matched = True
                contribution = _phrase_score(node, phrase)
                assert same(contribution, float(phrase["contribution"])), phrase
                total = total + contribution
            else:
                assert float(phrase["contribution"]) == 0.0
        assert matched == node["matched"], node
        assert same(total, float(node["sum"])), node
        score = total * float(node["boost"]) if matched else 0.0
    elif kind == "phrase":
        matched = node["tf"] > 0
        assert matched == node["matched"], node
        score = _phrase_score(node, node) * float(node["boost"]) if matched else 0.0
    elif kind == "boolean":
        must = [(c["matched"], recompute(c)) for c in node["must"]]
        should = [(c["matched"], recompute(c)) for c in node["should"]]
        must_not = [c["matched"] for c in node["must_not"] if recompute(c) is not None]
        if must:
            matched = all(m for m, _ in must)
        elif should:
            matched = any(m for m, _ in should)
        else:
            matched = True
        matched = matched and not any(must_not)
        assert matched == node["matched"], node
        score = 0.0
        if matched:
            for _, s in must:
                score = score + s
            for m, s in should:
                if m:
                    score = score + s
    else:
        assert kind == "boost", node
        positive = recompute(node["positive"])
        negative = recompute(node["negative"])
        matched = node["positive"]["matched"]
        assert matched == node["matched"], node
        score = 0.0
        if matched:
            score = positive - float(node["negative_boost"]) * negative if node["negative"]["matched"] else positive
    assert same(score, float(node["score"])), (score, node)
    return score


def check_explanation(document: dict[str, Any], score: float) -> None:
    """The document's total is ``score`` exactly, and so is its recomputation."""
    assert same(float(document["score"]), score), (document["score"], score)
    total = recompute(document["explanation"])
    assert document["matched"] == document["explanation"]["matched"]
    if document["matched"]:
        assert same(total, score), (total, score)
