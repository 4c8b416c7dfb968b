"""``make upstream``: the frameworks' own store tests, from their sdists, run against prefrontal.

For each suite of :data:`SUITES`: the sdist of the installed version of its
package is downloaded from the package registry (``pip download --no-deps
--no-binary :all:``), extracted under ``.upstream/``, and its test files run
unmodified with the plugin :mod:`prefrontal_upstream` (which swaps
``PrefrontalStore`` in for the framework's store). Every test's outcome is
written to ``docs/upstream.md``: a table of passed / not applicable / failed
per suite, then each test with its outcome and, where it does not apply,
the reason. The exit status is 1 when a test failed or errored, or a
suite ran no test at all (``.ci/run`` runs it, so CI fails then), else 0.

Usage: ``python tests/upstream/run_upstream.py [--out docs/upstream.md]``
(with ``PYTHONPATH=src:tests/upstream``, as ``make upstream`` runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
from collections import Counter
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / ".upstream"


@dataclass(frozen=True)
class Suite:
    """One framework package's test files to run against prefrontal."""

    package: str
    files: tuple[str, ...]
    seat: str


SUITES = (
    Suite("langgraph-checkpoint", ("tests/test_store.py",), "InMemoryStore -> PrefrontalStore"),
    Suite(
        "langgraph-checkpoint-sqlite",
        ("tests/test_store.py", "tests/test_async_store.py", "tests/test_ttl.py"),
        "SqliteStore, AsyncSqliteStore -> PrefrontalStore over prefrontal's SQLite",
    ),
    Suite(
        "openai-agents",
        ("tests/memory/test_session.py", "tests/memory/test_session_limit.py"),
        "SQLiteSession -> PrefrontalSession (in-memory stores, or prefrontal's SQLite file)",
    ),
)


def sdist(package: str) -> Path:
    """The extracted sdist of the installed version of ``package`` (downloaded once)."""
    pinned = f"{package}=={version(package)}"
    folder = WORK / pinned
    if folder.exists():
        return folder
    WORK.mkdir(exist_ok=True)
    downloads = WORK / "sdists"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"),
            *("--no-binary", ":all:", pinned, "-d", str(downloads)),
        ],
        check=True,
    )
    stem = package.replace("-", "_")
    archive = next(downloads.glob(f"{stem}-{version(package)}.tar.gz"))
    with tarfile.open(archive) as opened:
        opened.extractall(WORK / "extract", filter="data")
    (WORK / "extract" / f"{stem}-{version(package)}").rename(folder)
    return folder


SUITE_TIMEOUT_S = 900
"""How long one suite may run before it is killed and counted as failed."""


def run(suite: Suite, timeout_s: float = SUITE_TIMEOUT_S) -> list[dict[str, str]]:
    """Run the suite's files with the plugin; each test's outcome.

    A suite still running after ``timeout_s`` is killed (its process, threads
    and all) and adds a failed outcome saying so: a hang fails the run loudly.
    """
    folder = sdist(suite.package)
    report = WORK / f"{suite.package}.jsonl"
    report.unlink(missing_ok=True)
    paths = [str(ROOT / "src"), str(ROOT / "tests" / "upstream")]
    command = [
        *(sys.executable, "-m", "pytest", "-q", "-p", "prefrontal_upstream"),
        *("-p", "no:randomly", "-p", "no:cacheprovider", "-o", "addopts="),
        *("--timeout", "120", *suite.files),
    ]
    environment = {
        **os.environ,
        "PYTHONPATH": ":".join(paths),
        "PREFRONTAL_UPSTREAM_REPORT": str(report),
        "PREFRONTAL_UPSTREAM_SUITE": suite.package,
    }
    timed_out = False
    try:
        subprocess.run(command, cwd=folder, env=environment, check=False, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    lines = report.read_text(encoding="utf-8").splitlines() if report.exists() else []
    outcomes = [json.loads(line) for line in lines]
    if timed_out:
        print(f"{suite.package}: still running after {timeout_s:g} s, killed", file=sys.stderr)
        outcomes.append(
            {
                "test": "(the whole suite)",
                "outcome": "failed",
                "reason": f"still running after {timeout_s:g} s: killed",
            }
        )
    return outcomes


def page(results: dict[Suite, list[dict[str, str]]]) -> str:
    """The results page: counts per suite, then every test."""
    lines = [
        "# The frameworks' own tests",
        "",
        "`make upstream` downloads the sdists of the installed framework versions,",
        "runs their store and session test files unmodified against prefrontal (a pytest plugin,",
        "`tests/upstream/prefrontal_upstream.py`, swaps prefrontal's seat in for the",
        "framework's store or session), and writes this page. A test that does not apply tests",
        "the framework store's or session's own machinery; its reason is given. `make test` never",
        "runs these (it stays offline); CI (`.ci/run`) runs `make upstream` after it, and a",
        "suite still running after its timeout (900 s) is killed and counted as failed.",
        "",
        "| suite | version | seat | passed | n.a. | failed |",
        "|---|---|---|---|---|---|",
    ]
    for suite, outcomes in results.items():
        counts = Counter(o["outcome"] for o in outcomes)
        lines.append(
            f"| {suite.package} | {version(suite.package)} | {suite.seat} | "
            f"{counts['passed']} | {counts['n.a.']} | {counts['failed'] + counts['error']} |"
        )
    for suite, outcomes in results.items():
        lines += ["", f"## {suite.package} {version(suite.package)}", ""]
        lines += ["| test | outcome |", "|---|---|"]
        for outcome in outcomes:
            said = outcome["outcome"]
            if outcome["reason"]:
                said += f": {outcome['reason']}"
            lines.append(f"| `{outcome['test']}` | {said.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "upstream.md")
    parser.add_argument(
        "--suite-timeout",
        type=float,
        default=SUITE_TIMEOUT_S,
        help="seconds one suite may run before it is killed and counted as failed",
    )
    options = parser.parse_args()
    results = {suite: run(suite, options.suite_timeout) for suite in SUITES}
    options.out.write_text(page(results), encoding="utf-8")
    broken = False
    for suite, outcomes in results.items():
        counts = Counter(o["outcome"] for o in outcomes)
        failed = counts["failed"] + counts["error"]
        broken = broken or failed > 0 or counts["passed"] == 0
        print(
            f"{suite.package} {version(suite.package)}: {counts['passed']} passed, "
            f"{counts['n.a.']} n.a., {failed} failed"
        )
    if broken:
        sys.exit(1)


if __name__ == "__main__":
    main()
