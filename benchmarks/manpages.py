"""Known-item collections from Debian's manual pages (issue 42): real text in Japanese,
Chinese and English, with one right answer per query.

Each man page is a document: its plain text without the NAME section. Its query is the
one-line description of that NAME section (after ``\\-``); the relevant document is the
page itself. Pages that only redirect (``.so``) and symbolic links are skipped; a page whose
description is empty or shared with another page of its collection stays a document but asks
no query (``known_item`` is false), since the answer would be ambiguous.

Collections (``COLLECTIONS``): ``ja`` (manpages-ja, ``usr/share/man/ja``), ``zh_CN`` and
``zh_TW`` (manpages-zh; ``zh_TW`` is the same pages converted to traditional characters, so it
is a collection of its own, never merged with ``zh_CN``), ``en`` (manpages,
``usr/share/man/man*``).

Usage::

    python benchmarks/manpages.py                 # download, extract, print the counts
    python benchmarks/manpages.py --extract tests/data/manpages   # write the CI sample

The packages are fetched with ``apt-get download`` (the versions the machine's apt sources
hold) and unpacked with ``dpkg-deb -x`` under ``bench-data/manpages/``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench-data" / "manpages"

# collection -> (Debian package, directory of its pages inside the package, glob of section dirs)
COLLECTIONS: dict[str, tuple[str, str, str]] = {
    "ja": ("manpages-ja", "usr/share/man/ja", "man*"),
    "zh_CN": ("manpages-zh", "usr/share/man/zh_CN", "man*"),
    "zh_TW": ("manpages-zh", "usr/share/man/zh_TW", "man*"),
    "en": ("manpages", "usr/share/man", "man*"),
}
# The CI extract's languages and the collection each is drawn from.
EXTRACT_LANGS = {"ja": "ja", "zh": "zh_CN", "en": "en"}
EXTRACT_PAGES = 250
EXTRACT_SEED = 42
EXTRACT_BODY_CHARS = 4000

SCHEMA = pa.schema([
    ("id", pa.string()),  # "<name>.<section>", e.g. "ls.1"
    ("name", pa.string()),
    ("lang", pa.string()),
    ("description", pa.string()),  # "" when the NAME section has none
    ("known_item", pa.bool_()),  # the description is a query: non-empty, unique in its collection
    ("body", pa.string()),
])


def download(cache: Path = CACHE) -> dict[str, str]:
    """Fetch and unpack the packages once; returns {package: version} of the .deb files used."""
    debs = cache / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    versions = {}
    for package in sorted({p for p, _, _ in COLLECTIONS.values()}):
        found = sorted(debs.glob(f"{package}_*.deb"))
        if not found:
            subprocess.run(["apt-get", "download", package], cwd=debs, check=True)
            found = sorted(debs.glob(f"{package}_*.deb"))
        deb = found[-1]
        versions[package] = deb.name.split("_")[1]
        root = cache / "root" / package
        if not root.exists():
            tmp = root.with_suffix(".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp)], check=True)
            tmp.rename(root)
    return versions


# ---------------------------------------------------------------------------------------
# roff (man and mdoc macros) to plain text

# \(xx and \[xx] special characters worth keeping; any other is dropped.
_SPECIAL = {
    "em": "—", "en": "–", "hy": "-", "mi": "-", "bu": "•", "lq": "“", "rq": "”", "oq": "‘",
    "cq": "’", "aq": "'", "dq": '"', "co": "©", "rg": "®", "tm": "™", "mu": "×", "di": "÷",
    "de": "°", "+-": "±", "<=": "≤", ">=": "≥", "!=": "≠", "->": "→", "<-": "←", "ti": "~",
    "ha": "^", "rs": "\\", "sl": "/", "ba": "|", "or": "|", "ul": "_", "ru": "_", "dg": "†",
    "sc": "§", "ps": "¶", "Fo": "«", "Fc": "»", "fo": "‹", "fc": "›", "ss": "ß", "pl": "+",
    "eq": "=", "lh": "☜", "rh": "☞", "at": "@", "sh": "#", "Do": "$", "ct": "¢", "Po": "£",
    "Ye": "¥", "Eu": "€", "mc": "µ", "12": "½", "14": "¼", "34": "¾", "sq": "□", "ci": "○",
    "lB": "[", "rB": "]", "lC": "{", "rC": "}", "la": "⟨", "ra": "⟩", "aa": "´", "ga": "`",
    ":a": "ä", ":o": "ö", ":u": "ü", ":A": "Ä", ":O": "Ö", ":U": "Ü", "'e": "é", "`e": "è",
    "^e": "ê", "'a": "á", "`a": "à", ",c": "ç", "~n": "ñ", "'o": "ó", "'i": "í", "'u": "ú",
}
# \*x, \*(xx, \*[xx] strings the pages use without defining them (pod2man, groff's man).
_STRINGS = {"R": "®", "Tm": "™", "lq": "“", "rq": "”", "Aq": "'", 'L"': "“", 'R"': "”",
            "C`": "‘", "C'": "’", "C+": "C++", "--": "—", "PI": "π", "Ba": "|", "Am": "&"}
# man macros whose arguments are printed with fonts alternating: joined with no space.
_ALTERNATING = {"BR", "RB", "BI", "IB", "IR", "RI"}
# Requests and macros that print nothing.
_SILENT = frozenset((
    "TH", "PP", "LP", "P", "TP", "TQ", "HP", "RS", "RE", "br", "sp", "in", "ti", "ad", "na",
    "hy", "nh", "ne", "ft", "ps", "vs", "ll", "pl", "bp", "so", "mso", "nr", "rm", "rr", "tr",
    "cc", "ec", "eo", "ta", "ce", "ul", "cu", "lf", "pc", "lt", "PD", "DT", "UC", "AT", "Vb",
    "Ve", "EX", "EE", "nf", "fi", "YS", "ME", "UE", "ds", "as", "rn", "wh", "ch", "it", "Dd",
    "Dt", "Os", "Bl", "El", "Bd", "Ed", "Pp", "Lp", "Ek", "Bk", "Ef", "Bf", "Rs", "Re", "Sx",
    "Ex", "Id", "cs", "ss", "fp", "char", "hc", "hw", "tl", "ev", "di", "da", "fam", "ig",
))
# mdoc macros that may appear as arguments of other mdoc macros (callable): not words.
_MDOC_CALLABLE = frozenset((
    "Ac", "Ao", "Ap", "Aq", "Ar", "Bc", "Bo", "Bq", "Brc", "Bro", "Brq", "Bx", "Cm", "Dc", "Do",
    "Dq", "Dv", "Ec", "Em", "En", "Eo", "Er", "Ev", "Fa", "Fc", "Fl", "Fn", "Fo", "Ft", "Ic",
    "Li", "Nm", "No", "Ns", "Oc", "Oo", "Op", "Pa", "Pc", "Pf", "Po", "Pq", "Qc", "Ql", "Qo",
    "Qq", "Sc", "So", "Sq", "Sy", "Tn", "Va", "Vt", "Xc", "Xo", "Xr", "Ad", "An", "Cd", "Dl",
    "D1", "It", "Lk", "Mt", "Ms", "St", "Ux", "At", "Bsx", "Fx", "Nx", "Ox", "Dx", "Lb", "Nd",
    "In", "Sh", "Ss", "Bf", "Ef",
))
_CJK = r"\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_CJK_LINE_BREAK = re.compile(rf"(?<=[{_CJK}])\n(?=[{_CJK}])")
_NAME_HEADING = re.compile(r"name|名前|名称|名稱|名字|命令名", re.IGNORECASE)
# The dash between names and description; a dash inside a name ("ld-linux.so") touches no space.
_DESCRIPTION_DASH = re.compile(r"\s[-–—－]+|[-–—－]+\s")
_REDIRECT = re.compile(r"^\s*\.so\s+\S+\s*$")


def _delimited(text: str, i: int) -> int:
    """Index just after a ``\\x'...'`` argument that starts at ``i`` (its delimiter)."""
    if i >= len(text):
        return i
    end = text.find(text[i], i + 1)
    return len(text) if end < 0 else end + 1


def _name_at(text: str, i: int) -> tuple[str, int]:
    """A roff name at ``i``: ``x``, ``(xx`` or ``[long]``; returns (name, index after it)."""
    if i >= len(text):
        return "", i
    if text[i] == "(":
        return text[i + 1 : i + 3], i + 3
    if text[i] == "[":
        end = text.find("]", i)
        end = len(text) if end < 0 else end
        return text[i + 1 : end], end + 1
    return text[i], i + 1


def _special(name: str) -> str:
    if name in _SPECIAL:
        return _SPECIAL[name]
    if re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
        return chr(int(name[1:], 16))
    return ""


def unescape(text: str, strings: dict[str, str]) -> str:
    """Plain text of a roff text line or argument: fonts, sizes and motions dropped,
    special characters and defined strings written out."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = text[i + 1]
        i += 2
        if e in "fF":
            _, i = _name_at(text, i)
        elif e == "s":
            if i < n and text[i] in "+-":
                i += 1
            if i < n and text[i] in "([":
                _, i = _name_at(text, i)
            elif i < n and text[i] == "'":
                i = _delimited(text, i)
            else:
                while i < n and text[i].isdigit():
                    i += 1
        elif e in "([":
            name, i = _name_at(text, i - 1)
            out.append(_special(name))
        elif e == "*":
            name, i = _name_at(text, i)
            value = strings.get(name, _STRINGS.get(name, ""))
            out.append(unescape(value, {}) if "\\" in value else value)
        elif e in "nmgV$":
            if e == "n" and i < n and text[i] in "+-":
                i += 1
            _, i = _name_at(text, i)
        elif e in "hvwlLoNDXZbxRSHCYAB":
            start = i
            i = _delimited(text, i)
            if e == "C":
                out.append(_special(text[start + 1 : i - 1]))
            elif e == "o":  # overstrike: keep the first character
                out.append(text[start + 1 : i - 1][:1])
        elif e == "k":  # marks a position in a register
            _, i = _name_at(text, i)
        elif e in "e\\E":
            out.append("\\")
        elif e in " ~0":
            out.append(" ")
        elif e == "t":
            out.append("\t")
        elif e == "-":
            out.append("-")
        elif e == "'":
            out.append("´")
        elif e in "&|^,/%:cdur{}aprOjQ)!?#":
            pass
        else:
            out.append(e)
    return "".join(out)


def _strip_comment(line: str) -> str:
    """``line`` without its ``\\"`` or ``\\#`` comment (an escaped backslash is no comment)."""
    i = 0
    while True:
        i = line.find("\\", i)
        if i < 0 or i + 1 >= len(line):
            return line
        if line[i + 1] in '"#':
            return line[:i]
        i += 2


def _arguments(rest: str) -> list[str]:
    """Split a request's arguments as roff does: on spaces, ``"..."`` quoting (``""`` is a quote)."""
    args: list[str] = []
    i, n = 0, len(rest)
    while i < n:
        while i < n and rest[i] in " \t":
            i += 1
        if i >= n:
            break
        if rest[i] == '"':
            i += 1
            buf = []
            while i < n:
                if rest[i] == '"':
                    if i + 1 < n and rest[i + 1] == '"':
                        buf.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(rest[i])
                i += 1
            args.append("".join(buf))
        else:
            j = i
            while j < n and rest[j] not in " \t":
                j += 1
            args.append(rest[i:j])
            i = j
    return args


def _logical_lines(source: str) -> list[str]:
    """Source lines with escaped newlines (a line ending in an odd number of ``\\``) joined."""
    lines: list[str] = []
    pending = ""
    for raw in source.split("\n"):
        line = pending + raw
        tail = len(line) - len(line.rstrip("\\"))
        if tail % 2:
            pending = line[:-1]
            continue
        pending = ""
        lines.append(line)
    if pending:
        lines.append(pending)
    return lines


def roff_sections(source: str) -> list[tuple[str, str]]:
    """The page as (heading, plain text) pairs in order; text before the first heading has
    heading "". Macro definitions, conditionals, tables' format lines and equations are
    dropped; a line break between two CJK characters is removed (as a reader sees the page)."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    strings: dict[str, str] = {}
    skip_until: str | None = None  # end of a skipped block: "..", ".EN" or "}" (for "\}")
    brace_depth = 0
    table_format = False  # inside .TS, before the format's closing "."
    in_table = False
    for line in _logical_lines(source):
        if skip_until in ("..", ".EN"):
            if line.strip() == skip_until:
                skip_until = None
            continue
        if skip_until == "}":
            brace_depth += line.count("\\{") - line.count("\\}")
            if brace_depth <= 0:
                skip_until = None
            continue
        line = _strip_comment(line)
        text = sections[-1][1]
        if line[:1] in (".", "'"):
            body = line[1:].lstrip()
            name, _, rest = body.partition(" ")
            if "\t" in name:
                name, _, more = name.partition("\t")
                rest = more + " " + rest
            if not name:
                continue
            if name in ("de", "de1", "am", "ig"):
                skip_until = ".."
                continue
            if name in ("if", "ie", "el", "while"):
                opened = line.count("\\{") - line.count("\\}")
                if opened > 0:
                    skip_until, brace_depth = "}", opened
                continue
            if name == "TS":
                in_table, table_format = True, True
                continue
            if name == "T&":
                table_format = True
                continue
            if name == "TE":
                in_table = table_format = False
                continue
            if name == "EQ":
                skip_until = ".EN"
                continue
            args = _arguments(rest)
            if name == "ds" and args:
                _, _, value = rest.strip().partition(" ")
                strings[args[0]] = value.lstrip().removeprefix('"')
                continue
            if name in ("SH", "SS", "Sh", "Ss"):
                heading = unescape(" ".join(args), strings).strip()
                if name in ("SH", "Sh"):
                    sections.append((heading, []))
                else:
                    text.append(heading)
                continue
            if name in _SILENT:
                continue
            if name in _ALTERNATING:
                text.append(unescape("".join(args), strings))
            elif name == "Nd":
                text.append("- " + unescape(" ".join(args), strings))
            elif name == "Fl":
                flags = [a for a in args if a not in _MDOC_CALLABLE]
                text.append(" ".join("-" + unescape(a, strings) for a in flags) or "-")
            elif name[:1].isupper() and len(name) <= 3 and name in _MDOC_CALLABLE:
                words = [a for a in args if a not in _MDOC_CALLABLE]
                text.append(unescape(" ".join(words), strings))
            elif name == "IP":
                if args:
                    text.append(unescape(args[0], strings))
            else:  # .B, .I, .SM, .SB, .UR, .MT, .SY, .OP and the page's own macros
                text.append(unescape(" ".join(args), strings))
            continue
        if in_table:
            if table_format:
                if line.rstrip().endswith("."):
                    table_format = False
                continue
            if line.strip() in ("_", "=", "T{", "T}"):
                continue
            line = line.replace("T{", " ").replace("T}", " ").replace("\t", " ")
        text.append(unescape(line, strings))
    result = []
    for heading, lines in sections:
        joined = "\n".join(" ".join(part.split()) for part in lines)
        joined = _CJK_LINE_BREAK.sub("", joined)
        joined = re.sub(r"\n{2,}", "\n", joined).strip()
        result.append((heading, joined))
    return result


def description_of(name_text: str) -> str:
    """The part of a NAME section after its first dash separator ("ls - list ..."), or ""."""
    flat = " ".join(name_text.split())
    match = _DESCRIPTION_DASH.search(flat)
    return flat[match.end():].strip() if match else ""


def parse_page(source: str) -> tuple[str, str] | None:
    """(description, body) of one page's roff source; None for a ``.so`` redirect."""
    meaningful = [ln for ln in source.splitlines()
                  if ln.strip() and not re.match(r"^[.']\s*\\\"", ln)]
    if len(meaningful) == 1 and _REDIRECT.match(meaningful[0]):
        return None
    sections = roff_sections(source)
    name_index = next((i for i, (h, _) in enumerate(sections) if i and _NAME_HEADING.search(h)), None)
    description = description_of(sections[name_index][1]) if name_index is not None else ""
    body = "\n".join(
        (f"{h}\n{t}" if h else t)
        for i, (h, t) in enumerate(sections) if i != name_index and (h or t)
    ).strip()
    return description, body


def load_collection(lang: str, cache: Path = CACHE) -> pa.Table:
    """Every page of collection ``lang`` (``COLLECTIONS``) as a table of ``SCHEMA``, sorted by id."""
    package, directory, sections_glob = COLLECTIONS[lang]
    base = cache / "root" / package / directory
    rows = []
    for path in sorted(base.glob(f"{sections_glob}/*")):
        if path.is_symlink() or not path.is_file():
            continue
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        parsed = parse_page(raw.decode("utf-8", errors="replace"))
        if parsed is None:
            continue
        description, body = parsed
        page_id = path.name[:-3] if path.suffix == ".gz" else path.name
        if not body:
            continue
        rows.append((page_id, page_id.rsplit(".", 1)[0], lang, description, body))
    counts = Counter(" ".join(d.split()).casefold() for _, _, _, d, _ in rows)
    return pa.table({
        "id": [r[0] for r in rows],
        "name": [r[1] for r in rows],
        "lang": [r[2] for r in rows],
        "description": [r[3] for r in rows],
        "known_item": [bool(r[3]) and counts[" ".join(r[3].split()).casefold()] == 1 for r in rows],
        "body": [r[4] for r in rows],
    }, schema=SCHEMA)


def _cap(body: str, limit: int) -> str:
    """``body`` cut at the last line break within ``limit`` characters (or at ``limit``)."""
    if len(body) <= limit:
        return body
    cut = body.rfind("\n", 0, limit)
    return body[: cut if cut > limit // 2 else limit]


def write_extract(out: Path, cache: Path = CACHE) -> dict[str, tuple[int, int, int]]:
    """The CI sample: per language ``EXTRACT_PAGES`` pages drawn with ``EXTRACT_SEED``, bodies
    capped at ``EXTRACT_BODY_CHARS``, as ``<lang>.jsonl.gz``; returns {lang: (pages, queries, bytes)}."""
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for lang, collection in EXTRACT_LANGS.items():
        rows = load_collection(collection, cache).to_pylist()
        count = min(EXTRACT_PAGES, len(rows))
        picked = sorted(random.Random(EXTRACT_SEED).sample(range(len(rows)), count))
        path = out / f"{lang}.jsonl.gz"
        lines = []
        for i in picked:
            row = rows[i]
            lines.append(json.dumps({
                "id": row["id"], "description": row["description"], "known_item": row["known_item"],
                "body": _cap(row["body"], EXTRACT_BODY_CHARS),
            }, ensure_ascii=False))
        # mtime=0: the same pages give the same bytes.
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=9) as gz:
            gz.write(("\n".join(lines) + "\n").encode("utf-8"))
        written[lang] = (len(picked), sum(rows[i]["known_item"] for i in picked), path.stat().st_size)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--extract", type=Path, help="write the CI sample into this directory")
    parser.add_argument("--show", metavar="LANG:ID", help="print one page's description and body")
    args = parser.parse_args(argv)
    versions = download(args.cache)
    print("packages:", ", ".join(f"{p} {v}" for p, v in versions.items()))
    if args.show:
        lang, page_id = args.show.split(":", 1)
        table = load_collection(lang, args.cache).to_pylist()
        row = next(r for r in table if r["id"] == page_id)
        print(f"description: {row['description']!r} (known item: {row['known_item']})\n{row['body']}")
        return
    for lang in COLLECTIONS:
        table = load_collection(lang, args.cache)
        queries = sum(table.column("known_item").to_pylist())
        empty = sum(1 for d in table.column("description").to_pylist() if not d)
        print(f"{lang}: {table.num_rows} pages, {queries} queries ({empty} without a description)")
    if args.extract:
        for lang, (pages, queries, size) in write_extract(args.extract, args.cache).items():
            print(f"extract {lang}: {pages} pages, {queries} queries, {size:,} bytes")


if __name__ == "__main__":
    sys.exit(main())
