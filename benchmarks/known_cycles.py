"""Build the shipped catalogue of known cycles (kernels/data/known_cycles.tsv) from its sources.

    python benchmarks/known_cycles.py [RUN ...]            # writes kernels/data/known_cycles.tsv
    python benchmarks/known_cycles.py --check [RUN ...]    # says what would change, writes nothing

The published cycles come from the deals their authors published (tests/data/published/, each file
with its source), one deal per cycle; the project's own finds from tests/data/camicia_family_cycles.tsv
(the Camicia composition's atlas) and from the atlas runs and hunts given on the command line (every
cycle of their cycles tables, labelled "bmn atlas YEAR", or "bmn states YEAR" for a `states` hunt;
docs/catalogue.md names the runs the shipped file was made from). Each cycle is measured here
(kernels/catalogue.py `entry_of`: its canonical state, id and period on the reference player, its
closure by backward play with every balanced deal replayed), labelled by whoever published it first,
and written once. The order is fixed (by deck, then period, then id), so the
file changes only where a source does.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kernels.catalogue import COLUMNS, EXHAUSTIVE, EXHAUSTIVE_COLUMNS, HEADER, SHIPPED, KnownCycle, entry_of  # noqa: E402
from kernels.decks import parse_deck  # noqa: E402
from kernels.engines.reference import play_reference  # noqa: E402
from kernels.notation import parse_deal  # noqa: E402

PUBLISHED = ROOT / "tests" / "data" / "published"
FAMILY = ROOT / "tests" / "data" / "camicia_family_cycles.tsv"
MAX_STATES = 20_000_000

CASELLA = ("---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA", "Casella et al. 2024",
           "B. Casella, P. M. Anderson, M. Kleber, R. P. Mann, R. Nessler, W. Rucklidge, S. G. Williams, N. Wu: "
           "A non-terminating game of Beggar-My-Neighbor, arXiv:2403.13855 (19 March 2024): a cycle of 62 tricks "
           "reached by 30 starting deals")
BIANCO = ("-KJ--QKQJ--J/--K-J--Q-K-Q", "Bianco 2018",
          "Mauro Bianco, github.com/drago-96/cavacamisa issue #1 (31 December 2018): 'period 53' tricks after a "
          "warm-up of two (bmn counts 54)")
N1K06 = ("N1k06, exhaustive search of all 193,584,473,082,000 balanced Camicia deals: github.com/N1k06/cudacamicia "
         "docs/full_162_table.csv (commit 62a32ba, 23 July 2026)")
MAZZARO = ("Diego Mazzaro, answer to 'Does this game terminate?', cstheory.stackexchange.com/q/22175 (answer 52560, "
           "6 March 2023; found May 2016)")
ZANOTTO = ("Riccardo Zanotto, github.com/drago-96/cavacamisa infinite/20170217.txt (commit deaf2bd, 17 February 2017)")
GENTILINI = ("Alessandro Gentilini, github.com/alessandro-gentilini/pelagaletto (commit c81308a, 21 July 2012): "
             "all 3,488,400 deals of the 20-card deck, 16 never end")
PAULHUS = ("M. M. Paulhus, Beggar My Neighbour, Amer. Math. Monthly 106(2) (1999) 162-165: cycles in the decks two "
           "plain cards smaller and larger than the half deck of two suits (deals not read here); the deck's only "
           "cycle that balanced deals enter (bmn atlas: benchmarks/atlas/paulhus.toml, every deal)")
PAULHUS_DEALS = ("--A-KAQ-K-J-/QJ----------", "--Q-J----Q--K-/K---------AA-J")  # found by random deals
ATLAS = "bmn atlas 2026"
EXHAUSTIVE_HEADER = ("# bmn: complete exhaustive searches of a deck's deals of one split; every cycle they met is in\n"
                     "# known_cycles.tsv (docs/catalogue.md); made by benchmarks/known_cycles.py\n")
# The searches published (the atlas runs given add their exact decks): deck, split, deals, cycles by bmn's id,
# source, reference.
SEARCHES = [
    ("camicia", "20/20", 193_584_473_082_000, 9, "N1k06 2026",
     f"{N1K06}: 162 deals, 15 cycles with the players told apart, 9 by bmn's id (six pairs are each other's mirror)"),
    ("0:14,1:2,2:2,3:2", "10/10", 3_488_400, 1, "Gentilini 2012", GENTILINI),
    ("0:16,1:2,2:2,3:2,4:2", "12/12", 1_853_386_920, 1, ATLAS, "benchmarks/atlas/paulhus.toml (docs/atlas.md)"),
    ("0:18,1:2,2:2,3:2,4:2", "13/13", 3_936_933_000, 0, "Paulhus 1999",
     "M. M. Paulhus, Amer. Math. Monthly 106(2) (1999) 162-165: no cycle in the half deck of two suits; bmn atlas: "
     "benchmarks/atlas/paulhus.toml"),
    ("0:20,1:2,2:2,3:2,4:2", "14/14", 7_832_424_600, 1, ATLAS, "benchmarks/atlas/paulhus.toml (docs/atlas.md)"),
]


def rows(path: Path) -> list[dict]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def published() -> list[tuple[str, str, str, str]]:
    """(deal, source, reference, what of the source the entry's closure was held to), one per cycle and
    source deal list, in the order of priority (the first to publish a cycle labels it)."""
    out = [(*CASELLA, "its 30 balanced deals are the paper's count"), (*BIANCO, "")]
    n1k06 = rows(PUBLISHED / "n1k06_camicia_162.tsv")
    groups: dict[str, list[str]] = {}
    by_cycle: dict[str, list[dict]] = {}
    for row in n1k06:
        by_cycle.setdefault(play_reference(parse_deal(row["deal"])).cycle_id, []).append(row)
    for cid, members in by_cycle.items():
        groups[cid] = sorted({m["group"] for m in members}, key=int)
    zanotto = "--K-Q-Q-K-KJ-----KJ-/--J--Q----Q-------J-"
    out.append((zanotto, "Zanotto 2017", f"{ZANOTTO}; {MAZZARO} ('Cycle 3'); {N1K06}, group 1",
                "its balanced deals are N1k06's group 1"))
    mazzaro = {row["cycle"]: row["deal"] for row in rows(PUBLISHED / "mazzaro_2023_33.tsv")}
    for cycle, group in (("1", "3"), ("2", "2")):
        out.append((mazzaro[cycle], "Mazzaro 2023", f"{MAZZARO} ('Cycle {cycle}'); {N1K06}, group {group}",
                    f"its balanced deals are N1k06's group {group}"))
    for cid, members in sorted(by_cycle.items(), key=lambda item: int(groups[item[0]][0])):
        names = groups[cid]
        mirror = " and ".join(names) + (" (each other's mirror: one cycle by bmn's id)" if len(names) > 1 else "")
        out.append((members[0]["deal"], "N1k06 2026", f"{N1K06}, group{'s' if len(names) > 1 else ''} {mirror}",
                    f"its balanced deals are N1k06's group{'s' if len(names) > 1 else ''} {' and '.join(names)}"))
    out += [(deal, "Paulhus 1999", PAULHUS, "") for deal in PAULHUS_DEALS]
    gentilini = rows(PUBLISHED / "gentilini_20_cards_16.tsv")
    out.append((gentilini[0]["deal"], "Gentilini 2012", GENTILINI, "its balanced deals are Gentilini's 16"))
    return out


def own(runs: list[str]) -> list[tuple[str, str, str, str]]:
    """The project's own finds: the Camicia family's atlas, and every cycle of the given runs."""
    out = [(row["hands"], ATLAS, "benchmarks/atlas/camicia.toml (docs/atlas.md: the Camicia composition, 24-30 "
            "cards; tests/data/camicia_family_cycles.tsv)", "") for row in rows(FAMILY)]
    if runs:
        from cluster.commands.query import cycles_report
        from cluster.runs.runmeta import read_run_config

        for uri in runs:
            config = read_run_config(uri)
            source = f"bmn {config.strategy} {run_year(uri)}"
            if config.strategy == "atlas":
                where = (f"bmn search {config_path(uri)} (docs/atlas.md; config {config.fingerprint()}); "
                         f"bmn cycles of that run")
            elif config.strategy == "construct":
                where = (f"bmn search --strategy construct --deck {config.deck} (docs/atlas.md; config "
                         f"{config.fingerprint()}); bmn cycles of that run")
            else:  # a hunt
                where = (f"bmn search --strategy {config.strategy} --deck {config.deck} --deals {config.deals} "
                         f"--shard-size {config.shard_size} --seed {config.seed} (docs/atlas.md; config "
                         f"{config.fingerprint()}); bmn cycles of that run")
            for row in cycles_report([uri]).to_pylist():
                out.append((row["state"] or row["hands"], source, where, ""))
    return out


def run_year(uri: str) -> int:
    """The year a run was made in (run.json's created_at)."""
    from cluster.runs.runmeta import existing_run, run_json

    return datetime.datetime.fromtimestamp(run_json(existing_run(uri))["created_at"], datetime.UTC).year


def searches(runs: list[str]) -> list[tuple]:
    """The complete exhaustive searches: those published, and the atlas runs' exact decks (their deals)."""
    out = list(SEARCHES)
    if runs:
        from cluster.commands.query import query

        for uri in runs:
            for row in query([uri], "SELECT deck, split, played, cycles FROM atlas WHERE method = 'exact' AND "
                                    "unit = 'deal' AND complete ORDER BY cards, deck").to_pylist():
                if not any(parse_deck(s[0]).spec() == parse_deck(row["deck"]).spec() and s[1] == row["split"]
                           for s in out):
                    out.append((row["deck"], row["split"], row["played"], row["cycles"], ATLAS,
                                f"{config_path(uri)} (docs/atlas.md)"))
    return out


def config_path(uri: str) -> str:
    name = Path(uri).name.removeprefix("atlas-")
    return f"benchmarks/atlas/{name}.toml"


def build(runs: list[str], today: str) -> list[KnownCycle]:
    entries: dict[tuple[str, str], KnownCycle] = {}
    for deal, source, reference, held in [*published(), *own(runs)]:
        entry = entry_of(deal, source=source, reference=reference, max_states=MAX_STATES, confirmed="")
        key = (entry.cycle_id, entry.deck)
        if key in entries:
            continue  # published earlier, or met by an earlier run
        if entry.closure is None:
            confirmed = f"replayed on the reference player; closure not finished within {MAX_STATES:,} states"
        else:
            confirmed = (f"replayed on the reference player; closure by backward play: {entry.closure:,} states, "
                         f"{entry.balanced_deals:,} balanced deals, each replayed")
        if held:
            confirmed += f"; {held} (tests/test_catalogue.py)"
        entries[key] = KnownCycle(**{**entry.__dict__, "confirmed": confirmed})
    return sorted(entries.values(), key=lambda e: (parse_deck(e.deck).total, e.deck, e.period_cards,
                                                   e.period_tricks, e.cycle_id))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", metavar="RUN",
                        help="atlas runs and hunts whose cycles are the project's own finds")
    parser.add_argument("--check", action="store_true", help="say what would change; write nothing")
    parser.add_argument("--date", default=datetime.date.today().isoformat(), help="the confirmation date written")
    args = parser.parse_args()
    entries = build(args.runs, args.date)
    text = HEADER + "\t".join(COLUMNS) + "\n" + "".join(e.line() for e in entries)
    found = searches(args.runs)
    table = EXHAUSTIVE_HEADER + "\t".join(EXHAUSTIVE_COLUMNS) + "\n" + "".join(
        "\t".join(map(str, row)) + "\n" for row in found)
    old = (SHIPPED.read_text() if SHIPPED.exists() else "", EXHAUSTIVE.read_text() if EXHAUSTIVE.exists() else "")
    if args.check:
        same = (text, table) == old
        print("unchanged" if same else f"{SHIPPED} or {EXHAUSTIVE} would change ({len(entries)} cycles)")
        return 0 if same else 1
    SHIPPED.write_text(text)
    EXHAUSTIVE.write_text(table)
    decks = sorted({e.deck for e in entries})
    print(f"{len(entries)} cycles of {len(decks)} decks written to {SHIPPED}; {len(found)} exhaustive searches to "
          f"{EXHAUSTIVE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
