"""Align a translated copy of a relevance dataset to its source: which translated title is each source id's.

A translated copy in the source's layout (``queries.tsv``, ``corpus_documents.tsv``, ``annotations.tsv``) keys
its titles by their own text and merges titles that translate alike (fr: 104 queries and 2,488 corpus titles
against en's 105 and 2,619), so the source id of each translated title is not written anywhere. Two signals
find it:

- **the relevance graph**: the copy holds the same graph with merged nodes, so a relevant source pair must land
  on a relevant translated pair;
- **text similarity** of the source title to the translated title: cosine of a multilingual sentence encoder
  (cross-lingual: no machine-translated draft needed, so German aligns offline) plus character 3-gram TF-IDF
  (names, acronyms and loanwords written alike in both: *iOS*, *3D*, *Java*).

Solved as assignments, not greedily (``scipy.optimize.linear_sum_assignment``):

1. queries: each source query's relevant titles vote, through their text similarity, for the translated queries
   whose relevant titles they resemble; with the queries' own similarity, an assignment (``_assign``: a translated
   title may take a second source title at ``MERGE_COST``, the copy's merges);
2. corpus: similarity plus the graph (a title whose queries map onto exactly the translated title's queries
   scores higher, one whose queries the translated title lacks lower; a source query's own copy in the corpus
   goes where the query went); the same kind of assignment;
3. the queries again from the corpus alignment (the share of each query's relevant titles landing on the
   translated query's), then the corpus again.

Where the language has an offline translator, its title of each source id is a **draft** in the target language
(builder/build.py translates every title first): the alignment is then made twice, without and with the draft's
character 3-grams, and an id is confident only where both readings place it on the same translated title and at
least one of them is confident (``agreed``). The draft places titles the source text alone cannot; a title the two
readings dispute goes to the fallback.

Every id gets the assigned translated id, its score, a margin (the least loss of the total score when it
exchanges its translated title with another id's, or, sharing it in a merge, moves to its next best) and a
reason. An alignment is **confident** when the graph does not contradict it (its relevant queries all map onto
the translated title's) and it wins by ``min_margin``, or its text similarity alone is at least
``sure_similarity`` (the same title written alike); a title relevant to no query also needs a similarity of
``MIN_SIMILARITY``. The rest go to the caller's fallback (builder/reference.py: the MT route, or no item).
"""

from __future__ import annotations

import math
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from eval.exact_use import exp_nonpositive
from eval.ranking import score_grid

Encoder = Callable[[Sequence[str]], np.ndarray]  # texts -> unit-length vectors (rows)

# The alignment decides which given title each English id gets, so it is arithmetic whose every bit is the same on
# any machine (the built files and the hashes stats.json keeps of them are published): the encoder's vectors are
# exact (eval's m-use), their cosine is taken on eval's score grid (exact in float64 in any BLAS order), exp and log
# come from IEEE operations or libm one value at a time (not numpy's SIMD-dispatched ufuncs), and every product
# with a 0/1 membership matrix is a sparse one (fixed loops, no BLAS); the rest is elementwise IEEE arithmetic.

# Weights and thresholds (docs/given-translations.md says how they were chosen: on the relevance graph's edge
# preservation and the margins' distribution, never on the hand-checked samples).
ENCODER_WEIGHT = 0.5  # the rest is character 3-gram TF-IDF
VOTE_SHARPNESS = 20.0  # softmax temperature of a corpus title's vote over translated titles
QUERY_TEXT_WEIGHT = 0.5
EXACT_GRAPH_BONUS = 0.3  # the title's queries map onto exactly the translated title's queries
SUBSET_GRAPH_BONUS = 0.3  # onto some of them: as good (the translated title merged titles, so it has more)
MISSING_GRAPH_PENALTY = 0.3  # times the share of its queries the translated title is not relevant to
UNRELATED_PENALTY = 0.1  # a title relevant to no query placed on one relevant to some
SAME_AS_QUERY_BONUS = 1.0  # a query's own copy in the corpus goes where the query went
MERGE_COST = 0.15  # what a second source title on one translated title costs the assignment
MIN_MARGIN = 0.05
MIN_SIMILARITY = 0.3  # a title relevant to no query (the graph is silent): the text alone must vouch for it
SURE_SIMILARITY = 0.9


@dataclass(frozen=True)
class Relevance:
    """One side of the alignment: titles by id and the relevant (query, document) pairs."""

    queries: dict[str, str]
    corpus: dict[str, str]
    qrels: list[tuple[str, str]]


