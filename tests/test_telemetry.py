"""Play telemetry: records in (formats, bad records, simulate), observed against rated, calibrate a
rating profile, and the profile used by rescore and checked by the validator."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.rating.profile import PLAYER_NAMES, ProfileError, RatingProfile, rescored
from pipeline.rating.score import score_from_metrics
from tests.helpers import run

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
NIGHT = REPO / "generated" / "2026-11-29"
BUNDLE = NIGHT / "bundle.yaml"
STOCK = REPO / "generated" / "stock"  # the committed stock of unshipped puzzles
AUDIENCE = "random:0.2,scanner:0.3,proximity:0.5"  # unlike the default mix (random 0.45, local 0.3)


def strong() -> RatingProfile:
    weights = tuple((n, 0.5 if n in ("planner", "lookahead") else 0.0) for n in PLAYER_NAMES)
    return RatingProfile(
        "strong",
        weights,
        (
            ("easy", 0.0, 10.0),
            ("medium", 10.0, 20.0),
            ("hard", 20.0, 50.0),
            ("expert", 50.0, 100.0),
        ),
    )


@pytest.fixture(scope="session")
def catalogue() -> Any:
    from pipeline.telemetry.catalogue import load_catalogue

    return load_catalogue([BUNDLE])


@pytest.fixture(scope="session")
def simulated(catalogue: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """80 simulated attempts on each of the committed night's 60 Stages (cheap players only)."""
    from pipeline.telemetry.simulate import parse_audience, simulate, write_records

    out = tmp_path_factory.mktemp("telemetry") / "night.jsonl"
    write_records(out, simulate(catalogue, parse_audience(AUDIENCE), 80, 11))
    return out


# --- the profile value -------------------------------------------------------------------------


def test_default_profile_gives_every_stored_score() -> None:
    """Cross-check: version 3's own mix as a profile reproduces each committed score exactly."""
    doc = yaml.safe_load(BUNDLE.read_text())
    default = RatingProfile.default()
    for level in doc["levels"]:
        for stage in level["stages"]:
            d = stage["puzzle"]["difficulty"]
            assert default.score(d) == d["score"] == score_from_metrics(d)
            assert default.tier_for(d["score"]) == d["tier"]


def test_the_accessor_scores_and_tiers_under_a_profile() -> None:
    from pipeline.formats.puzzle import Puzzle

    doc = yaml.safe_load(BUNDLE.read_text())
    puzzle = Puzzle.from_dict(doc["levels"][0]["stages"][0]["puzzle"])
    p = strong()
    score = p.score(puzzle.difficulty)
    assert puzzle.rated.score_under(p) == score != puzzle.rated.score
    assert puzzle.rated.tier_under(p) == p.tier_for(
        score
    )  # the profile's own table, not version 3's


def test_profile_value_text_repr_digest() -> None:
    p = strong()
    assert eval(repr(p), {"RatingProfile": RatingProfile}) == p
    assert str(p).startswith("strong: lookahead 0.50, planner 0.50 (tiers easy <10")
    assert p.digest.startswith("sha256:") and p.digest == strong().digest
    assert RatingProfile.default().digest != p.digest


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(weights=tuple((n, 0.1) for n in PLAYER_NAMES)), "sum to 1"),
        (dict(weights=(("random", 1.0),)), "each of the rating's players"),
        (
            dict(
                tiers=(
                    ("easy", 0.0, 50.0),
                    ("medium", 40.0, 60.0),
                    ("hard", 60.0, 90.0),
                    ("expert", 90.0, 100.0),
                )
            ),
            "each starting",
        ),
        (dict(name="has space"), "name"),
    ],
)
def test_bad_profiles_are_refused(change: dict[str, Any], message: str) -> None:
    fields = {
        "name": "x",
        "weights": RatingProfile.default().weights,
        "tiers": RatingProfile.default().tiers,
        **change,
    }
    with pytest.raises(ProfileError, match=message):
        RatingProfile(**fields)


# --- the validator and profile files ----------------------------------------------------------


def _puzzle_doc() -> dict[str, Any]:
    return yaml.safe_load(sorted(STOCK.rglob("*.yaml"))[0].read_text())


def _validate(
    tmp_path: Path, doc: dict[str, Any], profile: RatingProfile | None = None
) -> list[tuple[str, str]]:
    from pipeline.formats.puzzle import dump_yaml
    from pipeline.validator import validate_paths

    path = tmp_path / "p.yaml"
    path.write_text(dump_yaml(doc))
    return [(p.code, p.message) for p in validate_paths([path], profile=profile).problems]


def test_validator_checks_a_profile_scored_puzzle(tmp_path: Path) -> None:
    doc = _puzzle_doc()
    doc["difficulty"] = rescored(doc["difficulty"], strong())
    assert _validate(tmp_path, doc) == []
    assert _validate(tmp_path, doc, strong()) == []
    assert [c for c, _ in _validate(tmp_path, doc, RatingProfile.default())] == ["NM318"]
    # the stored score recomputed under the embedded weights, not the version's
    bad = json.loads(json.dumps(doc))
    bad["difficulty"]["profile"]["weights"]["planner"] = 0.4
    bad["difficulty"]["profile"]["weights"]["random"] = 0.1
    codes = [c for c, _ in _validate(tmp_path, bad)]
    assert "NM317" in codes and "NM310" in codes  # digest no longer matches, and the score moved
    bad = json.loads(json.dumps(doc))
    bad["difficulty"]["tier"] = "easy" if bad["difficulty"]["tier"] != "easy" else "expert"
    assert [c for c, _ in _validate(tmp_path, bad)] == ["NM309"]


