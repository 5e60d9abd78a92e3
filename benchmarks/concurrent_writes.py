"""App + CLI writes to one database (reliability figures): what is lost today.

`memuse ingest` is stopped at a crash point while it holds the database (its write lock). Another
process then makes the writes the app and the judge make:

* annotations, through the app's path (a short read-write connection with the app's lock wait,
  then `store.app.case_studies.upsert_annotation`: pages/_shared.write);
* judgments, through the judge's path (`judge.batch.ResultWriter`: journal first, then a short
  transaction).

The ingest then continues and finishes; a later open replays the judge journal
(`store.journal.replay_journal`, what `memuse judge` does at start). A write is *saved* when it
reached the database at once, *deferred* when it reached it only through the journal, *refused*
when the writer was told it was not saved (the app keeps the input and asks to retry), and *lost*
when it is in neither the database nor the journal although the writer was told nothing.

    .venv/bin/python benchmarks/concurrent_writes.py [N]
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hostile"))

from killing import corpus, memuse  # noqa: E402

from memuse_core.judge.batch import ResultWriter  # noqa: E402
from memuse_core.rules.judgment import JudgmentResult  # noqa: E402
from memuse_core.store import StoreLocked, connect  # noqa: E402
from memuse_core.store.app.case_studies import list_annotations, upsert_annotation  # noqa: E402
from memuse_core.store.journal import replay_journal  # noqa: E402

APP_LOCK_WAIT = 2.0
"""The app's lock wait in this run (pages/_shared.LOCK_TIMEOUT is longer; the outcome is the same)."""


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    d = Path(tempfile.mkdtemp(prefix="memuse-concurrent-"))
    os.environ["MEMUSE_LOCK_TIMEOUT"] = str(APP_LOCK_WAIT)
    try:
        src = corpus(d / "corpus")
        db = d / "store.duckdb"
        # A finished import first, so there are spans to annotate and judge.
        assert memuse("ingest", str(src / "a.jsonl"), "--db", str(db)).returncode == 0
        con = connect(db, read_only=True)
        spans = [
            r[0] for r in con.execute("SELECT span_id FROM spans ORDER BY span_id LIMIT ?", [n]).fetchall()
        ]
        con.close()
        # `memuse ingest` of the other files, stopped inside a file's transaction: it holds the lock.
        flag = d / "stopped.pid"
        env = {
            **os.environ,
            "MEMUSE_PROGRESS": "",
            "MEMUSE_FAULT": "ingest.write:1",
            "MEMUSE_FAULT_FILE": str(flag),
        }
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memuse_core",
                "ingest",
                str(src / "b.jsonl"),
                str(src / "c.jsonl"),
                "--db",
                str(db),
            ],
            env=env,
            cwd=Path(__file__).resolve().parents[1],
        )
        while not flag.exists():
            if proc.poll() is not None:
                raise SystemExit("ingest ended before its crash point")
            time.sleep(0.05)
        ann = {"saved": 0, "refused": 0}
        for i, sid in enumerate(spans):
            row = {
                "annotation_id": f"a{i}",
                "target_kind": "span",
                "target_id": sid,
                "note": "checked by hand",
                "created_at": datetime.now(),
            }
            try:
                c = connect(db, timeout=APP_LOCK_WAIT)
            except StoreLocked:
                ann["refused"] += 1
                continue
            try:
                upsert_annotation(c, row)
                ann["saved"] += 1
            finally:
                c.close()
        judged = {"saved": 0, "deferred": 0}
        writer = ResultWriter(db)
        results = [
            JudgmentResult(span_id=sid, episode_id="", status="error", reason="concurrency probe")
            for sid in spans
        ]
        for r in results:
            writer.add(r)
        try:
            writer.write(writer.take())
            judged["saved"] = len(results)
        except StoreLocked:
            judged["deferred"] = len(results)
        writer.journal.close()
        os.kill(proc.pid, signal.SIGCONT)  # the ingest goes on and finishes
        rc = proc.wait()
        con = connect(db)
        try:
            replayed = replay_journal(con, db)
            stored_j = con.execute(
                "SELECT count(*) FROM judgments WHERE judgment_id IN (SELECT unnest(?::VARCHAR[]))",
                [[r.judgment_id for r in results]],
            ).fetchall()[0][0]
            stored_a = len(list_annotations(con))
        finally:
            con.close()
        lost_a = n - ann["refused"] - stored_a
        print(f"ingest held the database; it then finished with exit code {rc}")
        print(
            f"annotations: tried {n}, saved {ann['saved']}, refused with 'not saved, try again' "
            f"{ann['refused']}, in the database afterwards {stored_a}, lost silently {max(lost_a, 0)}"
        )
        print(
            f"judgments:   tried {n}, saved at once {judged['saved']}, kept in the journal {judged['deferred']}, "
            f"replayed {replayed}, in the database afterwards {stored_j}, lost {n - stored_j}"
        )
        return 0
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
