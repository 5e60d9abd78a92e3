"""Shell outputs that look like real ones: grep -rn, sed -n views, reproduction tracebacks, test
runs (pytest and Django's runtests.py), git diff. Deterministic given the random generator."""

from __future__ import annotations

import random

from .vocab import REPOS, Component


def short(name: str) -> str:
    return name.split(".")[-1]


def ls_output(comp: Component) -> str:
    pkg = REPOS[comp.repo]["pkg"]
    top = {"django": "AUTHORS\nCONTRIBUTING.rst\nLICENSE\nREADME.rst\ndjango\ndocs\nextras\njs_tests\n"
                     "package.json\nscripts\nsetup.cfg\nsetup.py\ntests\ntox.ini",
           "sympy": "AUTHORS\nCODE_OF_CONDUCT.md\nLICENSE\nREADME.md\nbin\ndoc\nexamples\nrelease\n"
                    "setup.py\nsympy\ntox.ini.sample",
           "sphinx": "AUTHORS\nCHANGES\nLICENSE\nMakefile\nREADME.rst\ndoc\nsetup.cfg\nsetup.py\n"
                     "sphinx\ntests\ntox.ini\nutils",
           "pytest": "AUTHORS\nCHANGELOG.rst\nLICENSE\nREADME.rst\nbench\nchangelog\ndoc\n"
                     "pyproject.toml\nscripts\nsetup.cfg\nsrc\ntesting\ntox.ini",
           "requests": "AUTHORS.rst\nHISTORY.md\nLICENSE\nMakefile\nREADME.md\ndocs\next\n"
                       "requests\nsetup.cfg\nsetup.py\ntests\ntox.ini",
           "astropy": "CHANGES.rst\nCITATION\nLICENSE.rst\nREADME.rst\nastropy\ncextern\ndocs\n"
                      "examples\npyproject.toml\nsetup.cfg\nsetup.py\ntox.ini"}[comp.repo]
    return top + f"\n# package: {pkg}"


def code_lines(name: str, start: int, rng: random.Random, extra: str = "") -> list[tuple[int, str]]:
    """A plausible Python function body around `name`, numbered from `start`."""
    fn = short(name)
    var = rng.choice(["value", "obj", "data", "expr", "node", "item"])
    body = [
        f"    def {fn}(self, {var}, *args, **kwargs):",
        f'        """Return the normalised form of ``{var}``."""',
        f"        if {var} is None:",
        f"            return {var}",
        f"        if hasattr({var}, 'resolve_expression'):",
        f"            {var} = {var}.resolve_expression(self, **kwargs)",
        f"        elif isinstance({var}, (list, tuple)):",
        f"            resolved = [self.{fn}(sub, *args, **kwargs) for sub in {var}]",
        f"            return {var}.__class__(resolved)",
        f"        result = self._normalize({var})",
    ]
    if extra:
        body.append(f"        result = {extra}(result)")
    body += ["        return result", ""]
    return [(start + i, line) for i, line in enumerate(body)]


def sed_view(name: str, start: int, rng: random.Random, extra: str = "") -> str:
    return "\n".join(line for _, line in code_lines(name, start, rng, extra))


def grep_output(hits: list[tuple[str, int, str]]) -> str:
    return "\n".join(f"{path}:{n}:{text}" for path, n, text in hits)


def repro_output(comp: Component, line: int, fixed: bool) -> str:
    if fixed:
        return "OK: result matches the documented behaviour"
    return (f"Traceback (most recent call last):\n  File \"reproduce.py\", line 7, in <module>\n"
            f"    main()\n  File \"{comp.file}\", line {line}, in {short(comp.func)}\n"
            f"    raise {comp.exc}(msg)\n{comp.exc}: unexpected value for {comp.inputs[0]}")


def test_command(comp: Component, narrow: str | None = None) -> str:
    runner = REPOS[comp.repo]["runner"]
    if comp.repo == "django":
        mod = comp.test_file.removeprefix("tests/").removesuffix(".py").replace("/", ".")
        return f"cd tests && ./runtests.py {mod} --verbosity 1" + (f" -k {narrow}" if narrow else "")
    if comp.repo == "sympy":
        return f"bin/test {comp.test_file}" + (f" -k {narrow}" if narrow else "")
    return f"{runner} {comp.test_file} -q" + (f" -k {narrow}" if narrow else "")


def test_output(comp: Component, passed: int, failed: int, rng: random.Random, fail_where: str | None = None,
                fail_exc: str | None = None) -> str:
    secs = f"{rng.uniform(0.2, 9.5):.2f}"
    exc = fail_exc or comp.exc
    where = fail_where or comp.file
    name = f"test_{comp.key.replace('-', '_')}"
    if comp.repo == "django":
        dots = "." * min(passed, 60) + "F" * failed
        head = f"Testing against Django installed in '/testbed/django'\nSystem check identified no issues (0 silenced).\n{dots}\n"
        if failed:
            fail = (f"======================================================================\n"
                    f"FAIL: {name} ({comp.test_file.removesuffix('.py').replace('/', '.')}.{comp.test_class})\n"
                    f"----------------------------------------------------------------------\n"
                    f"Traceback (most recent call last):\n  File \"/testbed/{where}\", line {rng.randrange(80, 2000)}\n"
                    f"{exc}: unexpected value\n\n"
                    f"----------------------------------------------------------------------\n"
                    f"Ran {passed + failed} tests in {secs}s\n\nFAILED (failures={failed})")
            return head + fail
        return head + f"----------------------------------------------------------------------\nRan {passed} tests in {secs}s\n\nOK"
    if comp.repo == "sympy":
        status = "[FAIL]" if failed else "[OK]"
        out = (f"============================= test process starts ==============================\n"
               f"executable:         /opt/miniconda3/envs/testbed/bin/python  (3.9.19-final-0) [CPython]\n"
               f"architecture:       64-bit\ncache:              yes\nground types:       python\n\n"
               f"{comp.test_file}[{passed + failed}] {'.' * min(passed, 60)}{'F' * failed}  {status}\n\n")
        if failed:
            out += (f"________________________________________________________________________________\n"
                    f"____________ {comp.test_file}:{name} _____________\n"
                    f"Traceback (most recent call last):\n  File \"/testbed/{where}\", line {rng.randrange(80, 2000)}\n"
                    f"{exc}\n\n")
        return out + (f"============= tests finished: {passed} passed, {failed} failed, in {secs} seconds ============="
                      if failed else f"================== tests finished: {passed} passed, in {secs} seconds ===================")
    line = f"{'.' * min(passed, 60)}{'F' * failed}"
    if failed:
        return (f"{line}  [100%]\n=================================== FAILURES ===================================\n"
                f"_____________________________ {comp.test_class}.{name} ______________________________\n\n"
                f"    def {name}():\n>       check({comp.inputs[0]!r})\nE       {exc}: unexpected value\n\n"
                f"{where}:{rng.randrange(80, 2000)}: {exc}\n=========================== short test summary info ============================\n"
                f"FAILED {comp.test_file}::{comp.test_class}::{name} - {exc}\n{failed} failed, {passed} passed in {secs}s")
    return f"{line}  [100%]\n{passed} passed in {secs}s"


def git_diff(path: str, fn: str, old: str, new: str, line: int) -> str:
    return (f"diff --git a/{path} b/{path}\nindex 3f1c2a9..8be04d1 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -{line},7 +{line},7 @@ def {fn}(self, value, *args, **kwargs):\n"
            f"         if value is None:\n             return value\n-        {old}\n+        {new}\n"
            f"         return result")