@dataclass(frozen=True)
class Aligned:
    """Where one source id went."""

    source_id: str
    role: str  # query | corpus
    target_id: str
    score: float
    margin: float  # score minus the best other candidate's (negative: the assignment gave the best to another id)
    confident: bool
    reason: str


@dataclass(frozen=True)
class Alignment:
    queries: dict[str, Aligned]
    corpus: dict[str, Aligned]
    edges_preserved: int  # source relevant pairs whose two confident ids land on a translated relevant pair
    edges_checked: int  # source relevant pairs whose two ids are confident
    edges_total: int

    def target_of(self, source_id: str) -> Aligned | None:
        """The query alignment first (a title both query and corpus title needs both confident to be used:
        builder/reference.py fallback_ids)."""
        return self.queries.get(source_id) or self.corpus.get(source_id)


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text).split())


def _trigrams(text: str) -> list[str]:
    t = f" {_fold(text)} "
    return [t[i:i + 3] for i in range(len(t) - 2)]


def trigram_similarity(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Cosine of character 3-gram TF-IDF vectors (accents and case folded), idf over both sides: len(a) x len(b)."""
    import scipy.sparse as sp

    vocab: dict[str, int] = {}

    def matrix(texts: Sequence[str]):
        rows, cols, vals = [], [], []
        for i, t in enumerate(texts):
            counts: dict[int, int] = defaultdict(int)
            for g in _trigrams(t):
                counts[vocab.setdefault(g, len(vocab))] += 1
            rows += [i] * len(counts)
            cols += list(counts)
            vals += list(counts.values())
        return rows, cols, vals

    ma, mb = matrix(a), matrix(b)
    A = sp.csr_matrix((ma[2], (ma[0], ma[1])), shape=(len(a), len(vocab)), dtype=np.float64)
    B = sp.csr_matrix((mb[2], (mb[0], mb[1])), shape=(len(b), len(vocab)), dtype=np.float64)
    df = np.asarray((A > 0).sum(0)).ravel() + np.asarray((B > 0).sum(0)).ravel()
    idf = np.array([math.log(x) for x in (len(a) + len(b) + 1) / (df + 1)]) + 1

    def unit(M):
        M = M.multiply(idf).tocsr()
        norms = np.sqrt(np.asarray(M.multiply(M).sum(1)).ravel())
        return sp.diags(1 / np.where(norms > 0, norms, 1)) @ M

    return np.asarray((unit(A) @ unit(B).T).todense())


def text_similarity(a: Sequence[str], b: Sequence[str], encoder: Encoder,
                    drafts: Sequence[str | None] | None = None) -> np.ndarray:
    """Similarity of source titles ``a`` to translated titles ``b``. drafts: a machine translation of each source
    title into b's language (None where there is none); the character 3-gram term is then the better of the
    source's and the draft's (*Accountant*: draft *compteur*, given *Comptable*)."""
    ea, eb = encoder(list(a)), encoder(list(b))
    trigrams = trigram_similarity(a, b)
    have = [i for i, d in enumerate(drafts or ()) if d]
    if have:
        trigrams[have] = np.maximum(trigrams[have], trigram_similarity([drafts[i] for i in have], b))
    return ENCODER_WEIGHT * (score_grid(ea) @ score_grid(eb).T) + (1 - ENCODER_WEIGHT) * trigrams


def _assign(score: np.ndarray) -> np.ndarray:
    """Column of each row: the assignment maximising the total where a column may take a second row at a cost
    (``MERGE_COST``: two source titles translated alike, merged by the copy); rows left over take their best."""
    from scipy.optimize import linear_sum_assignment

    n_cols = score.shape[1]
    rows, cols = linear_sum_assignment(-np.hstack([score, score - MERGE_COST]))
    out = score.argmax(1)
    out[rows] = cols % n_cols
    return out


def _margins(score: np.ndarray, to: np.ndarray) -> np.ndarray:
    """How much each row's assignment wins by: the least loss of the total score when the row exchanges its
    translated title with another row's (a title no other row holds: when the row simply moves there). A row that
    shares its title with others (a merge) or exchanges with one of them: the loss of moving to its next best.
    The assignment maximises the total, so every margin is >= 0 up to ties; a small one means another reading of
    the same evidence is nearly as good."""
    n_rows, n_cols = score.shape
    owner = np.full(n_cols, -1)
    counts = np.bincount(to, minlength=n_cols)
    for i, j in enumerate(to):
        if counts[j] == 1:
            owner[j] = i
    own = score[np.arange(n_rows), to]
    held = owner >= 0
    col_value = np.where(held, score[np.maximum(owner, 0), np.arange(n_cols)], 0.0)
    margins = np.empty(n_rows)
    for i in range(n_rows):
        j = to[i]
        # swap with the holder of k: i takes k, the holder takes j
        back = np.where(held, score[np.maximum(owner, 0), j], 0.0)
        loss = np.where(held, own[i] + col_value - score[i] - back, own[i] - score[i])
        loss[j] = np.inf
        if counts[j] > 1:  # a merge: the row leaves a title others keep
            loss = np.where(held, own[i] - score[i], loss)
            loss[j] = np.inf
        margins[i] = loss.min() if n_cols > 1 else np.inf
    return margins


def _graph_bonus(source_sig: list[frozenset], target_sig: list[frozenset]) -> np.ndarray:
    """The graph's term per (source title, translated title), from the query sets of both (source queries
    already mapped to translated ones); computed once per distinct pair of query sets."""
    s_kinds = {s: i for i, s in enumerate(dict.fromkeys(source_sig))}
    t_kinds = {t: j for j, t in enumerate(dict.fromkeys(target_sig))}
    table = np.zeros((len(s_kinds), len(t_kinds)))
    for s, i in s_kinds.items():
        for t, j in t_kinds.items():
            if s == t:
                table[i, j] = EXACT_GRAPH_BONUS if s else 0.0
            elif not s:
                table[i, j] = -UNRELATED_PENALTY
            elif s < t:
                table[i, j] = SUBSET_GRAPH_BONUS
            else:
                table[i, j] = -MISSING_GRAPH_PENALTY * len(s - t) / len(s)
    return table[np.ix_([s_kinds[s] for s in source_sig], [t_kinds[t] for t in target_sig])]


def align(source: Relevance, target: Relevance, encoder: Encoder, min_margin: float = MIN_MARGIN,
          sure_similarity: float = SURE_SIMILARITY, drafts: dict[str, str] | None = None) -> Alignment:
    """drafts: source id -> a machine translation of its title into the target language. With drafts the
    alignment is made twice, from the source titles alone and with the drafts' 3-grams too, and an id is
    confident only where both put it on the same translated title and at least one of them is confident: the
    draft places titles the source text alone cannot (*Head of Advertising* -> *Directeur de la publicité*), and
    a title the two readings dispute is not used (``agreed``)."""
    plain = _align(source, target, encoder, min_margin, sure_similarity, None)
    if not drafts:
        return plain
    return agreed(plain, _align(source, target, encoder, min_margin, sure_similarity, drafts), source, target)


def agreed(plain: Alignment, drafted: Alignment, source: Relevance, target: Relevance) -> Alignment:
    """Each id where the alignment with MT drafts puts it, confident where the one without drafts agrees and
    either is confident."""
    def one(a: Aligned, b: Aligned) -> Aligned:
        if a.target_id != b.target_id:
            return replace(b, confident=False, reason=f"with the MT draft {b.target_id!r}, without it {a.target_id!r}")
        if b.confident and not a.confident:
            return replace(b, reason=f"{b.reason} with the MT draft (the same title without it)")
        if a.confident and not b.confident:
            return replace(a, reason=f"{a.reason} (the same title with the MT draft)")
        return b

    queries = {q: one(plain.queries[q], drafted.queries[q]) for q in plain.queries}
    corpus = {d: one(plain.corpus[d], drafted.corpus[d]) for d in plain.corpus}
    return Alignment(queries, corpus, *_edges(source, target, queries, corpus))


def _edges(source: Relevance, target: Relevance, queries: dict[str, Aligned], corpus: dict[str, Aligned]) -> tuple[int, int, int]:
    """(preserved, checked, total) relevance edges: a source relevant pair whose two ids are confident is checked,
    and preserved when it lands on a translated relevant pair."""
    target_edges = set(target.qrels)
    checked = preserved = 0
    for q, d in source.qrels:
        if queries[q].confident and corpus[d].confident:
            checked += 1
            preserved += (queries[q].target_id, corpus[d].target_id) in target_edges
    return preserved, checked, len(source.qrels)


def _align(source: Relevance, target: Relevance, encoder: Encoder, min_margin: float, sure_similarity: float,
           drafts: dict[str, str] | None) -> Alignment:
    sq, tq = list(source.queries), list(target.queries)
    sc, tc = list(source.corpus), list(target.corpus)
    dq = [drafts.get(i) for i in sq] if drafts else None
    dc = [drafts.get(i) for i in sc] if drafts else None
    sim_q = text_similarity([source.queries[i] for i in sq], [target.queries[j] for j in tq], encoder, dq)
    sim_c = text_similarity([source.corpus[i] for i in sc], [target.corpus[j] for j in tc], encoder, dc)
    s_pos = {d: i for i, d in enumerate(sc)}
    t_pos = {d: j for j, d in enumerate(tc)}
    tq_pos = {q: j for j, q in enumerate(tq)}
    s_rel: dict[str, list[int]] = defaultdict(list)
    t_rel: dict[str, list[int]] = defaultdict(list)
    s_queries_of: dict[str, set[str]] = defaultdict(set)
    t_queries_of: dict[str, set[str]] = defaultdict(set)
    for q, d in source.qrels:
        s_rel[q].append(s_pos[d])
        s_queries_of[d].add(q)
    for q, d in target.qrels:
        t_rel[q].append(t_pos[d])
        t_queries_of[d].add(q)
    t_sig = [frozenset(t_queries_of[d]) for d in tc]

    # 1. queries by the votes of their relevant titles
    votes = exp_nonpositive((sim_c - sim_c.max(1, keepdims=True)) * VOTE_SHARPNESS)
    votes /= votes.sum(1, keepdims=True)
    member = np.zeros((len(tc), len(tq)))
    for q, docs in t_rel.items():
        member[docs, tq_pos[q]] = 1.0
    import scipy.sparse as sp

    member_of_query = sp.csr_matrix(member.T)
    vote_q = np.array([member_of_query @ votes[s_rel[q]].mean(0) if s_rel[q] else np.zeros(len(tq)) for q in sq])
    query_score = vote_q + QUERY_TEXT_WEIGHT * sim_q
    q_to = _assign(query_score)

    def corpus_score(q_to: np.ndarray) -> np.ndarray:
        mapped = {q: tq[q_to[i]] for i, q in enumerate(sq)}
        s_sig = [frozenset(mapped[q] for q in s_queries_of[d]) for d in sc]
        score = sim_c + _graph_bonus(s_sig, t_sig)
        for i, q in enumerate(sq):
            if q in s_pos and mapped[q] in t_pos:
                score[s_pos[q], t_pos[mapped[q]]] += SAME_AS_QUERY_BONUS
        return score

    # 2. corpus; 3. queries from the corpus alignment, then the corpus again
    c_score = corpus_score(q_to)
    c_to = _assign(c_score)
    landed = np.zeros((len(sq), len(tq)))
    for i, q in enumerate(sq):
        if s_rel[q]:
            landed[i] = member[c_to[s_rel[q]]].mean(0)
    query_score = landed + QUERY_TEXT_WEIGHT * sim_q
    q_to = _assign(query_score)
    c_score = corpus_score(q_to)
    c_to = _assign(c_score)

    mapped_q = {q: tq[q_to[i]] for i, q in enumerate(sq)}
    q_margin, c_margin = _margins(query_score, q_to), _margins(c_score, c_to)
    queries = {q: _aligned(q, "query", tq[q_to[i]], query_score[i, q_to[i]], q_margin[i], sim_q[i, q_to[i]],
                           graph_ok=True, min_margin=min_margin, sure=sure_similarity)
               for i, q in enumerate(sq)}
    corpus = {}
    for i, d in enumerate(sc):
        target_id = tc[c_to[i]]
        graph_ok = {mapped_q[q] for q in s_queries_of[d]} <= t_queries_of[target_id]
        corpus[d] = _aligned(d, "corpus", target_id, c_score[i, c_to[i]], c_margin[i], sim_c[i, c_to[i]], graph_ok,
                             min_margin, sure_similarity, graph_silent=not s_queries_of[d])
    return Alignment(queries, corpus, *_edges(source, target, queries, corpus))


def _aligned(source_id: str, role: str, target_id: str, value: float, margin: float, similarity: float,
             graph_ok: bool, min_margin: float, sure: float, graph_silent: bool = False) -> Aligned:
    margin, similarity = float(margin), float(similarity)
    if not graph_ok:
        confident, reason = False, "its relevant queries do not all map onto the translated title's"
    elif graph_silent and similarity < MIN_SIMILARITY:
        confident, reason = False, f"text similarity {similarity:.2f} is below {MIN_SIMILARITY}"
    elif similarity >= sure:
        confident, reason = True, f"text similarity {similarity:.2f}"
    elif margin >= min_margin:
        confident, reason = True, f"graph and text, margin {margin:.2f} over the next reading"
    else:
        confident, reason = False, f"margin {margin:.2f} over the next reading is below {min_margin}"
    return Aligned(source_id, role, target_id, round(float(value), 4), round(min(margin, 99.0), 4), confident, reason)
