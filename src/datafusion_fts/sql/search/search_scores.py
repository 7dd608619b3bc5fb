"""``score()`` as SQL: the score of a SELECT's search expression, from its MATCHes' own
scores (DESIGN §3.2).

A search expression is any boolean expression holding MATCH predicates. Its score is
built from the same float64 additions, in the same order, as the Boolean tree of
docs/design.md "Compound queries" builds a MATCH-only tree's, so both plans of a
statement give it to the bit:

- a MATCH of the scored table: its own score; one of another table: nothing;
- ``AND``: ``0.0``, plus each part's score in order (a Boolean's MUST clauses);
- ``OR``: ``0.0``, plus the score of each part that is true, in order (its SHOULDs);
- ``NOT``, and any other predicate: nothing (a MUST_NOT; a relational filter);
- ``CASE``: the score of the branch taken; ``COALESCE``: of its first non-NULL argument.

A part that holds no MATCH of the scored table adds nothing and is left out: adding
``0.0`` to a sum that started at ``0.0`` changes none of its bits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlglot import exp

from ..text.dialect import conjuncts, disjuncts


def score_sql(node: exp.Expression, leaves: Mapping[int, str], text: Callable[[exp.Expression], str]) -> str | None:
    """The score of boolean expression ``node`` as SQL, ``leaves`` giving the score of each
    scored MATCH, by the ``id`` of the node that stands for its truth, and ``text`` the SQL
    of a condition; None where ``node`` adds nothing."""
    node = node.unnest()
    if id(node) in leaves:
        return leaves[id(node)]
    if not any(id(n) in leaves for n in node.walk()):
        return None
    if isinstance(node, exp.And):
        return _sum([score_sql(c, leaves, text) for c in conjuncts(node)])
    if isinstance(node, exp.Or):
        parts = []
        for part in disjuncts(node):
            score = score_sql(part, leaves, text)
            if score is not None:
                parts.append(f"CASE WHEN {text(part)} THEN {score} ELSE 0.0 END")
        return _sum(parts)
    if isinstance(node, exp.Case):
        branches = [(branch, score_sql(branch.args["true"], leaves, text)) for branch in node.args.get("ifs") or []]
        default = node.args.get("default")
        otherwise = score_sql(default, leaves, text) if default is not None else None
        if otherwise is None and all(score is None for _, score in branches):
            return None
        operand = node.args.get("this")
        whens = " ".join(f"WHEN {text(branch.this)} THEN {score or '0.0'}" for branch, score in branches)
        return f"CASE {text(operand) + ' ' if operand is not None else ''}{whens} ELSE {otherwise or '0.0'} END"
    if isinstance(node, exp.Coalesce):
        arguments = [node.this, *node.expressions]
        whens = " ".join(f"WHEN {text(a)} IS NOT NULL THEN {score_sql(a, leaves, text) or '0.0'}" for a in arguments)
        return f"CASE {whens} ELSE 0.0 END"
    return None


def _sum(parts: list[str | None]) -> str | None:
    """``0.0`` plus each part in order (one part alone: itself, the same bits)."""
    present = [p for p in parts if p is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return "(" + " + ".join(["0.0", *present]) + ")"


def search_formula(match: exp.Expression) -> exp.Expression:
    """The largest boolean expression around ``match`` (a MATCH, or what stands for its
    truth) that its truth flows into: up through AND, OR, NOT and parentheses, and through
    a CASE branch's or a COALESCE's value (not a CASE's condition, whose value is the
    CASE's, not a truth)."""
    node = match
    while True:
        parent = node.parent
        if isinstance(parent, (exp.And, exp.Or, exp.Not, exp.Paren, exp.Coalesce)):
            node = parent
        elif isinstance(parent, exp.If) and node.arg_key == "true" and isinstance(parent.parent, exp.Case):
            node = parent.parent
        elif isinstance(parent, exp.Case) and node.arg_key == "default":
            node = parent
        else:
            return node
