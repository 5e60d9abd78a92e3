"""The demo corpus's fixed catalog: repositories, code components and bug mechanisms.

Every component names the file and function a task's report points at (`func`), a helper where a
fix can also land that no task text ever names (`helper`: the memory-specific identifier that
memories carry, MemUse 3.4 "memory-specific content"), a superficially similar place that is the
wrong one (`decoy_file`/`decoy_func`: where harmful memory sends the agent), the test module and the
repository's test runner. Mechanisms are shared across repositories, which is what lets a
proxy skill distilled in one repository help a task in another (MemUse A.6.6).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Component:
    """A piece of a repository that tasks are about."""

    repo: str
    key: str
    file: str
    func: str
    helper: str
    decoy_file: str
    decoy_func: str
    test_file: str
    test_class: str
    mechanism: str
    exc: str
    inputs: tuple[str, ...]


@dataclass(frozen=True)
class Mechanism:
    """A kind of bug that recurs across repositories."""

    key: str
    title: str
    summary: str
    remedy: str
    check: str
    """A distinctive check command a skill prescribes (memory-specific for skill use)."""
    pattern: str = ""
    """A grep pattern a scene document recommends (memory-specific for scene use)."""


MECHANISMS: dict[str, Mechanism] = {
    m.key: m
    for m in [
        Mechanism(
            "float-repr",
            "float formatting loses precision",
            "values are formatted with a fixed '%.16g'-style format instead of the shortest repr",
            "format with repr() first and fall back to the fixed format only when it is too long",
            'python -c "import sys; print(sys.float_info.dig, repr(0.1 + 0.2))"',
            pattern="%.16g",
        ),
        Mechanism(
            "empty-input",
            "empty inputs are not handled",
            "zero-length arrays or lists reach code that indexes the first element",
            "return early with an empty result of the right shape before indexing",
            'python -X dev -m pytest -x -q -k "empty or zero_length"',
            pattern="\\[0\\]",
        ),
        Mechanism(
            "nested-recursion",
            "nested structures are not recursed into",
            "compound objects are treated as leaves so their parts are ignored",
            "recurse into the compound node and combine the results of its parts",
            'python -m pytest -x -q --tb=line -k "nested or compound"',
            pattern="isinstance(.*Compound",
        ),
        Mechanism(
            "type-rebuild",
            "container types are rebuilt incorrectly",
            "an iterable is rebuilt with type(value)(generator), which breaks named tuples",
            "rebuild with type(value)(*items) when the type is a named tuple",
            "python -c \"import collections; P = collections.namedtuple('P', 'x y'); print(P(*[1, 2]))\"",
            pattern="type(value)(",
        ),
        Mechanism(
            "bytes-str",
            "bytes and text are mixed",
            "a bytes payload is compared with or joined to str, or a mode string claims binary",
            "normalise to one type at the boundary (encode text, or strip 'b' from the mode)",
            "python -bb -m pytest -x -q",
            pattern="'b' in",
        ),
        Mechanism(
            "state-leak",
            "state from an earlier step leaks into the next",
            "a loop reuses the original object so changes made in one iteration are lost",
            "carry the updated object forward instead of re-reading the original one",
            "python -m pytest -x -q -p no:randomly --count 3",
            pattern="= req.copy()",
        ),
        Mechanism(
            "mro-order",
            "inherited attributes are collected in the wrong order",
            "attributes are read from the class only, ignoring the MRO of its bases",
            "walk type.__mro__ and merge the per-class values in order",
            'python -c "import inspect; print([c.__name__ for c in inspect.getmro(bool)])"',
            pattern="__mro__",
        ),
        Mechanism(
            "escaping",
            "special characters are not escaped",
            "user input is interpolated into a pattern or markup without escaping",
            "escape the value (re.escape / html escape) at the point of interpolation",
            'python -m pytest -x -q -k "escape or special_char"',
            pattern="re.escape",
        ),
        Mechanism(
            "annotation-str",
            "type annotations are rendered wrongly",
            "string annotations are evaluated or stringified without the module's namespace",
            "resolve annotations with typing.get_type_hints using the object's globals",
            "python -W error::DeprecationWarning -m pytest -x -q -k annotation",
            pattern="get_type_hints",
        ),
        Mechanism(
            "sign-handling",
            "negative values are parsed wrongly",
            "the sign is applied to one component only, so negative composite values are wrong",
            "parse the sign once and apply it to the combined value",
            'python -m pytest -x -q -k "negative or sign"',
            pattern="sign =",
        ),
    ]
}


def _c(repo, key, file, func, helper, decoy_file, decoy_func, test_file, test_class, mech, exc, *inputs):
    return Component(
        repo, key, file, func, helper, decoy_file, decoy_func, test_file, test_class, mech, exc, tuple(inputs)
    )


# One component per row: repo, key, file, func, helper, decoy file, decoy func, test file, test
# class, mechanism, exception, then the inputs a task may name.
# fmt: off
COMPONENTS: list[Component] = [
    # django
    _c("django", "query-lookup", "django/db/models/sql/query.py", "resolve_lookup_value", "_rebuild_lookup_iterable",
       "django/db/models/lookups.py", "In.process_rhs", "tests/queries/test_query.py", "TestQuery", "type-rebuild", "TypeError",
       "a named tuple of two dates", "a tuple of F() expressions", "a range given as a named tuple"),
    _c("django", "floatformat", "django/template/defaultfilters.py", "floatformat", "_format_decimal_repr",
       "django/utils/numberformat.py", "_grouped_number_parts", "tests/template_tests/filter_tests/test_floatformat.py", "FunctionTests", "float-repr", "AssertionError",
       "Decimal('0.00000001') with arg 20", "1.1e-7 with arg -3", "a float near 2**53"),
    _c("django", "parse-duration", "django/utils/dateparse.py", "parse_duration", "_signed_duration_parts",
       "django/utils/duration.py", "duration_microseconds", "tests/utils_tests/test_dateparse.py", "DurationParseTests", "sign-handling", "AssertionError",
       "'-1 day, -00:00:01'", "'-00:15:30'", "'P-1DT-1H'"),
    _c("django", "admin-search", "django/contrib/admin/options.py", "get_search_results", "_construct_search_term",
       "django/contrib/admin/utils.py", "lookup_spawns_duplicates", "tests/admin_changelist/tests.py", "ChangeListTests", "escaping", "FieldError",
       "a search term with a '%' sign", "quoted phrases with spaces", "a term ending in a backslash"),
    _c("django", "migrations-autodetect", "django/db/migrations/autodetector.py", "generate_altered_fields", "_deconstruct_field_chain",
       "django/db/migrations/state.py", "ModelState.from_model", "tests/migrations/test_autodetector.py", "AutodetectorTests", "nested-recursion", "KeyError",
       "a ForeignKey to a swappable model", "an inner Enum class default", "a field renamed on a proxy"),
    _c("django", "modelchoice", "django/forms/models.py", "ModelChoiceField.to_python", "_clean_choice_key",
       "django/forms/fields.py", "ChoiceField.valid_value", "tests/model_forms/test_modelchoicefield.py", "ModelChoiceFieldTests", "empty-input", "ValidationError",
       "an empty queryset", "a blank string key", "a list with one empty value"),
    # sympy
    _c("sympy", "latex-mul", "sympy/printing/latex.py", "LatexPrinter._print_Mul", "_print_mul_factors",
       "sympy/printing/str.py", "StrPrinter._print_MatMul", "sympy/printing/tests/test_latex.py", "test_latex_basic", "nested-recursion", "AssertionError",
       "3*x**2/y with fold_short_frac", "a Mul of two Pow with negative exponents", "an unevaluated Mul"),
    _c("sympy", "rational-new", "sympy/core/numbers.py", "Rational.__new__", "_parse_rational_string",
       "sympy/core/sympify.py", "kernS", "sympy/core/tests/test_numbers.py", "test_Rational_new", "float-repr", "ValueError",
       "Rational('0.5', '100')", "Rational(0.1) printed back", "a string with an exponent '1e-3'"),
    _c("sympy", "intersection", "sympy/sets/sets.py", "Intersection._handle_finite_sets", "_finite_set_membership",
       "sympy/sets/handlers/intersection.py", "intersection_sets", "sympy/sets/tests/test_sets.py", "test_intersection", "empty-input", "IndexError",
       "Intersection({1}, {1}, {x})", "an empty FiniteSet among the args", "duplicate symbolic elements"),
    _c("sympy", "matrix-upper", "sympy/matrices/matrices.py", "MatrixBase.is_upper", "_iter_strict_lower",
       "sympy/matrices/common.py", "MatrixProperties._eval_is_lower", "sympy/matrices/tests/test_matrices.py", "test_is_upper", "empty-input", "IndexError",
       "a 4x2 zero matrix", "a 0x3 matrix", "a tall matrix of symbols"),
    _c("sympy", "partitions", "sympy/utilities/iterables.py", "partitions", "_partition_copy",
       "sympy/utilities/enumerative.py", "MultisetPartitionTraverser", "sympy/utilities/tests/test_iterables.py", "test_partitions", "state-leak", "AssertionError",
       "list(partitions(6, k=2))", "partitions(4) collected into a list", "partitions with size=True"),
    # sphinx
    _c("sphinx", "autodoc-annotations", "sphinx/ext/autodoc/__init__.py", "ClassDocumenter.format_args", "_resolve_type_aliases",
       "sphinx/ext/autodoc/typehints.py", "record_typehints", "tests/test_ext_autodoc_configs.py", "test_autodoc_type_aliases", "annotation-str", "NameError",
       "autodoc_type_aliases with a forward reference", "a dataclass with string annotations", "PEP 604 unions in signatures"),
    _c("sphinx", "napoleon-params", "sphinx/ext/napoleon/docstring.py", "_parse_other_parameters_section", "_format_docutils_params",
       "sphinx/ext/napoleon/__init__.py", "Config._config_values", "tests/test_ext_napoleon_docstring.py", "NumpyDocstringTest", "escaping", "AssertionError",
       "a parameter named *args", "a trailing underscore name like 'arg_'", "type text with a '|'"),
    _c("sphinx", "python-domain", "sphinx/domains/python.py", "PyObject.handle_signature", "_parse_annotation_nodes",
       "sphinx/util/docfields.py", "TypedField.make_field", "tests/test_domain_py.py", "test_pyfunction_signature", "annotation-str", "AssertionError",
       "a default value of ()", "Literal['a', 'b'] in a signature", "a return annotation with brackets"),
    _c("sphinx", "linkcheck", "sphinx/builders/linkcheck.py", "CheckExternalLinksBuilder.check_thread", "_retrieval_methods",
       "sphinx/util/requests.py", "_get_request_headers", "tests/test_build_linkcheck.py", "test_defaults", "state-leak", "AssertionError",
       "a server that rejects HEAD", "an anchor on a redirected page", "a 429 Retry-After header"),
    # pytest
    _c("pytest", "assert-rewrite", "src/_pytest/assertion/rewrite.py", "AssertionRewriter.visit_Assert", "_visit_all_any_call",
       "src/_pytest/assertion/util.py", "assertrepr_compare", "testing/test_assertrewrite.py", "TestAssertionRewrite", "nested-recursion", "AssertionError",
       "assert all(is_even(x) for x in nums)", "a walrus inside the assert", "a docstring first line that is a number"),
    _c("pytest", "approx", "src/_pytest/python_api.py", "approx", "_recursive_sequence_map",
       "src/_pytest/compat.py", "safe_isclass", "testing/python/approx.py", "TestApprox", "nested-recursion", "TypeError",
       "approx({'a': [1.0, 2.0]})", "a numpy array inside a dict", "Decimal values in a list"),
    _c("pytest", "marks-mro", "src/_pytest/mark/structures.py", "get_unpacked_marks", "_iter_class_marks",
       "src/_pytest/python.py", "PyobjMixin._getobj", "testing/test_mark.py", "TestFunctional", "mro-order", "AssertionError",
       "two base classes with different marks", "a mixin that adds skip", "a mark on a metaclass"),
    _c("pytest", "capture-mode", "src/_pytest/capture.py", "EncodedFile.mode", "_strip_binary_mode",
       "src/_pytest/terminal.py", "TerminalWriter._write_source", "testing/test_capture.py", "TestCaptureFixture", "bytes-str", "TypeError",
       "youtube-dl writing bytes to sys.stdout", "print(b'x', file=sys.stdout)", "a library checking 'b' in mode"),
    # requests
    _c("requests", "prepare-body", "requests/models.py", "PreparedRequest.prepare_body", "_encode_files_stream",
       "requests/utils.py", "super_len", "tests/test_requests.py", "TestRequests", "bytes-str", "UnicodeDecodeError",
       "a binary payload with non-ASCII bytes", "a file opened in text mode", "a generator yielding str chunks"),
    _c("requests", "redirects", "requests/sessions.py", "Session.resolve_redirects", "_rebuild_method_chain",
       "requests/adapters.py", "HTTPAdapter.build_response", "tests/test_requests.py", "TestRequests", "state-leak", "AssertionError",
       "a 303 followed by a 307", "a POST redirected twice", "a redirect dropping the body"),
    _c("requests", "encoding", "requests/utils.py", "get_encoding_from_headers", "_parse_content_type_params",
       "requests/models.py", "Response.apparent_encoding", "tests/test_utils.py", "TestContentEncodingDetection", "escaping", "AssertionError",
       "charset in single quotes", "a header with 'charset = utf-8'", "an empty charset value"),
    # astropy
    _c("astropy", "fits-card", "astropy/io/fits/card.py", "Card._format_value", "_format_float",
       "astropy/io/fits/header.py", "Header._cardindex", "astropy/io/fits/tests/test_header.py", "TestHeaderFunctions", "float-repr", "VerifyWarning",
       "0.009125 in a HIERARCH card", "a float that needs 20 characters", "1e-300 as a value"),
    _c("astropy", "separable", "astropy/modeling/separable.py", "separability_matrix", "_cstack",
       "astropy/modeling/core.py", "CompoundModel._make_leaflist", "astropy/modeling/tests/test_separable.py", "test_separable", "nested-recursion", "AssertionError",
       "Pix2Sky_TAN() & (Linear1D(10) & Linear1D(5))", "a nested Mapping", "three levels of &"),
    _c("astropy", "wcs-empty", "astropy/wcs/wcs.py", "WCS.wcs_pix2world", "_array_converter",
       "astropy/wcs/utils.py", "pixel_to_skycoord", "astropy/wcs/tests/test_wcs.py", "test_zero_size_input", "empty-input", "InconsistentAxisTypesError",
       "empty lists []", "a (0, 2) array", "np.array([]) for each axis"),
    _c("astropy", "rst-writer", "astropy/io/ascii/rst.py", "RST.write", "_header_rows_lines",
       "astropy/io/ascii/fixedwidth.py", "FixedWidthHeader.get_cols", "astropy/io/ascii/tests/test_rst.py", "test_write_normal", "annotation-str", "TypeError",
       "header_rows=['name', 'unit']", "a masked column", "a unit-less column"),
    _c("astropy", "quantity-ufunc", "astropy/units/quantity.py", "Quantity.__array_ufunc__", "_converters_for_inputs",
       "astropy/units/quantity_helper/converters.py", "converters_and_unit", "astropy/units/tests/test_quantity_ufuncs.py", "TestUfuncReturnsNotImplemented", "mro-order", "UnitConversionError",
       "a duck array on the right", "np.add with an incompatible subclass", "a dataclass holding a Quantity"),
]
# fmt: on

REPOS: dict[str, dict[str, str]] = {
    "django": {"org": "django", "runner": "./tests/runtests.py", "pkg": "django", "pr0": "11000"},
    "sympy": {"org": "sympy", "runner": "bin/test", "pkg": "sympy", "pr0": "12000"},
    "sphinx": {"org": "sphinx-doc", "runner": "python -m pytest", "pkg": "sphinx", "pr0": "7400"},
    "pytest": {"org": "pytest-dev", "runner": "python -m pytest", "pkg": "src/_pytest", "pr0": "5100"},
    "requests": {"org": "psf", "runner": "python -m pytest", "pkg": "requests", "pr0": "2300"},
    "astropy": {"org": "astropy", "runner": "python -m pytest", "pkg": "astropy", "pr0": "12800"},
}
"""Repositories with their share of tasks (SWE-bench Verified is django-heavy)."""

REPO_WEIGHTS = {
    "django": 0.40,
    "sympy": 0.22,
    "sphinx": 0.12,
    "pytest": 0.1,
    "requests": 0.06,
    "astropy": 0.10,
}

PERSONA_PRINCIPLES = [
    "Reproduce the reported failure with a minimal script before editing anything.",
    "Prefer the smallest change at the root cause over special cases at the call site.",
    "Run the narrowest relevant test module first, then the wider suite of that app.",
    "Keep the public API and its deprecation path unchanged unless the task asks otherwise.",
    "Read the surrounding function fully before editing a line of it.",
    "Check the git history of a line (git log -L) when a behaviour looks intentional.",
]

GENERIC_MEMORIES = [
    "The user prefers short commit-style summaries at the end of a task.",
    "Running the whole test suite takes too long; select test modules explicitly.",
    "The environment has no network access, so pip installs fail.",
    "Use python -m pytest rather than the bare pytest script in this environment.",
    "Tests that need optional dependencies (numpy, docutils) are skipped when missing.",
    "The repository is checked out at the commit before the fix; do not pull.",
    "Editing with sed -i is fine; there is no editor available in the container.",
    "Print debugging output to stderr so it does not mix with test output.",
]
