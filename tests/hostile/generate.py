"""Write the hostile corpus to a directory, with a manifest of what each case expects.

    .venv/bin/python tests/hostile/generate.py OUT_DIR

Every input is generated (no checked-in binaries): one file or folder per case under
OUT_DIR/<area>/, and OUT_DIR/manifest.json with each case's name, area, input, expected code,
message pattern and number of records it may add. `test_hostile.py` generates the same inputs and
plays them; cases live in the `hostile_*.py` modules next to this script (hostile_cases.py says
how to add an area).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from hostile_cases import load_all  # noqa: E402


def generate(out: Path) -> list[dict[str, object]]:
    """Generate every registered case under `out`; returns (and writes) the manifest."""
    manifest = []
    for name, c in sorted(load_all().items()):
        path = c.generate(out / c.area)
        manifest.append(
            {
                "name": name,
                "area": c.area,
                "input": str(path.relative_to(out)),
                "code": c.code,
                "message": c.message,
                "added": c.added,
                "options": c.options,
            }
        )
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    manifest = generate(out)
    areas = sorted({str(m["area"]) for m in manifest})
    print(f"{len(manifest)} hostile cases ({', '.join(areas)}) written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
