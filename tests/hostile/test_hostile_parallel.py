"""The hostile ingest files through the parallel importer: worker processes parse,
this process writes, and every file gets exactly the answer, and the store exactly the rows, of
the sequential import. References that only the store can answer (runs, searches, item versions)
and ids the database finds duplicated are checked in the writing process, after earlier files of
the same call have committed."""

from __future__ import annotations

import json
from pathlib import Path

from hostile_cases import load_all
from hostile_ingest import NEXT, SEED, lines

from memuse_core.ingest import IngestError
from memuse_core.ingest.parallel import ingest_files
from memuse_core.store import connect
from memuse_core.store.checksums import table_checksums


def _play(db: Path, files: list[Path], workers: int) -> tuple[list[str], dict[str, str]]:
    con = connect(db)
    try:
        out = [
            str(r) if isinstance(r, IngestError) else f"{r.status} {r.episodes}"
            for _, r in ingest_files(con, files, workers=workers, min_bytes=0)
        ]
        return out, table_checksums(con)
    finally:
        con.close()


def test_parallel_import_answers_every_hostile_file_like_the_sequential_one(tmp_path: Path) -> None:
    cases = [c for c in load_all().values() if c.area == "ingest" and not c.options.get("subprocess")]
    src = tmp_path / "corpus"
    src.mkdir()
    seed, nxt = src / "seed.jsonl", src / "next.jsonl"
    seed.write_bytes(lines(SEED))
    nxt.write_bytes(lines(NEXT))
    files = [seed, *(c.generate(src / c.name) for c in cases), nxt]
    seq = _play(tmp_path / "seq.duckdb", files, workers=0)
    par = _play(tmp_path / "par.duckdb", files, workers=2)
    assert par[0] == seq[0]
    assert par[1] == seq[1]
    answers = seq[0]
    assert answers[0] == "imported 1" and answers[-1] == "imported 1"
    assert all(a.startswith(str(src)) for a in answers[1:-1]), json.dumps(answers, indent=1)
