#!/bin/sh
# The Array API standard's official suite (data-apis/array-api-tests) against tritensor.array_api
# (issue 28 item 5; the figures are in bench/RESULTS.md, "Array API compliance"). Needs network once:
#   sh bench/array_api_suite.sh            # from the repository root, in the venv with ".[test]"
# The suite cannot import a library without complex dtypes as it stands: array_api_tests.patch makes
# its complex-only parts skip when ARRAY_API_TESTS_SKIP_DTYPES removes the complex dtypes (3 lines).
set -e
SUITE=build/array-api-tests
COMMIT=55fcc60179efa2680ddd6cd926ddf17b83530e2b     # array-api-tests, 2026-04-03 (spec submodule: 2024.12)
if [ ! -d "$SUITE" ]; then
    git clone --quiet https://github.com/data-apis/array-api-tests "$SUITE"
    git -C "$SUITE" checkout --quiet "$COMMIT"
    git -C "$SUITE" submodule update --init --quiet
    git -C "$SUITE" apply "$(pwd)/bench/array_api_tests.patch"
fi
pip install --quiet ndindex pytest-json-report
cd "$SUITE"
ARRAY_API_TESTS_MODULE=tritensor.array_api ARRAY_API_TESTS_SKIP_DTYPES=complex64,complex128 \
    python -m pytest array_api_tests -n 2 --max-examples=20 -q -p no:cacheprovider --disable-warnings -rfE --tb=line "$@"
