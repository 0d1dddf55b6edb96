"""The build summary: spelled-out column names, each over the stats.json value it names, beside the paper's row."""

from builder.summary import format_table, table1_rows
from languages import load

STATS = {"lang": "pt", "translator": "bergamot", "queries": {"pairs": 68, "neutral": 20, "titles": 171},
         "corpus": {"pairs": 1570, "neutral": 716, "titles": 4108, "masculine_only": 31, "feminine_only": 7,
                    "reinflected": 12},
         "qrels": 9001, "uninflected_feminine": 137, "needs_review": 246}
# Every column the summary may print, and the stats.json value it must show (one distinct number each).
EXPECTED = {
    "queries M/F pairs": "68", "queries neutral": "20", "queries unique titles": "171",
    "corpus M/F pairs": "1570", "corpus neutral": "716", "corpus unique titles": "4108",
    "corpus masculine only": "31", "corpus feminine only": "7", "corpus reinflected": "12",
    "qrels lines": "9001", "uninflected feminines": "137", "sources to review": "246",
}
TABLE1 = ("queries M/F pairs", "queries neutral", "queries unique titles",
          "corpus M/F pairs", "corpus neutral", "corpus unique titles")


def columns(table: str) -> list[dict[str, str]]:
    """Rows of the printed table as {header: cell}, cut at the dashes under each header."""
    header, dashes, *body = table.splitlines()
    spans, start = [], 0
    for run in dashes.split("  "):
        spans.append((start, start + len(run)))
        start += len(run) + 2
    names = [header[a:b].strip() for a, b in spans]
    return [{n: line[a:b].strip() for n, (a, b) in zip(names, spans)} for line in body]


def test_each_column_names_its_value_in_full():
    paper, ours = columns(format_table(table1_rows([STATS], [load("pt")])))
    assert (ours.pop("set"), ours.pop("source")) == ("PT", "this build (bergamot)")
    assert set(ours) <= set(EXPECTED), f"a column without a spelled-out name: {set(ours) - set(EXPECTED)}"
    assert set(TABLE1) | {"qrels lines", "sources to review"} <= set(ours)
    assert ours == {name: EXPECTED[name] for name in ours}
    assert paper["source"] == "paper (Google)"
    assert [int(paper[k]) for k in TABLE1] == list(load("pt").paper_table1)
    assert paper["qrels lines"] == ""  # the paper gives no such count
