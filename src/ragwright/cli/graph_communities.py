"""`ragwright graph communities`: list the entity graph's communities (one level, with their
extractive reports) and the last build's stats, building them on first use; ``--rebuild``
re-clusters. Ingest never
re-clusters: a document's write or delete only marks the communities it touches dirty."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    IndexOption,
    JsonOption,
    console,
    open_index,
    print_json,
    reports_errors,
    terminal_safe,
)
from ragwright.models import DEFAULT_COLLECTION
from ragwright.models.communities import CommunityBuild, CommunitySettings
from ragwright.shapes.communities import build_json, community_json


@reports_errors
def communities(
    level: Annotated[
        int, typer.Option("--level", help="The level to list (0: coarsest).", min=0)
    ] = 0,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Re-cluster the graph now (and make the reports).")
    ] = False,
    max_cluster_size: Annotated[
        int | None, typer.Option(help="With --rebuild: split communities larger than this.", min=1)
    ] = None,
    min_mentions: Annotated[
        int | None, typer.Option(help="With --rebuild: leave out entities named less often.", min=1)
    ] = None,
    weight_cap: Annotated[
        float | None, typer.Option(help="With --rebuild: the most one edge weighs.")
    ] = None,
    resolution: Annotated[
        float | None, typer.Option(help="With --rebuild: Leiden's resolution (higher: smaller).")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="With --rebuild: the clustering's seed.")] = None,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    json_output: JsonOption = False,
) -> None:
    """The communities of one level with their report titles, and the build's stats (level
    sizes, singleton and largest-community shares, modularity); the first call clusters the
    graph. Settings not given on a rebuild are the last build's."""
    given = {
        "max_cluster_size": max_cluster_size,
        "min_mentions": min_mentions,
        "weight_cap": weight_cap,
        "resolution": resolution,
        "seed": seed,
    }
    chosen = {k: v for k, v in given.items() if v is not None}
    if chosen and not rebuild:
        raise typer.BadParameter("clustering settings need --rebuild", param_hint="--rebuild")
    # Writable even to list: a dirty report is made again on use, and kept.
    with open_index(index, collection=collection) as kb:
        previous = kb.communities.build_stats()
        if rebuild or previous is None:  # the first listing builds them: nothing to list yet
            base = previous.settings.as_dict() if previous is not None else {}
            kb.communities.build(CommunitySettings(**{**base, **chosen}))  # type: ignore[arg-type]
        build = kb.communities.workflow().checked_build()
        listed = kb.communities.list(level)
        reports = {r.report.community: r for r in kb.communities.workflow().extractive_reports()}
    if json_output:
        print_json(
            {
                "build": build_json(build),
                "level": level,
                "communities": [community_json(c, reports.get(c.community.id)) for c in listed],
            }
        )
        return
    _print_build(build)
    table = Table("id", "size", "parent", "dirty", "title", title=f"level {level}")
    for stored in listed:
        report = reports.get(stored.community.id)
        title = report.report.title if report is not None else ""
        parent = stored.community.parent
        table.add_row(
            str(stored.community.id),
            str(stored.community.size),
            "" if parent is None else str(parent),
            "yes" if stored.dirty else "",
            escape(terminal_safe(title)),
        )
    console.print(table)


def _print_build(build: CommunityBuild) -> None:
    console.print(
        f"[bold]communities[/] of graph version {escape(build.graph_version)}: "
        f"{build.clustered} entities clustered, {build.unclustered} left out, "
        f"{build.seconds:.2f} s"
    )
    for level in build.levels:
        console.print(
            f"  level {level.level}: {level.communities} communities, largest {level.largest} "
            f"({100 * level.largest_share:.1f}%), singletons {100 * level.singleton_share:.1f}%, "
            f"modularity {level.modularity:.3f}, disconnected {level.disconnected}, "
            f"split {level.split}"
        )
