"""Languages per row (issue 42 item 3): a column whose language is named by another column
is stemmed row by row in that language; a query names its language or is analyzed in each
of the column's languages. Every plan (segments, the unindexed tail, fresh rows, the flat
scan) answers bit for bit alike, and alike to a table whose rows were stemmed beforehand,
each in its own language, and indexed without stemming."""

from __future__ import annotations

import gc
import random

import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.analysis import AnalyzerConfig, analyzer_for, make_analyzer_config
from datafusion_fts.errors import CatalogError, InvalidArgument
from datafusion_fts.query.tree import Boolean, Match, Phrase

LANGUAGES = ["english", "french", "german"]
# (text, language): real sentences; languages as names, ISO codes, in any case, null and unknown.
ROWS = [
    ("The children were running along the beaches", "english"),
    ("She runs every morning before breakfast", "en"),
    ("Running shoes and running clothes for runners", "English"),
    ("He ran to the station and caught the trains", "english"),
    ("Les enfants couraient le long des plages", "french"),
    ("Elle court chaque matin avant le petit déjeuner", "fr"),
    ("Les chaussures de course pour les coureurs", "french"),
    ("Il a couru jusqu'à la gare pour prendre les trains", "FR"),
    ("Die Kinder liefen an den Stränden entlang", "german"),
    ("Sie läuft jeden Morgen vor dem Frühstück", "de"),
    ("Laufschuhe und Laufkleidung für Läufer", "german"),
    ("Er lief zum Bahnhof und erreichte die Züge", "German"),
    ("running with the children on the beaches", None),  # no language: the fallback
    ("Les trains partent de la gare", "klingon"),  # unknown: the fallback too
    (None, "english"),
    ("", "french"),
]
FRESH = [
    ("The runner was running faster than the trains", "english"),
    ("Les coureurs couraient plus vite que les trains", "french"),
    ("Die Läufer liefen schneller als die Züge", "de"),
]
QUERIES = [
    Match("body", "running"),
    Match("body", "couraient", language="english"),
    Match("body", "courir trains"),
    Match("body", "couraient", language="fr"),
    Match("body", "laufen Kinder"),
    Match("body", "children running", operator="and"),
    Match("body", "runnning", fuzziness=1),
    Phrase("body", "running shoes"),
    Phrase("body", "les enfants couraient", language="french"),
    Phrase("body", "die kinder liefen"),
    Phrase("body", "the trains", slop=1),
    Phrase("body", "la ga", prefix=True),
    Boolean(must=(Match("body", "trains"),), must_not=(Match("body", "gare"),)),
]
FALLBACK = "english"
SUFFIXES = ["", "s", "es", "ing", "ed", "en", "ern", "ait", "aient", "ung", "ly"]  # (rows with no or an unknown language)


def language_of(value: str | None) -> str | None:
    names = {"en": "english", "fr": "french", "de": "german"}
    if value is None:
        return None
    value = value.lower()
    value = names.get(value, value)
    return value if value in LANGUAGES else None


def options(**extra) -> dict:
    return {"language_column": "lang", "languages": LANGUAGES, "stemmer": FALLBACK, "positions": True, **extra}


def analyzer():
    return analyzer_for(make_analyzer_config(language_column="lang", languages=LANGUAGES, stemmer=FALLBACK))


def stemmed_alone(text: str | None, language: str | None) -> list[str]:
    """``text``'s terms as an analyzer stemming in ``language`` alone makes them."""
    alone = analyzer_for(make_analyzer_config(stemmer=language or FALLBACK))
    return alone.terms(text) if text else []


def row_terms(stream) -> list[list[str]]:
    vocab = stream.vocab.to_pylist()
    out: list[list[str]] = [[] for _ in range(stream.n_rows)]
    for row, term in zip(stream.row.tolist(), stream.term.tolist()):
        out[row].append(vocab[term])
    return out


def test_each_row_is_stemmed_in_its_language():
    texts, langs = zip(*ROWS)
    stream = analyzer().analyze(pa.array(texts, pa.string()), languages=pa.array(langs, pa.string()))
    assert row_terms(stream) == [stemmed_alone(t, language_of(lang)) for t, lang in ROWS]
    # (the stemmers differ on these words, so the test would see a row stemmed otherwise)
    got = row_terms(stream)
    assert "run" in got[1] and "cour" in got[4] and "lauft" in got[9]
    assert stream.dl.tolist() == [len(stemmed_alone(t, language_of(lang))) for t, lang in ROWS]
    # Without the languages (a text of no row) every row is stemmed by the fallback.
    plain = analyzer().analyze(pa.array(texts, pa.string()))
    assert row_terms(plain) == [stemmed_alone(t, None) for t in texts]