def test_profile_file_round_trip_and_checks(tmp_path: Path) -> None:
    from pipeline.formats.profile_file import profile_document, write_profile
    from pipeline.validator import validate_paths
    from pipeline.validator.profiles import ProfileFileError, read_profile

    path = tmp_path / "strong.yaml"
    write_profile(path, profile_document(strong()))
    assert read_profile(path) == strong()
    assert validate_paths([path]).ok
    text = path.read_text().replace("lookahead: 0.5", "lookahead: 0.4")
    path.write_text(text)
    assert [p.code for p in validate_paths([path]).problems] == ["NM317"]
    with pytest.raises(ProfileFileError, match=r"strong.yaml:\d+:\d+: NM317: .*sum to 1"):
        # first_problem: validate's line
        read_profile(path)
    path.write_text("kind: rating-profile\nname: [1\n")
    with pytest.raises(ProfileFileError, match=r"strong.yaml:3:1: NM105: YAML syntax error"):
        read_profile(path)


# --- reading telemetry ------------------------------------------------------------------------


def test_formats_agree_and_bad_records_are_counted(
    catalogue: Any, simulated: Path, tmp_path: Path
) -> None:
    from pipeline.telemetry.records import read_telemetry
    from pipeline.telemetry.simulate import write_records

    records = [json.loads(line) for line in simulated.read_text().splitlines()[:300]]
    counts = {}
    for suffix in ("jsonl", "csv", "parquet"):
        path = tmp_path / f"t.{suffix}"
        write_records(path, records)
        t = read_telemetry([path], catalogue)
        assert t.records == 300 and not t.bad
        counts[suffix] = t.counts
    assert counts["jsonl"] == counts["csv"] == counts["parquet"]

    pid = records[0]["puzzle"]
    bad = tmp_path / "bad.jsonl"
    lines = [json.dumps(r) for r in records[:3]] + [
        "not json",
        json.dumps({**records[0], "outcome": "draw", "attempt": "x1"}),
        json.dumps({**records[0], "puzzle": "nm1-000000000000", "attempt": "x2"}),
        json.dumps(records[1]),
        "",
        json.dumps({**records[0], "adds_used": 99, "attempt": "x3"}),
        json.dumps(
            {
                "bundle": "nightly-2026-11-29",
                "level": 1,
                "stage": 1,
                "attempts": 10,
                "wins": 3,
                "abandons": 2,
            }
        ),
    ]
    bad.write_text("\n".join(lines) + "\n")
    t = read_telemetry([bad], catalogue)
    assert {b.kind: (b.count, b.first) for b in t.bad} == {
        "not-json": (1, (f"{bad}:4",)),
        "bad-field": (2, (f"{bad}:5", f"{bad}:9")),  # line 8 is blank
        "unknown-puzzle": (1, (f"{bad}:6",)),
        "duplicate-attempt": (1, (f"{bad}:7",)),
    }
    assert t.records == 4
    stage1 = catalogue.stage_puzzle("nightly-2026-11-29", 1, 1)
    assert t.counts[stage1].attempts >= 10 and pid in t.counts
    result = run("observed", str(bad), "--levels", str(BUNDLE), "--strict")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "--strict: 5 bad records" in result.output and f"{bad}:4" in result.output


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("t.jsonl", b'{"puzzle": "x"}\n\xff\xfe\n', ":2: not UTF-8"),
        ("t.csv", b"a,b\n" + b"x" * 70_000 + b"\n", ":2: the line is longer than 65,536 bytes"),
        ("t.jsonl", b"x" * 70_000 + b"\n", ":1: the line is longer than 65,536 bytes"),
        ("t.parquet", b"PAR1 not really parquet", "cannot read the telemetry"),
    ],
)
def test_unreadable_telemetry_is_one_line(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = run("observed", str(path), "--levels", str(BUNDLE))
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert (
        "unknown telemetry format" in run("observed", str(BUNDLE), "--levels", str(BUNDLE)).output
    )


def test_simulate_is_deterministic_and_fits_the_schema(catalogue: Any, tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    args = [
        "telemetry",
        "simulate",
        str(BUNDLE),
        "--audience",
        "random:0.6,local:0.4",
        "--attempts",
        "5",
    ]
    outs = []
    for name, seed in (("a", "3"), ("b", "3"), ("c", "4")):
        result = run(*args, "--seed", seed, "--out", str(tmp_path / f"{name}.jsonl"))
        assert result.exit_code == 0, result.output
        outs.append((tmp_path / f"{name}.jsonl").read_bytes())
    assert outs[0] == outs[1] != outs[2]
    schema = json.loads((REPO / "schemas" / "telemetry-attempt.schema.json").read_text())
    validator = Draft202012Validator(schema)
    for line in outs[0].decode().splitlines():
        assert not list(validator.iter_errors(json.loads(line)))
    assert (
        "unknown player 'nobody'"
        in run(*args, "--audience", "nobody:1", "--out", str(tmp_path / "x.jsonl")).output
    )


# --- observed -----------------------------------------------------------------------------------


def test_wilson_and_spearman() -> None:
    from pipeline.telemetry.stats import spearman, wilson

    low, high = wilson(71, 100)
    assert (round(low, 3), round(high, 3)) == (
        0.631,
        0.778,
    )  # by hand: centre 0.7045, half-width 0.0739
    assert wilson(0, 0) == (0.0, 1.0)
    assert spearman([1, 2, 3, 4], [10, 20, 30, 35]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)


def test_observed_flags_and_reports(catalogue: Any, simulated: Path, tmp_path: Path) -> None:
    from pipeline.telemetry.observed import observe
    from pipeline.telemetry.records import read_telemetry

    obs = observe(catalogue, read_telemetry([simulated], catalogue))
    assert len(obs.measured()) == 60
    for p in obs.puzzles:  # flagged exactly when the interval misses the tier's range
        outside = p.low * 100 >= p.tier_high or p.high * 100 < p.tier_low
        assert (p.flag is not None) == outside
    flagged = [p for p in obs.puzzles if p.flag]
    assert flagged and flagged[0].flag_text().startswith(
        f"plays {flagged[0].flag} than rated: lost "
    )
    text = run("observed", str(simulated), "--levels", str(BUNDLE))
    assert (
        text.exit_code == 0
        and "Spearman (rated, observed)" in text.output
        and "nightly-2026-11-29 L10:" in text.output
    )
    data = json.loads(
        run("observed", str(simulated), "--levels", str(BUNDLE), "--format", "json").output
    )
    assert data["summary"]["puzzles"] == 60 and len(data["curves"]) == 10
    out = tmp_path / "observed.html"
    assert (
        run(
            "observed",
            str(simulated),
            "--levels",
            str(BUNDLE),
            "--format",
            "html",
            "--out",
            str(out),
        ).exit_code
        == 0
    )
    html = out.read_text()
    assert "<svg" in html and "Per-Level curves" in html and "Calibration" in html


# --- calibrate and the small study ----------------------------------------------------------------


def test_calibrate_beats_the_default_for_an_unlike_audience(
    simulated: Path, tmp_path: Path
) -> None:
    out = tmp_path / "aud.yaml"
    result = run(
        "calibrate",
        str(simulated),
        "--levels",
        str(BUNDLE),
        "--out",
        str(out),
        "--date",
        "2026-12-01",
    )
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(out.read_text())
    held = doc["heldout"]
    assert held["fitted"]["mae"] < held["default"]["mae"]
    assert (
        doc["weights"]["proximity"] > 0.2 and doc["weights"]["local"] < 0.15
    )  # the audience's, not the default's
    assert doc["fitted_from"]["puzzles"] == 60 and doc["fitted_from"]["date"] == "2026-12-01"
    again = tmp_path / "again.yaml"
    run(
        "calibrate",
        str(simulated),
        "--levels",
        str(BUNDLE),
        "--out",
        str(again),
        "--date",
        "2026-12-01",
        "--name",
        "aud",
    )
    assert again.read_bytes() == out.read_bytes()
    assert run("validate", str(out)).exit_code == 0


def test_calibrate_refuses_thin_data(catalogue: Any, simulated: Path, tmp_path: Path) -> None:
    thin = tmp_path / "thin.jsonl"
    thin.write_text(
        "".join(
            line + "\n"
            for line in simulated.read_text().splitlines()
            if line.split('"puzzle":"')[1][:16] < "nm1-4"
        )
    )
    result = run("calibrate", str(thin), "--levels", str(BUNDLE), "--out", str(tmp_path / "p.yaml"))
    assert result.exit_code == 1 and not (tmp_path / "p.yaml").exists()
    assert "cannot fit a profile:" in result.output and "a fit needs 20: it needs " in result.output
    assert "more puzzles with 30 finished attempts each" in result.output


def test_small_study_improves_held_out_error() -> None:
    """The study in miniature: telemetry on half the night's puzzles, the profile judged on the other half."""
    from research.telemetry_study import run_audience

    row = run_audience(
        "weak",
        {"random": 0.5, "scanner": 0.5},
        attempts=60,
        truth_games=120,
        seed=5,
        puzzles=BUNDLE,
    )
    assert row["after"]["mae"] < row["before"]["mae"]


# --- rescore --------------------------------------------------------------------------------------


def test_rescore_keeps_the_text_and_stays_valid(tmp_path: Path) -> None:
    from pipeline.formats.profile_file import profile_document, write_profile
    from pipeline.validator import validate_paths

    night = tmp_path / "night"
    shutil.copytree(NIGHT, night)
    profile = tmp_path / "strong.yaml"
    write_profile(profile, profile_document(strong()))
    before = (night / "bundle.yaml").read_text()
    result = run("rescore", "--profile", str(profile), str(night / "bundle.yaml"))
    assert result.exit_code == 0, result.output
    after = (night / "bundle.yaml").read_text()
    assert validate_paths([night / "bundle.yaml"], profile=strong()).ok
    moved = ("tier:", "score:", "target_score:")  # the targets move to the profile's scale too
    old_lines = [ln for ln in before.splitlines() if not ln.lstrip().startswith(moved)]
    new_lines = [ln for ln in after.splitlines() if not ln.lstrip().startswith(moved)]
    kept = [ln for ln in new_lines if ln in set(old_lines)]
    assert kept == old_lines  # every other line kept, in order; only the profile blocks are new
    doc = yaml.safe_load(after)
    d = doc["levels"][0]["stages"][0]["puzzle"]["difficulty"]
    assert d["score"] == strong().score(d) and d["profile"]["name"] == "strong"
    # a file that does not validate is refused and nothing is written
    pool = night / "pool"
    pool.mkdir()
    for f in sorted(STOCK.rglob("*.yaml"))[:3]:
        shutil.copy(f, pool / f.name)
    broken = pool / "zz-broken.yaml"
    broken.write_text("kind: puzzle\n")
    pool_before = {p: p.read_bytes() for p in pool.glob("*.yaml")}
    result = run("rescore", "--profile", str(profile), str(pool))
    assert (
        result.exit_code == 1
        and "broken.yaml" in result.output
        and "Traceback" not in result.output
    )
    assert {p: p.read_bytes() for p in pool.glob("*.yaml")} == pool_before


# --- --profile on the other commands --------------------------------------------------------------


def test_rate_assemble_swap_validate_take_a_profile(tmp_path: Path) -> None:
    from pipeline.formats.profile_file import profile_document, write_profile

    profile = tmp_path / "strong.yaml"
    write_profile(profile, profile_document(strong()))
    plain = json.loads(run("rate", f"{BUNDLE}:L1.S1", "--json").output)
    under = json.loads(run("rate", f"{BUNDLE}:L1.S1", "--json", "--profile", str(profile)).output)
    assert under["score"] == strong().score(plain) != plain["score"]
    assert (
        under["tier"] == strong().tier_for(under["score"])
        and under["profile"]["digest"] == strong().digest
    )
    out = tmp_path / "b.yaml"
    result = run(
        "assemble",
        str(STOCK),
        "--levels",
        "1",
        "--stages",
        "3",
        "--out",
        str(out),
        "--profile",
        str(profile),
    )
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(out.read_text())
    blocks = [s["puzzle"]["difficulty"] for s in doc["levels"][0]["stages"]]
    assert all(b["profile"]["name"] == "strong" and b["score"] == strong().score(b) for b in blocks)
    assert run("validate", str(out), "--profile", str(profile)).exit_code == 0
    assert run("validate", str(out), "--deep").exit_code == 0  # re-rated under the embedded profile
    default = tmp_path / "default.yaml"
    write_profile(default, profile_document(RatingProfile.default()))
    result = run("validate", str(out), "--profile", str(default))
    assert result.exit_code == 1 and "NM318" in result.output
    result = run("swap", str(out), "L1.S2", "--pool", str(STOCK), "--profile", str(profile))
    assert result.exit_code == 0, result.output
    assert run("validate", str(out), "--profile", str(profile)).exit_code == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: rating-profile\n")
    result = run("rate", f"{BUNDLE}:L1.S1", "--profile", str(bad))
    assert (
        result.exit_code == 1 and "bad.yaml" in result.output and "Traceback" not in result.output
    )


def test_generate_and_nightly_rate_under_a_profile(tmp_path: Path) -> None:
    from pipeline.formats.profile_file import profile_document, write_profile

    profile = tmp_path / "strong.yaml"
    write_profile(profile, profile_document(strong()))
    out = tmp_path / "gen"
    result = run(
        "generate",
        "--count",
        "1",
        "--cells",
        "27",
        "--adds",
        "2",
        "--tier",
        "medium",
        "--seed",
        "3",
        "--jobs",
        "1",
        "--out",
        str(out),
        "--profile",
        str(profile),
    )
    assert result.exit_code == 0, result.output
    (made,) = out.glob("*.yaml")
    doc = yaml.safe_load(made.read_text())
    d = doc["difficulty"]
    assert d["profile"]["name"] == "strong" and doc["provenance"]["params"]["profile"] == "strong"
    assert (
        strong().tier_for(strong().score(d)) == "medium" == d["tier"]
    )  # the profile's medium: 10-20
    job = tmp_path / "job.yaml"
    job.write_text(
        "schema_version: 1\nkind: curves\ncurves:\n- name: two\n  levels:\n  - [easy, medium]\n"
        "job: {curve: two, levels: 1, stages: 2, profile: strong.yaml}\n"
    )
    result = run(
        "nightly",
        "--date",
        "2026-12-02",
        "--job",
        str(job),
        "--out",
        str(tmp_path / "nights"),
        "--jobs",
        "1",
    )
    assert result.exit_code == 0, result.output
    bundle = tmp_path / "nights" / "2026-12-02" / "bundle.yaml"
    assert run("validate", str(bundle), "--profile", str(profile)).exit_code == 0
    assert all(
        s["puzzle"]["difficulty"]["profile"]["name"] == "strong"
        for s in yaml.safe_load(bundle.read_text())["levels"][0]["stages"]
    )


def test_studio_cards_show_observed_figures_and_the_audience_score(
    catalogue: Any, simulated: Path, tmp_path: Path
) -> None:
    pytest.importorskip("starlette", reason="the studio's web packages are not installed")
    from starlette.testclient import TestClient

    from pipeline.studio.app import create_app
    from pipeline.telemetry.observed import observe, stage_figures
    from pipeline.telemetry.records import read_telemetry

    night = tmp_path / "generated" / "2026-11-29"
    shutil.copytree(NIGHT, night)
    figures = stage_figures(observe(catalogue, read_telemetry([simulated], catalogue)))
    client = TestClient(
        create_app(tmp_path / "generated", observed=figures, profile=strong()),
        base_url="http://127.0.0.1:8765",
    )
    page = client.get("/bundle", params={"path": "2026-11-29/bundle.yaml"})
    assert page.status_code == 200
    first = catalogue.stage_puzzle("nightly-2026-11-29", 1, 1)
    f = figures[first]
    assert (
        f"players lost {f['observed'] * 100:.0f}% ({f['low'] * 100:.0f}-{f['high'] * 100:.0f}%) of {f['games']} games"
        in page.text
    )
    assert page.text.count('class="observed') == 60 and "audience" in page.text
    plain = TestClient(create_app(tmp_path / "generated"), base_url="http://127.0.0.1:8765").get(
        "/bundle", params={"path": "2026-11-29/bundle.yaml"}
    )
    assert "players lost" not in plain.text and "audience" not in plain.text


def test_the_fast_and_the_line_reader_agree(
    catalogue: Any, simulated: Path, tmp_path: Path
) -> None:
    """A JSON Lines file without blank lines goes through DuckDB's own reader; one with a blank
    line through the line reader: the same counts and the same bad records at the same lines."""
    from pipeline.telemetry.records import read_telemetry

    lines = simulated.read_text().splitlines()[:400]
    lines[10] = lines[9]  # a duplicate attempt at line 11
    lines[20] = lines[20].replace(
        '"puzzle":"nm1-', '"puzzle":"nm9-'
    )  # an unknown puzzle at line 21
    lines[30] = lines[30].replace('"moves":', '"moves":"x","was":')  # a bad field at line 31
    dense, loose = tmp_path / "dense.jsonl", tmp_path / "loose.jsonl"
    dense.write_text("\n".join(lines) + "\n")
    loose.write_text(
        "\n".join(lines) + "\n\n"
    )  # the trailing blank line sends it down the line path
    a, b = read_telemetry([dense], catalogue), read_telemetry([loose], catalogue)
    assert a.counts == b.counts and a.records == b.records == 397
    assert (
        [(x.kind, x.count, [p.split(":")[-1] for p in x.first]) for x in a.bad]
        == [(x.kind, x.count, [p.split(":")[-1] for p in x.first]) for x in b.bad]
        == [
            ("bad-field", 1, ["31"]),
            ("unknown-puzzle", 1, ["21"]),
            ("duplicate-attempt", 1, ["11"]),
        ]
    )


def test_a_list_or_an_object_is_a_bad_field_on_both_readers(
    catalogue: Any, simulated: Path, tmp_path: Path
) -> None:
    """DuckDB's JSON reader, asked for text, gave a list `"player": [1]` as the text "[1]" (a
    valid player): a list or an object where a value belongs is a bad field on the fast path
    too, as on the line path (the fuzz test found it)."""
    from pipeline.telemetry.records import read_telemetry

    lines = simulated.read_text().splitlines()[:100]
    first = json.loads(lines[0])
    assert "player" in first and "client" in first
    lines[10] = lines[10].replace('"player":', '"player":[1],"was":', 1)
    lines[20] = lines[20].replace('"client":', '"client":{"a":1},"was":', 1)
    lines[30] = lines[30].replace('"player":', '"player":"[1]","was":', 1)  # a string: fine
    dense, loose = tmp_path / "dense.jsonl", tmp_path / "loose.jsonl"
    dense.write_text("\n".join(lines) + "\n")
    loose.write_text("\n".join(lines) + "\n\n")
    for path in (dense, loose):
        bad = [
            (x.kind, x.count, [p.split(":")[-1] for p in x.first])
            for x in read_telemetry([path], catalogue).bad
        ]
        assert bad == [("bad-field", 2, ["11", "21"])], path.name


def test_observed_html_says_what_its_charts_draw_and_json_gives_points_as_the_text(
    catalogue: Any, simulated: Path
) -> None:
    import re

    from pipeline.telemetry.observed import observe, render_html
    from pipeline.telemetry.records import read_telemetry

    obs = observe(catalogue, read_telemetry([simulated], catalogue))
    html = render_html(obs)
    levels = html.split("<h2>Per-Level curves</h2>")[1].split("<h2>Puzzles</h2>")[0]
    charts = re.findall(r"<svg.*?</svg>", levels, re.S)
    assert len(charts) == 10
    for (
        chart
    ) in charts:  # the legend under each chart is the caption's: rated dashed, observed solid
        assert (
            ">rated loss rate</text>" in chart
            and "observed loss rate (dot: its rated tier)" in chart
        )
        assert ">target</text>" not in chart and "actual score" not in chart
    plot = re.search(r'<figure class="calibration" id="calibration">(<svg.*?</svg>)', html, re.S)
    assert plot and 'viewBox="0 0 1100 ' in plot.group(1)
    assert "figure.calibration svg { width: 100%;" in html  # scaled to the page's width
    title_x = float(re.search(r'<text x="([0-9.]+)"[^>]*rotate\(-90', plot.group(1)).group(1))  # type: ignore[union-attr]
    ticks_end = min(
        float(x) for x in re.findall(r'<text x="([0-9.]+)"[^>]*text-anchor="end">', plot.group(1))
    )
    assert title_x + 8 < ticks_end - 4 * 7  # the title's line clears "100%" (4 glyphs ~7 px)
    for tier in {p.tier for p in obs.measured()}:  # a colour legend for the dots
        assert f">{tier}</text>" in plot.group(1)
    data = json.loads(
        run("observed", str(simulated), "--levels", str(BUNDLE), "--format", "json").output
    )
    text = run("observed", str(simulated), "--levels", str(BUNDLE)).output
    shown = re.search(r"mean absolute error ([0-9.]+) points", text).group(1)  # type: ignore[union-attr]
    assert f"{data['summary']['mae']:.1f}" == shown and data["summary"]["mae"] > 1


def test_calibrate_json_is_one_summary_object_in_points(simulated: Path, tmp_path: Path) -> None:
    out = tmp_path / "casual.yaml"
    argv = [
        "calibrate",
        str(simulated),
        "--levels",
        str(BUNDLE),
        "--out",
        str(out),
        "--date",
        "2026-12-01",
    ]
    data = json.loads(run(*argv, "--json").stdout)
    text = run(*[a if a != str(out) else str(tmp_path / "again.yaml") for a in argv]).stdout
    assert data["out"] == str(out) and out.is_file() and data["profile"]["name"] == "casual"
    assert f"fitted MAE {data['heldout']['fitted']['mae']:.1f} points" in text
    assert abs(sum(data["weights"].values()) - 1) < 1e-3


# --- hostile input: outputs, names, integers, the record limit, messages --------------------------


def _lines(simulated: Path, n: int) -> list[dict[str, Any]]:
    return [json.loads(line) for line in simulated.read_text().splitlines()[:n]]


def test_telemetry_outputs_go_through_the_guarded_write(simulated: Path, tmp_path: Path) -> None:
    """`observed --out`, `calibrate --out` and `telemetry simulate --out` used to replace any
    file (a bundle, a 0600 notes file, an unrelated CSV), reset the mode and turn a link into a
    file: now another kind is refused in one line, the mode is kept, a link is written through."""
    from tests.helpers import one_line_refusal

    bundle = tmp_path / "bundle.yaml"
    shutil.copy(BUNDLE, bundle)
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n")
    os.chmod(notes, 0o600)
    sales = tmp_path / "sales.csv"
    sales.write_text("region,amount\neu,12\n")
    kept = {p: p.read_bytes() for p in (bundle, notes, sales)}
    observed = ["observed", str(simulated), "--levels", str(BUNDLE)]
    one_line_refusal(
        run(*observed, "--out", str(bundle)), "bundle.yaml: exists and is a bundle file"
    )
    one_line_refusal(
        run(*observed, "--format", "html", "--out", str(notes)),
        "notes.md: exists and is a file of another kind; nothing written (--force replaces it)",
    )
    one_line_refusal(
        run("calibrate", str(simulated), "--levels", str(BUNDLE), "--out", str(bundle)),
        "bundle.yaml: exists and is a bundle file",
    )
    simulate = ["telemetry", "simulate", str(BUNDLE), "--audience", "random:1", "--attempts", "1"]
    one_line_refusal(
        run(*simulate, "--out", str(sales)), "sales.csv: exists and is a file of another kind"
    )
    assert {p: p.read_bytes() for p in kept} == kept
    # the same kind again is a rerun: replaced; through a link, the shared file changes
    shared = tmp_path / "shared"
    shared.mkdir()
    report = shared / "observed.json"
    assert run(*observed, "--format", "json", "--out", str(report)).exit_code == 0
    link = tmp_path / "link.json"
    link.symlink_to(report)
    report.write_text(report.read_text().replace('"records"', '"records_before"'))
    os.chmod(report, 0o640)
    assert run(*observed, "--format", "json", "--out", str(link)).exit_code == 0
    assert link.is_symlink() and '"records_before"' not in report.read_text()
    assert stat.S_IMODE(report.stat().st_mode) == 0o640
    text_out = tmp_path / "observed.txt"
    for _ in range(2):
        assert run(*observed, "--out", str(text_out)).exit_code == 0
    for suffix in ("jsonl", "csv", "parquet"):
        out = tmp_path / f"sim.{suffix}"
        for seed in ("1", "2"):  # a second run replaces the first's simulated telemetry
            result = run(*simulate, "--seed", seed, "--out", str(out))
            assert result.exit_code == 0, result.output
    forced = run(*observed, "--format", "html", "--out", str(notes), "--force")
    assert forced.exit_code == 0 and "<svg" in notes.read_text()
    assert stat.S_IMODE(notes.stat().st_mode) == 0o600  # a private file stays private


@pytest.mark.parametrize(
    "name, neighbours",
    [
        ("[ab].jsonl", ("a.jsonl", "b.jsonl")),
        ("x*.jsonl", ("x1.jsonl", "xx.jsonl")),
        ("q?.csv", ("qa.csv", "qb.csv")),
        ("~/t.jsonl", ("home/t.jsonl",)),
    ],
)
def test_a_telemetry_name_is_read_literally(
    catalogue: Any,
    simulated: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    neighbours: tuple[str, ...],
) -> None:
    """DuckDB used to expand globs and `~`: `observed '[ab].jsonl'` read a.jsonl and b.jsonl
    (and the digest recorded was the named file's). Exactly the named file is read now."""
    import hashlib

    from pipeline.telemetry.records import read_telemetry
    from pipeline.telemetry.simulate import write_records

    records = _lines(simulated, 40)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "~").mkdir()
    (tmp_path / "home").mkdir()
    write_records(tmp_path / name, records[:1])
    for k, other in enumerate(neighbours):
        write_records(tmp_path / other, records[1 + 10 * k : 11 + 10 * k])
    t = read_telemetry([name], catalogue)
    assert t.records == 1 and t.files == (name,)
    data = (tmp_path / name).read_bytes()
    assert t.digest == "sha256:" + hashlib.sha256(f"{len(data)}:".encode() + data).hexdigest()
    result = run("observed", name, "--levels", str(BUNDLE))
    assert result.exit_code == 0 and result.output.startswith("telemetry: 1 record (1 attempt")


BAD_INTEGERS = [
    ("adds_used", 0.6),
    ("moves", 2.5),
    ("moves", "0x1"),
    ("moves", "1e3"),
    ("moves", "1_000"),
    ("moves", " 7"),
    ("moves", "+7"),
    ("adds_used", -0.4),
    ("adds_used", -1),
    ("seconds", "0x1"),
    ("seconds", "infinity"),
    ("at", "infinity"),
    ("at", "yesterday"),
]


def _write_as(path: Path, rows: list[dict[str, Any]]) -> None:
    """`rows` as JSON Lines, CSV (each value's JSON text, strings bare) or Parquet (DuckDB's
    types inferred from the JSON: a column of 2.5 and 3 is DOUBLE)."""
    import duckdb

    jsonl = path.with_suffix(".jsonl")
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    if path.suffix == ".csv":
        fields = list(dict.fromkeys(k for r in rows for k in r))
        text = [",".join(fields)]
        for r in rows:
            cells = [r.get(f, "") for f in fields]
            text.append(",".join(c if isinstance(c, str) else json.dumps(c) for c in cells))
        path.write_text("\n".join(text) + "\n")
    elif path.suffix == ".parquet":
        con = duckdb.connect()
        con.execute(f"COPY (SELECT * FROM read_json('{jsonl}')) TO '{path}' (FORMAT parquet)")
        con.close()


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
def test_integers_are_whole_numbers_in_every_format(
    catalogue: Any, simulated: Path, tmp_path: Path, suffix: str
) -> None:
    """DuckDB's try_cast rounded 2.5, read "0x1" and "1e3", and took "infinity" as a time: each
    was a good record under --strict. Each is a bad field now, in every format; a whole number
    written 3.0 (a DOUBLE column in Parquet) is still one."""
    from pipeline.telemetry.records import TelemetryError, read_telemetry

    good = _lines(simulated, 1)[0]
    for field, value in BAD_INTEGERS:
        path = tmp_path / f"t-{field}-{BAD_INTEGERS.index((field, value))}.{suffix}"
        _write_as(path, [good, {**good, field: value, "attempt": "second"}])
        t = read_telemetry([path], catalogue)
        unit = "row " if suffix == "parquet" else ""
        line = 3 if suffix == "csv" else 2
        assert [(b.kind, b.first) for b in t.bad] == [("bad-field", (f"{path}:{unit}{line}",))], (
            field,
            value,
        )
        with pytest.raises(TelemetryError, match="--strict: 1 bad record: 1 bad-field"):
            read_telemetry([path], catalogue, strict=True)
    whole = tmp_path / f"whole.{suffix}"
    _write_as(whole, [{**good, "moves": 3.0}, {**good, "moves": 2, "attempt": "b"}])
    assert read_telemetry([whole], catalogue, strict=True).records == 2
    aggregate = tmp_path / f"agg.{suffix}"
    pid = good["puzzle"]
    _write_as(
        aggregate,
        [
            {"puzzle": pid, "attempts": "0x3e8", "wins": 0.5, "abandons": -0.4},
            {"puzzle": pid, "attempts": "10", "wins": 1, "abandons": 0},
        ],
    )
    t = read_telemetry([aggregate], catalogue)
    assert t.counts[pid].attempts == 10 and t.bad_total == 1  # not 1,000 attempts and 1 win


def test_the_record_limit_is_enforced_naming_the_line(
    catalogue: Any, simulated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 70 KB JSON Lines record was accepted; after a blank line it was "CSV Error on Line: 3";
    a long CSV row was blamed on the header. Each is one line naming the file, the line and the
    limit, refused while streaming, before DuckDB is started."""
    import duckdb

    from pipeline.telemetry.records import TelemetryError, read_telemetry

    good = json.dumps(_lines(simulated, 1)[0])
    long = json.dumps({**json.loads(good), "player": "p" * 70_000})
    cases = {
        "dense.jsonl": (f"{good}\n{long}\n{good}\n", 2, "the line"),
        "blank.jsonl": (f"{good}\n\n{long}\n", 3, "the line"),
        "unended.jsonl": (f"{good}\n{long}", 2, "the line"),
        "row.csv": ("puzzle,outcome,player\n" + "nm1-x,won," + "p" * 70_000 + "\n", 2, "the line"),
        "quoted.csv": (
            "puzzle,outcome,player\nnm1-x,won,ok\n" + 'nm1-x,won,"' + "p\n" * 40_000 + '"\n',
            3,
            "the record starting here",
        ),
    }
    monkeypatch.setattr(duckdb, "connect", lambda **_: pytest.fail("DuckDB started"))
    for name, (text, line, what) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(TelemetryError) as caught:
            read_telemetry([path], catalogue)
        message = str(caught.value)
        assert message.startswith(f"{path}:{line}: {what}") and "\n" not in message
        assert "longer than 65,536 bytes, the limit of one telemetry record" in message


def test_paths_that_are_no_file_say_what_they_are(tmp_path: Path) -> None:
    """A FIFO, a symlink loop and a folder were each "no such file" (and a FIFO must never be
    opened: it blocks); an unterminated CSV quote was DuckDB's "Error when sniffing file"."""
    from tests.helpers import one_line_refusal

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(tmp_path / "loop2.jsonl")
    (tmp_path / "loop2.jsonl").symlink_to(loop)
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    dangling = tmp_path / "gone.jsonl"
    dangling.symlink_to(tmp_path / "nowhere.jsonl")
    quote = tmp_path / "quote.csv"
    quote.write_text(
        'puzzle,outcome,adds_used,moves\nnm1-x,won,0,3\n"nm1-x,won,0,3\nnm1-y,lost,0,1\n'
    )
    expected = {
        fifo: "is a named pipe (FIFO), not a file",
        loop: "is a loop of symbolic links",
        folder: "is a folder, not a telemetry file",
        dangling: "is a link to a missing file",
        tmp_path / "missing.jsonl": "no such file",
        quote: "quote.csv:3: a quoted field opened on this line is never closed",
    }
    for path, text in expected.items():
        for command in ("observed", "calibrate"):
            args = [command, str(path), "--levels", str(BUNDLE)]
            if command == "calibrate":
                args += ["--out", str(tmp_path / "p.yaml")]
            one_line_refusal(run(*args), f"{path.name}: {text}" if path != quote else text)


def test_counts_are_singular_for_one(catalogue: Any, simulated: Path, tmp_path: Path) -> None:
    """ "1 records", "1 puzzles" no more."""
    from pipeline.telemetry.records import read_telemetry

    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(_lines(simulated, 1)[0]) + "\n")
    t = read_telemetry([one], catalogue)
    assert t.summary() == "1 record (1 attempt, 0 abandoned) on 1 puzzle; 0 bad records skipped"
    text = run("observed", str(one), "--levels", str(BUNDLE)).output
    assert "1 record (" in text and " 1 records" not in text and " 1 puzzles" not in text
    from pipeline.formats.files import write_puzzles
    from pipeline.formats.puzzle import Puzzle

    doc = yaml.safe_load(BUNDLE.read_text())["levels"][0]["stages"][0]["puzzle"]
    [puzzle] = write_puzzles([Puzzle.from_dict(doc)], tmp_path / "one")
    made = run(
        "telemetry",
        "simulate",
        str(puzzle),
        "--audience",
        "random:1",
        "--attempts",
        "1",
        "--out",
        str(tmp_path / "s.jsonl"),
    )
    assert (
        made.exit_code == 0
        and made.output == f"wrote 1 attempt on 1 puzzle to {tmp_path / 's.jsonl'}\n"
    )


def test_a_broken_profile_file_is_named_once(tmp_path: Path) -> None:
    """NM317 said "the profile: rating profile 'casual': ..."."""
    from pipeline.formats.profile_file import profile_document, profile_text

    text = profile_text(profile_document(strong())).replace("planner: 0.5", "planner: 0.4")
    path = tmp_path / "casual.yaml"
    path.write_text(text)
    result = run("validate", str(path))
    assert "NM317: rating profile 'strong': the weights must sum to 1" in result.output
    assert "the profile: rating profile" not in result.output


def test_hostile_telemetry_handed_to_the_studio_is_one_line(
    simulated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`studio --telemetry` reads with the same reader: a FIFO, a pattern's neighbours, a
    record over the limit, a Parquet bomb end in one line before the server starts."""
    import duckdb

    from tests.helpers import one_line_refusal

    monkeypatch.chdir(tmp_path)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    long = tmp_path / "long.jsonl"
    long.write_text(simulated.read_text().splitlines()[0] + "\n" + "x" * 70_000 + "\n")
    bomb = tmp_path / "bomb.parquet"
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT repeat('a', 1000000) AS puzzle FROM range(3)) TO '{bomb}' (FORMAT parquet)"
    )
    con.close()
    shutil.copy(simulated, tmp_path / "a.jsonl")  # what '[ab].jsonl' would have read
    cases = {
        fifo: "pipe.jsonl: is a named pipe (FIFO)",
        long: "long.jsonl:2: the line is longer than 65,536 bytes",
        bomb: "column 'puzzle' decompresses to",
        Path("[ab].jsonl"): "[ab].jsonl: no such file",
    }
    for path, text in cases.items():
        result = run("studio", str(NIGHT), "--telemetry", str(path))
        one_line_refusal(result, text)
        assert result.output.startswith("numbermatch: error: --telemetry: ")
