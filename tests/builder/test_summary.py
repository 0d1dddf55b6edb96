"""The build summary: spelled-out column names, each over the stats.json value it names, beside the paper's row."""

from builder.summary import PAPER_TABLE1, format_table, table1_rows

STATS = {"lang": "pt", "translator": "bergamot", "queries": {"pairs": 68, "neutral": 20, "titles": 171},
         "corpus": {"pairs": 1570, "neutral": 716, "titles": 4108}, "qrels": 9001,
         "uninflected_feminine": 137, "needs_review": 246}


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
    paper, ours = columns(format_table(table1_rows([STATS])))
    assert ours == {
        "set": "PT", "source": "this build (bergamot)",
        "queries M/F pairs": "68", "queries neutral": "20", "queries unique titles": "171",
        "corpus M/F pairs": "1570", "corpus neutral": "716", "corpus unique titles": "4108",
        "qrels lines": "9001", "uninflected feminines": "137", "sources to review": "246",
    }
    assert paper["source"] == "paper (Google)"
    assert [int(paper[k]) for k in ("queries M/F pairs", "queries neutral", "queries unique titles",
                                    "corpus M/F pairs", "corpus neutral", "corpus unique titles")] == list(PAPER_TABLE1["pt"])
    assert paper["qrels lines"] == ""  # the paper gives no such count