def test_a_large_batch_matches_row_by_row():
    """Pieces tokenized on threads and many (token, language) pairs: the same terms."""
    texts, langs = zip(*(ROWS * 3000))
    stream = analyzer().analyze(pa.chunked_array([pa.array(texts)]), languages=pa.chunked_array([pa.array(langs)]))
    expected = [stemmed_alone(t, language_of(lang)) for t, lang in ROWS]
    assert row_terms(stream) == expected * 3000


def test_a_large_vocabulary_in_many_languages_matches_row_by_row():
    """More (token, language) pairs possible than tokens: the pairs are found by sorting,
    not by a table of flags (analyzer._distinct), with the same terms."""
    rng = random.Random(42)
    every = make_analyzer_config(language_column="lang")
    langs = [rng.choice([*every.languages, None, "xx"]) for _ in range(400)]
    texts = [" ".join("".join(rng.choice("aeiounrstlmbcdg") for _ in range(rng.randint(4, 10))) + rng.choice(SUFFIXES)
                      for _ in range(8)) for _ in range(400)]
    stream = analyzer_for(every).analyze(pa.array(texts), languages=pa.array(langs, pa.string()))
    assert len(stream.vocab) * (len(every.languages) + 1) > 4 * len(stream.term) + (1 << 16)  # (the sorting way)
    assert row_terms(stream) == [analyzer_for(make_analyzer_config(stemmer=lang if lang != "xx" else None)).terms(t)
                                 for t, lang in zip(texts, langs)]


def test_query_text_is_analyzed_in_each_language_or_in_the_one_named():
    a = analyzer()
    assert a.variants("running", "english") == [("run",)]
    assert a.variants("running", "EN") == [("run",)]
    # english, french, german, then the fallback (english again: one list)
    assert a.variants("couraient") == [("couraient",), ("cour",)]
    # a word's terms in each language one group; "runs" is "run" in each, counted once
    assert a.match_groups("running runs") == [("run", "running")]
    assert a.match_groups("running kinder") == [("run", "running"), ("kinder", "kind")]
    with pytest.raises(InvalidArgument, match="no language 'italian'"):
        a.variants("correre", "italian")
    with pytest.raises(InvalidArgument, match="no language_column"):
        analyzer_for(make_analyzer_config()).variants("running", "english")


def test_config_options_round_trip_and_older_configs_have_none():
    config = make_analyzer_config("english", language_column="lang", languages="en, fr,german")
    assert config.languages == ("english", "french", "german") and config.stemmer == "english"
    assert AnalyzerConfig.from_json(config.to_json()) == config
    every = make_analyzer_config(language_column="lang")
    assert "english" in every.languages and len(every.languages) > 20
    plain = make_analyzer_config("english")
    assert "language_column" not in plain.to_json()  # (configs without one print as before)
    old = {k: v for k, v in plain.to_json().items()}
    assert AnalyzerConfig.from_json(old).language_column is None
    with pytest.raises(InvalidArgument, match="languages needs a language_column"):
        make_analyzer_config(languages=["english"])
    with pytest.raises(InvalidArgument, match="unknown language 'klingon'"):
        make_analyzer_config(language_column="lang", languages=["english", "klingon"])
    with pytest.raises(InvalidArgument, match="language_column must be a column name"):
        make_analyzer_config(language_column="")


def test_the_language_column_is_checked_when_the_index_is_made():
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": ["a"], "lang": ["english"], "n": [1]}))
    with pytest.raises(CatalogError, match="language_column 'missing'"):
        t.create_index("body", language_column="missing")
    with pytest.raises(CatalogError, match="language_column 'body'"):
        t.create_index("body", language_column="body")
    with pytest.raises(InvalidArgument, match="language_column 'n' is int64"):
        t.create_index("body", language_column="n")


def table_of(rows) -> pa.Table:
    texts, langs = zip(*rows) if rows else ((), ())
    return pa.table({"body": pa.array(texts, pa.string()), "lang": pa.array(langs, pa.string())})


def prestemmed(rows) -> pa.Table:
    """Each row's text replaced by its terms in its own language (the reference)."""
    return table_of([(" ".join(stemmed_alone(t, language_of(lang))) if t is not None else None, lang)
                     for t, lang in rows])


