"""Bad input: every mistake a user can make ends in a named JitcepError saying what is wrong and how to fix
it, before anything is written (DESIGN.md section 5).

- NUL in column and variable names is read and written like any other name.
"""

from __future__ import annotations

import polars as pl

import jitcep

SEQ_AB = "PATTERN SEQ(A a, B b) WITHIN 10"


# --- NUL in names ----------------------------------------------------------------------------------

def _without_nul(value):
    if isinstance(value, dict):
        return {k.replace("\0", ""): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    return value


def test_nul_in_column_and_variable_names_is_read_and_written(engine):
    # Arrow's C schema holds names as C strings, so Polars panics exporting a name with a NUL in it:
    # jitcep never exports the names it reads (String attributes, keys) or writes (list variables' structs)
    plain = pl.DataFrame({"type": ["A", "B", "B", "A", "B"], "ts": [1, 2, 3, 4, 5],
                          "st": ["p", "q", "p", "p", "q"], "k": ["u", "u", "v", "v", "v"]})
    nul = plain.rename({"type": "ty\0pe", "ts": "t\0s", "st": "s\0t", "k": "k\0"})
    text = ("PATTERN SEQ(A `a\0`, B+ `b\0`[]) WHERE [`k\0`] AND `a\0`.`s\0t` = 'p' AND `b\0`.`s\0t` = 'q' "
            "WITHIN 10 RETURN `a\0`, `b\0`")
    got = jitcep.compile(text).run(nul, time="t\0s", type="ty\0pe", engine=engine)
    want = jitcep.compile(text.replace("\0", "")).run(plain, type="type", engine=engine)
    assert want.height > 0
    assert _without_nul(got.to_dicts()) == want.to_dicts()
    by_key = jitcep.compile(SEQ_AB).run(nul, time="t\0s", type="ty\0pe", partition_by="k\0", engine=engine)
    assert by_key.height == jitcep.compile(SEQ_AB).run(plain, type="type", partition_by="k", engine=engine).height
