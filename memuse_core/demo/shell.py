"""Shell outputs that look like real ones: grep -rn, sed -n views, reproduction tracebacks, test
runs (pytest and Django's runtests.py), git diff. Deterministic given the random generator."""

from __future__ import annotations

import random

from .catalog import REPOS, Component


def short(name: str) -> str:
    return name.split(".")[-1]


def ls_output(comp: Component) -> str:
    pkg = REPOS[comp.repo]["pkg"]
    top = {
        "django": "AUTHORS\nCONTRIBUTING.rst\nLICENSE\nREADME.rst\ndjango\ndocs\nextras\njs_tests\n"
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
        "examples\npyproject.toml\nsetup.cfg\nsetup.py\ntox.ini",
    }[comp.repo]
    return top + f"\n# package: {pkg}"


_POOL = [
    "        if {var} is None:",
    "            return {var}",
    "        if not {var}:",
    "            return []",
    "        for index, part in enumerate({var}):",
    "            self._check(part, index)",
    "        {var} = self._prepare({var}, **kwargs)",
    "        result = []",
    "        result.append({var})",
    "        try:",
    "            {var} = int({var})",
    "        except (TypeError, ValueError):",
    "            raise ValueError('invalid %r' % ({var},))",
    "        # Keep the old behaviour for subclasses.",
    "        if isinstance({var}, str):",
    "            {var} = {var}.strip()",
    "        elif hasattr({var}, '{attr}'):",
    "            {var} = {var}.{attr}()",
    "        return self.{attr}({var}, *args)",
    "        kwargs.setdefault('{attr}', None)",
    "        options = dict(self.options)",
    "        options.update(kwargs)",
    "        cache = self._cache",
    "        key = ({var}, tuple(sorted(options)))",
    "        if key in cache:",
    "            return cache[key]",
    "        warnings.warn('{fn} is deprecated', RemovedInNextVersionWarning)",
    "        assert {var} is not NotImplemented",
    "        return functools.reduce(operator.add, result)",
    "        self.{attr} = {var}",
    "",
    "    @property",
    "    def {attr}(self):",
    '        """Return the {attr} of this object."""',
    "        return self._{attr}",
    "",
    "    def __repr__(self):",
    "        return '<%s: %s>' % (self.__class__.__name__, self)",
]
_ATTRS = [
    "value_to_string",
    "get_prep_value",
    "as_sql",
    "deconstruct",
    "normalize",
    "render",
    "clean",
    "evaluate",
    "to_python",
    "from_db_value",
    "copy",
    "resolve",
]


def code_lines(name: str, start: int, rng: random.Random, extra: str = "") -> list[tuple[int, str]]:
    """A plausible Python function around `name` (25-50 lines), numbered from `start`; `extra`
    names a helper the function delegates to (only when the agent discovers it itself)."""
    fn = short(name)
    var = rng.choice(["value", "obj", "data", "expr", "node", "item"])
    body = [
        f"    def {fn}(self, {var}, *args, **kwargs):",
        f'        """Return the normalised form of ``{var}``."""',
        f"        if hasattr({var}, 'resolve_expression'):",
        f"            {var} = {var}.resolve_expression(self, **kwargs)",
        f"        elif isinstance({var}, (list, tuple)):",
        f"            resolved = [self.{fn}(sub, *args, **kwargs) for sub in {var}]",
        f"            return {var}.__class__(resolved)",
    ]
    if extra:
        body.append(f"        {var} = {extra}({var}, *args)")
    for _ in range(rng.randrange(18, 42)):
        body.append(rng.choice(_POOL).format(var=var, attr=rng.choice(_ATTRS), fn=fn))
    return [(start + i, line) for i, line in enumerate(body)]


def grep_output(hits: list[tuple[str, int, str]]) -> str:
    return "\n".join(f"{path}:{n}:{text}" for path, n, text in hits)


def repro_output(comp: Component, line: int, fixed: bool) -> str:
    if fixed:
        return "OK: result matches the documented behaviour"
    frames = "".join(
        f'  File "/testbed/{comp.file}", line {line - 40 * k}, in {attr}\n    return self.{attr}(value, *args)\n'
        for k, attr in enumerate(_ATTRS[(line % 5) : (line % 5) + 4])
    )
    return (
        f'Traceback (most recent call last):\n  File "/testbed/reproduce.py", line 7, in <module>\n'
        f'    main()\n  File "/testbed/reproduce.py", line 5, in main\n    ...\n{frames}'
        f'  File "/testbed/{comp.file}", line {line}, in {short(comp.func)}\n'
        f"    raise {comp.exc}(msg)\n{comp.exc}: unexpected value for {comp.inputs[0]}"
    )


_IMPORTS = [
    "import collections",
    "import copy",
    "import functools",
    "import inspect",
    "import itertools",
    "import operator",
    "import re",
    "import sys",
    "import warnings",
    "from collections import namedtuple",
    "from decimal import Decimal",
    "from functools import partial, wraps",
    "from itertools import chain",
    "from typing import Any, Dict, List, Optional, Tuple",
    "",
    "from .exceptions import ImproperlyConfigured",
    "from .utils import cached_property, lazy",
    "from .deprecation import RemovedInNextVersionWarning",
    "__all__ = ['Options', 'Node', 'Expression']",
    "",
    "LOOKUP_SEP = '__'",
    "MAX_DEPTH = 50",
    "logger = logging.getLogger(__name__)",
    "",
    "class Options:",
    '    """Container for per-object options."""',
    "    def __init__(self, **kwargs):",
    "        self.__dict__.update(kwargs)",
    "",
]


