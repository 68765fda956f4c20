"""`GraphSettings`: how graph search seeds, walks and fuses; the ``graph_*`` keys of the
``[search]`` table (see `ragwright.pipeline.search.request`)."""

from __future__ import annotations

from dataclasses import dataclass

from ragwright.errors import ConfigError

#: The smallest push threshold accepted: below it one walk could visit 10^8 links.
MIN_TOLERANCE = 1e-8


@dataclass(frozen=True, slots=True)
class GraphSettings:
    """Graph search's knobs, validated when made. Defaults tuned on HotpotQA dev questions
    0–199 (benchmarks/graph_hotpotqa.py); see docs/graph-search.md."""

    #: The graph ranking's weight against the hybrid ranking's 1 in rank fusion. The walk
    #: restarts at hybrid's hits by their scores, so its ranking already holds hybrid's:
    #: 100 makes it the order (on HotpotQA dev 0-199 all-support@5 0.680 against 0.645 with
    #: 3 and hybrid's first hit kept, 0.615 with 1.5).
    weight: float = 100.0
    #: The k of that reciprocal-rank fusion (small: the top ranks of each list count most).
    rrf_k: int = 10
    #: Hybrid's first this many hits keep their places; the fused ranking fills the rest.
    #: 1 since the gate: with it open, the walk may not demote the first hop, and the bridge
    #: follows at rank 2 (HotpotQA dev 0-199 recall@2 0.735 against 0.733 at 0, all-support@5
    #: 0.770 both).
    keep_top: int = 1
    #: With this above 0, only as many of those as hybrid is sure of: the largest n whose
    #: n-th score, min-max normalized over hybrid's ranking, is at least this far above the
    #: next one's (`ragwright.pipeline.search.graph_retrieval.confident_top`): a comparison's
    #: two clear passages stay first, a bridge question's walk is left free. Dev 0-199 with
    #: keep_top 2 and seed_decay 8: all-support@5 0.695, recall@2 0.637 at 0.1 to 0.2
    #: (0.690 / 0.632 with none kept); SciFact train, first 300: keep_top 2 at 0.15 nDCG@10
    #: 0.697, at 0 0.706, none kept 0.690 (hybrid 0.722). 0: keep_top hits, always.
    keep_gap: float = 0.0
    #: Of hybrid's first this many hits, the passages the query names keep their places
    #: (ahead of the walk's order, in hybrid's; with ``keep_top``'s, if any): each hit
    #: mentioning two or more entities the query names and, when it names two or more, the
    #: first hit mentioning each (`ragwright.graph.named_hits`). For a comparison ("Which
    #: is older, X or Y?") its two passages; for a bridge question (one name) its first hop,
    #: which the walk ranks first anyway. 0: none. HotpotQA dev500 recall@2 / all-support@5
    #: with 2 against 0: 0-199 0.627 / 0.685 against 0.623 / 0.685, 200-499 0.722 / 0.823
    #: against 0.718 / 0.823 (window 3 ties 2 on 0-199, 5 loses: 0.608 / 0.675); SciFact
    #: test nDCG@10 0.709 against 0.712 (replayed over cached hits, extractor v4). Off since
    #: the gate below: a bridge question often names two entities ("... Corliss Archer in
    #: the film Kiss and Tell"), and keeping both named hits pushed the bridge to rank 3
    #: (dev 0-199 with the gate: recall@2 0.667 at 2 against 0.693 at 0, AS@5 0.755 both).
    keep_named: int = 0
    #: The gate: graph mode reorders hybrid's ranking only when one of hybrid's first this
    #: many hits mentions an entity the query does not name and a candidate passage is
    #: about it (the first chunk of a document titled with its name: a second hop,
    #: `ragwright.graph.bridges`); otherwise it returns hybrid's order. 0: no gate (the
    #: walk's order always). HotpotQA dev 0-199 recall@2 / all-support@5 (keep_named 0,
    #: bridge_rank 2): 1: 0.693 / 0.730, 2: 0.693 / 0.755, 3: 0.675 / 0.755; the walk
    #: ungated: 0.627 / 0.685 (hybrid 0.608 / 0.540).
    bridge_hits: int = 2
    #: With the gate open, the best such bridge passage (by the walk's order) is moved up
    #: to this rank (behind the passages kept by ``keep_top`` and ``keep_named``), so a
    #: two-hop question holds both hops in its first two hits. 0: left where the walk
    #: ranks it. Dev 0-199 (bridge_hits 1, keep_named 2): 2: 0.665 / 0.730, 3: 0.618 /
    #: 0.730, 0: 0.618 / 0.645.
    bridge_rank: int = 2
    #: With the gate closed, a comparison's second passage (or a named first hop ranked
    #: low): unless hybrid's second hit is about a name the query uses besides the first
    #: hit's, the first of hybrid's first this many hits that is moves up to rank 2
    #: (`ragwright.graph.bridges.second_named`). 0: off. HotpotQA dev 0-199 recall@2: 5 and 3
    #: 0.735, 10 0.733, 0 0.718 (all-support@5 0.770 each); 200-499, run once: 0.833 at 5
    #: against 0.742 at 0 (mostly comparison questions; hybrid 0.730).
    named_window: int = 5
    #: Of the chunks hybrid did not rank in its first ``known_depth`` hits, the graph ranking
    #: brings at most this many into the fusion (its others drop out of it); the chunks
    #: hybrid did rank, it may reorder freely. 1000: no bound. A guard for a walk seeded
    #: without hybrid's scores (with 2 hits by rank, 1 kept SciFact train within 0.005 of
    #: hybrid's nDCG@10); the walk with passage nodes needs none on HotpotQA.
    max_new: int = 1000
    known_depth: int = 20
    #: The walk's probability of following a link rather than restarting at the seeds.
    damping: float = 0.5
    #: How many top hybrid hits seed the walk with their chunks (passage nodes).
    seed_hits: int = 50
    #: A seed hit's chunk weighs its hybrid score, min-max normalized over the hybrid
    #: ranking, to this power: passage nodes reset-weighted by the query's scores (higher:
    #: more of the mass on the hits hybrid is surest of; 0: all alike). Dev 0-199,
    #: recall@2 / all-support@5 with none kept: 2: 0.603 / 0.620, 4: 0.623 / 0.685,
    #: 8: 0.632 / 0.690, 12: 0.630 / 0.675, 16: 0.615 / 0.645; but 8 (with keep_gap 0.15)
    #: lost 200-499, mostly comparison questions: all-support@5 0.770 against 0.823 at 4.
    seed_decay: float = 4.0
    #: How many of the seeded hits (the first, at most ``seed_hits``) seed the walk with the
    #: entities they mention, each weighted like its hit's chunk (dev 0-199: 1 and 5 lost
    #: about 0.015 and 0.075 all-support@5 against 2; 1 also lost held-out recall@2).
    entity_hits: int = 2
    #: The share of seed mass on the hits' chunks themselves (the rest: on entities).
    chunk_seed_weight: float = 0.3
    #: Of the entity seed mass, the share on the entities of the facts the query is linked to
    #: (`ragwright.graph.fact_linking`; the rest: named and hits' entities, as below), and
    #: how many facts are linked. 0: no fact linking.
    fact_weight: float = 0.0
    fact_top: int = 5
    #: Of the entity seed mass, the share on the entities the query names (the rest: the
    #: hits' entities).
    query_weight: float = 0.1
    #: Node specificity: an entity's seed weight is divided by (chunks mentioning it) ** this.
    specificity: float = 1.0
    #: Factors on entity–entity relation edges and synonym links in the walk (0: ignored).
    relation_weight: float = 1.0
    synonym_weight: float = 1.0
    #: The local walk's push threshold, residual per link (`ragwright.graph.ppr`): the walk
    #: visits at most 1 / ((1 - damping) * this) links, whatever the graph's size. Smaller is
    #: closer to the exact walk and slower.
    tolerance: float = 1e-5

    def __post_init__(self) -> None:
        for name in ("weight", "specificity", "relation_weight", "synonym_weight", "seed_decay"):
            _check(name, getattr(self, name), low=0.0)
        _check("damping", self.damping, low=0.0, high=1.0, open_high=True)
        _check("query_weight", self.query_weight, low=0.0, high=1.0)
        _check("chunk_seed_weight", self.chunk_seed_weight, low=0.0, high=1.0)
        _check("fact_weight", self.fact_weight, low=0.0, high=1.0)
        _check("keep_gap", self.keep_gap, low=0.0, high=1.0)
        _check("tolerance", self.tolerance, low=MIN_TOLERANCE, high=0.1)
        if not isinstance(self.rrf_k, int) or isinstance(self.rrf_k, bool) or self.rrf_k < 1:
            raise ConfigError(f"graph_rrf_k must be a positive integer, got {self.rrf_k!r}")
        integers = (
            *("keep_top", "keep_named", "bridge_hits", "bridge_rank", "named_window"),
            *("seed_hits", "entity_hits", "max_new", "known_depth"),
        )
        for name in (*integers, "fact_top"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 1000:
                raise ConfigError(f"graph_{name} must be an integer from 0 to 1000, got {value!r}")
        if not isinstance(self.seed_hits, int) or isinstance(self.seed_hits, bool):
            raise ConfigError(f"graph_seed_hits must be an integer, got {self.seed_hits!r}")
        if not 0 <= self.seed_hits <= 1000:
            raise ConfigError(f"graph_seed_hits must be from 0 to 1000, got {self.seed_hits}")


def _check(
    name: str, value: object, *, low: float, high: float | None = None, open_high: bool = False
) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
        raise ConfigError(f"graph_{name} must be a number, got {value!r}")
    too_high = high is not None and (value >= high if open_high else value > high)
    if value < low or too_high:
        bound = f"below {high}" if open_high else f"at most {high}"
        limit = f"from {low}" + (f", {bound}" if high is not None else "")
        raise ConfigError(f"graph_{name} must be {limit}; got {value!r}")