def reference_query(query, a):
    """``query`` on the prestemmed table: its text replaced by the terms the language
    analysis gives (the reference table's analyzer only splits and lowercases them)."""
    if isinstance(query, Boolean):
        return Boolean(*(tuple(reference_query(q, a) for q in qs) for qs in (query.must, query.should, query.must_not)))
    if isinstance(query, Match):
        terms = [t for word in a.match_groups(query.text, query.language) for t in word]
        return Match(query.column, " ".join(terms), operator=query.operator, fuzziness=query.fuzziness)
    variants = a.variants(query.text, query.language)
    phrases = tuple(Phrase(query.column, " ".join(v), slop=query.slop) for v in variants)
    return phrases[0] if len(phrases) == 1 else Boolean(should=phrases)


def answers(t: fts.Table, query, plan: str) -> list[tuple[int, str]] | None:
    t.db.settings.set("fts.force_plan", plan)
    try:
        found = t.search(query, limit=None, columns=[])
    except fts.PlanError:
        return None
    finally:
        t.db.settings.set("fts.force_plan", "auto")
    return [(r, repr(s)) for r, s in zip(found.column(0).to_pylist(), found.column(1).to_pylist())]


def every_plan(t: fts.Table, query) -> list[tuple[int, str]]:
    """The one answer of every plan that runs (at least the flat scan and one other)."""
    got = {plan: answers(t, query, plan) for plan in ("auto", "indexed", "hybrid", "flat_scan")}
    ran = {plan: a for plan, a in got.items() if a is not None}
    assert len(ran) >= 3 and "flat_scan" in ran, got
    first = ran["flat_scan"]
    assert all(a == first for a in ran.values()), (query, ran)
    return first


def build(db: fts.Database, name: str, data: pa.Table, tail_from: int, fresh: pa.Table, **index) -> fts.Table:
    """Segments over rows [0, tail_from), a committed tail after them, deleted rows 1 and
    6, then fresh rows."""
    t = db.create_table(name, data)
    t.build_segment("body", (0, tail_from - 1), **index)
    t.delete("_rowid IN (1, 6)")
    t.insert(fresh)
    return t


def test_every_plan_answers_alike_and_as_rows_stemmed_beforehand(tmp_path):
    db = fts.connect(str(tmp_path / "db"))
    t = build(db, "docs", table_of(ROWS), 9, table_of(FRESH), **options())
    ref = build(db, "ref", prestemmed(ROWS), 9, prestemmed(FRESH), positions=True)
    a = analyzer()
    expected = {}
    for query in QUERIES:
        got = every_plan(t, query)
        if not (isinstance(query, Match) and query.operator == "and") and not getattr(query, "prefix", False):
            # (a word's terms make one group of "and", and "la ga*" expands the prestemmed
            # text's own vocabulary: neither has a plain reference query)
            assert got == every_plan(ref, reference_query(query, a)), query
        expected[repr(query)] = got
    # What the test relies on: the languages matter, and some rows of each kind match.
    assert {r for r, _ in expected[repr(QUERIES[0])]} == {0, 2, 12, 16}
    assert expected[repr(QUERIES[1])] == []
    assert {r for r, _ in expected[repr(QUERIES[3])]} == {4, 17}
    assert {r for r, _ in expected[repr(QUERIES[5])]} == {0, 12}
    assert {r for r, _ in expected[repr(QUERIES[9])]} == {8}
    # Reopened (the fresh rows replayed from the log), then the tail and the fresh rows
    # indexed and flushed: the same answers, from an index that kept its analysis.
    del db, t, ref
    gc.collect()  # (the writer's lock goes with the database)
    again = fts.connect(str(tmp_path / "db")).table("docs")
    assert again.snapshot().meta.indexes["body"].analyzer.languages == tuple(LANGUAGES)
    assert again.count_rows() == len(ROWS) + len(FRESH) - 2
    again.optimize()
    for table in (again, fts.connect(str(tmp_path / "db")).table("docs")):
        for query in QUERIES:
            assert every_plan(table, query) == expected[repr(query)], query