def head_output(rng: random.Random, n: int = 30) -> str:
    """The first lines of a module (imports and constants)."""
    return "\n".join(_IMPORTS[i % len(_IMPORTS)] for i in range(rng.randrange(3), rng.randrange(3) + n))


def test_snippet(comp: Component, rng: random.Random) -> str:
    """A piece of the component's test module."""
    fn = short(comp.func)
    out = [
        f"class {comp.test_class}(SimpleTestCase):" if comp.repo == "django" else f"class {comp.test_class}:"
    ]
    for i in range(rng.randrange(3, 7)):
        inp = comp.inputs[i % len(comp.inputs)]
        out += [
            f"    def test_{fn.lower()}_{i}(self):",
            f"        # {inp}",
            f"        obj = make_case({i}, kind={rng.choice(_ATTRS)!r})",
            f"        self.assertEqual(obj.{fn}(obj.value), obj.expected)",
            "",
        ]
    return "\n".join(out)


def test_command(comp: Component, narrow: str | None = None) -> str:
    runner = REPOS[comp.repo]["runner"]
    if comp.repo == "django":
        mod = comp.test_file.removeprefix("tests/").removesuffix(".py").replace("/", ".")
        return f"cd tests && ./runtests.py {mod} --verbosity 1" + (f" -k {narrow}" if narrow else "")
    if comp.repo == "sympy":
        return f"bin/test {comp.test_file}" + (f" -k {narrow}" if narrow else "")
    return f"{runner} {comp.test_file} -q" + (f" -k {narrow}" if narrow else "")


def test_output(
    comp: Component,
    passed: int,
    failed: int,
    rng: random.Random,
    fail_where: str | None = None,
    fail_exc: str | None = None,
) -> str:
    secs = f"{rng.uniform(0.2, 9.5):.2f}"
    exc = fail_exc or comp.exc
    where = fail_where or comp.file
    name = f"test_{comp.key.replace('-', '_')}"
    if comp.repo == "django":
        dots = "." * min(passed, 60) + "F" * failed
        head = f"Testing against Django installed in '/testbed/django'\nSystem check identified no issues (0 silenced).\n{dots}\n"
        if failed:
            fail = (
                f"======================================================================\n"
                f"FAIL: {name} ({comp.test_file.removesuffix('.py').replace('/', '.')}.{comp.test_class})\n"
                f"----------------------------------------------------------------------\n"
                f'Traceback (most recent call last):\n  File "/testbed/{where}", line {rng.randrange(80, 2000)}\n'
                f"{exc}: unexpected value\n\n"
                f"----------------------------------------------------------------------\n"
                f"Ran {passed + failed} tests in {secs}s\n\nFAILED (failures={failed})"
            )
            return head + fail
        return (
            head
            + f"----------------------------------------------------------------------\nRan {passed} tests in {secs}s\n\nOK"
        )
    if comp.repo == "sympy":
        status = "[FAIL]" if failed else "[OK]"
        out = (
            f"============================= test process starts ==============================\n"
            f"executable:         /opt/miniconda3/envs/testbed/bin/python  (3.9.19-final-0) [CPython]\n"
            f"architecture:       64-bit\ncache:              yes\nground types:       python\n\n"
            f"{comp.test_file}[{passed + failed}] {'.' * min(passed, 60)}{'F' * failed}  {status}\n\n"
        )
        if failed:
            out += (
                f"________________________________________________________________________________\n"
                f"____________ {comp.test_file}:{name} _____________\n"
                f'Traceback (most recent call last):\n  File "/testbed/{where}", line {rng.randrange(80, 2000)}\n'
                f"{exc}\n\n"
            )
        return out + (
            f"============= tests finished: {passed} passed, {failed} failed, in {secs} seconds ============="
            if failed
            else f"================== tests finished: {passed} passed, in {secs} seconds ==================="
        )
    line = (
        f"============================= test session starts ==============================\n"
        f"platform linux -- Python 3.9.19, pytest-7.4.4, pluggy-1.5.0\nrootdir: /testbed\n"
        f"configfile: {'pyproject.toml' if comp.repo in ('pytest', 'astropy') else 'setup.cfg'}\n"
        f"collected {passed + failed} items\n\n{comp.test_file} {'.' * min(passed, 60)}{'F' * failed}"
    )
    if failed:
        return (
            f"{line}  [100%]\n=================================== FAILURES ===================================\n"
            f"_____________________________ {comp.test_class}.{name} ______________________________\n\n"
            f"    def {name}():\n        data = make_case({comp.inputs[0]!r})\n>       check(data)\n\n"
            f"{comp.test_file}:{rng.randrange(20, 900)}: \n"
            + "".join(
                f"{where}:{rng.randrange(80, 2000)}: in {fn}\n    return self.{fn}(value)\n"
                for fn in rng.sample(_ATTRS, 3)
            )
            + f"E       {exc}: unexpected value\n\n"
            f"{where}:{rng.randrange(80, 2000)}: {exc}\n=========================== short test summary info ============================\n"
            f"FAILED {comp.test_file}::{comp.test_class}::{name} - {exc}\n{failed} failed, {passed} passed in {secs}s"
        )
    return f"{line}  [100%]\n{passed} passed in {secs}s"


def git_diff(path: str, fn: str, old: str, new: str, line: int) -> str:
    return (
        f"diff --git a/{path} b/{path}\nindex 3f1c2a9..8be04d1 100644\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -{line},7 +{line},7 @@ def {fn}(self, value, *args, **kwargs):\n"
        f"         if value is None:\n             return value\n-        {old}\n+        {new}\n"
        f"         return result"
    )