def test_sql_creates_the_index_and_its_matches_use_every_language(tmp_path):
    db = fts.connect()
    db.create_table("docs", table_of(ROWS))
    db.sql("CREATE FULLTEXT INDEX ON docs (body) WITH (language_column = 'lang', languages = 'en, fr, de', "
           "stemmer = 'english')")
    got = db.sql("SELECT _rowid, score() AS s FROM docs WHERE MATCH(body, 'couraient liefen') ORDER BY _rowid")
    found = db.table("docs").search(Match("body", "couraient liefen"), columns=[])
    assert [(r["_rowid"], r["s"]) for r in got.to_pylist()] == sorted(
        zip(found.column(0).to_pylist(), found.column(1).to_pylist())
    )
    assert [r["_rowid"] for r in got.to_pylist()] == [4, 8, 11]  # (french "cour", german "lief")
    config = db.table("docs").snapshot().meta.indexes["body"].analyzer
    assert config.language_column == "lang" and config.languages == tuple(LANGUAGES)


def test_by_default_a_query_is_analyzed_in_the_languages_the_rows_name():
    """Not in all of Snowball's: German's stemmer would make 'runnings' of nothing here."""
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": ["running fast", "les chats courent", "no language"],
                                          "lang": ["en", "French", None]}))
    t.create_index("body", language_column="lang")
    assert db.manifest.tables["docs"].indexes["body"].analyzer.languages == ("english", "french")
    t.create_index("body", language_column="lang", languages=["de"])
    assert db.manifest.tables["docs"].indexes["body"].analyzer.languages == ("german",)
    empty = db.create_table("empty", pa.table({"body": pa.array([], pa.string()), "lang": pa.array([], pa.string())}))
    empty.create_index("body", language_column="lang")  # (no row names one: every language)
    assert len(db.manifest.tables["empty"].indexes["body"].analyzer.languages) > 20


def test_the_text_functions_analyze_each_row_as_its_index_does():
    """highlight, snippet, fts_match and fts_tokenize through db.sql read the row's language
    column as the index does (issue 42 item 4): every word the search matched by its stem
    in the row's language is marked, and fts_tokenize gives the index's terms of the row.
    Before, the functions were passed the index's analyzer without its language column
    (nor its segmenter): 'Les maisons et la maison' marked 'maison' only."""
    db = fts.connect()
    rows = pa.table({"id": [1, 2, 3], "lang": ["en", "de", "fr"],
                     "body": ["The runners were running fast", "Die Häuser und das Haus", "Les maisons et la maison"]})
    db.create_table("docs", rows).create_index("body", language_column="lang", stemmer="english")
    sql = ("SELECT id, highlight(body, '{q}') AS h, snippet(body, '{q}', 3) AS s, fts_match(body, '{q}') AS m "
           "FROM docs WHERE MATCH(body, '{q}') ORDER BY id")
    assert db.sql(sql.format(q="maison")).to_pylist() == [
        {"id": 3, "h": "Les <b>maisons</b> et la <b>maison</b>", "s": "Les <b>maisons</b> et…", "m": True}]
    assert [r["h"] for r in db.sql(sql.format(q="Haus")).to_pylist()] == ["Die <b>Häuser</b> und das <b>Haus</b>"]
    assert [r["h"] for r in db.sql(sql.format(q="run")).to_pylist()] == ["The runners were <b>running</b> fast"]
    tokens = db.sql("SELECT fts_tokenize(body) AS t FROM docs ORDER BY id").to_pylist()
    analyzer = analyzer_for(db.manifest.tables["docs"].indexes["body"].analyzer)
    stream = analyzer.analyze(rows.column("body"), languages=rows.column("lang"))
    vocab = stream.vocab.to_pylist()
    assert [r["t"] for r in tokens] == [[vocab[t] for t, r in zip(stream.term, stream.row) if r == i] for i in range(3)]
    assert tokens[2]["t"] == ["le", "maison", "et", "la", "maison"]


def test_the_text_functions_keep_the_segmenter_of_an_index():
    """An index of runs of Han kept whole (``segmenter="none"``, as every index built before
    issue 42) is highlighted by its own analysis: the run that matched, not its bigrams."""
    db = fts.connect()
    db.create_table("docs", pa.table({"body": ["数据库 系统", "分布式数据库"]})).create_index("body", segmenter="none")
    rows = db.sql("SELECT highlight(body, '数据库') AS h, fts_tokenize(body) AS t FROM docs ORDER BY h").to_pylist()
    assert rows == [{"h": "<b>数据库</b> 系统", "t": ["数据库", "系统"]}, {"h": "分布式数据库", "t": ["分布式数据库"]}]
