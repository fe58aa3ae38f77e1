#!/usr/bin/env python3
"""Writes the performance corpus's AN5D specs from AN5D's loop nests.

Usage: scripts/corpus/an5d.py AN5D_STENCILS_DIR OUT_DIR
(e.g. ../shared/an5d/stencils examples/suite/corpus/an5d)

Each `<name>.c` holds one loop nest `A[(t+1)%2][i][j] = <expr>;` between
`#pragma scop` and `#pragma endscop`. The spec's expression is that right-hand
side with `A[t%2][i+a][j+b]` read as `u[a,b]` and the C float suffixes dropped
(`5.1f` -> `5.1`, `15.f` -> `15.0`): the same operations in the same order.
AN5D's double build keeps the suffixes (float literals widened to double), so
its f64 coefficients differ from these in about the eighth digit.
"""
import pathlib
import re
import sys

READ = re.compile(r"A\[t%2\]((?:\[[ijk][^\]]*\])+)")
INDEX = re.compile(r"\[([ijk])\s*(?:([+-])\s*(\d+))?\s*\]")
FLOAT = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+|\d+)f\b")


def offsets(indices: str) -> str:
    parts = []
    for _axis, sign, n in INDEX.findall(indices):
        parts.append("0" if not n else ("-" if sign == "-" else "") + n)
    return "u[" + ",".join(parts) + "]"


def literal(m: re.Match) -> str:
    text = m.group(1)
    return text + "0" if text.endswith(".") else text


def expression(source: str) -> tuple[str, int]:
    scop = source.split("#pragma scop", 1)[1].split("#pragma endscop", 1)[0]
    rhs = scop.split("] =", 1)[1].rsplit(";", 1)[0]
    rhs = READ.sub(lambda m: offsets(m.group(1)), rhs)
    dims = re.search(r"u\[([^\]]*)\]", rhs).group(1).count(",") + 1
    rhs = FLOAT.sub(literal, rhs)
    return " ".join(rhs.split()), dims


def main() -> None:
    src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for c in sorted(src.glob("*.c")):
        name = c.stem
        expr, dims = expression(c.read_text())
        axes = ", ".join(f'"{a}"' for a in ["z", "y", "x"][3 - dims:])
        spec = (
            f"# AN5D's {name} (stencils/{name}.c): its loop nest's arithmetic, term for term.\n"
            f"[stencil]\nname  = \"an5d_{name.replace('-', '_')}\"\ndtype = \"f64\"\naxes  = [{axes}]\n\n"
            f"[fields]\nu = {{ role = \"state\" }}\n\n"
            f"[[update]]\ntarget = \"u\"\nexpr   = \"{expr}\"\n"
        )
        (out / f"an5d_{name.replace('-', '_')}.stencil.toml").write_text(spec)


if __name__ == "__main__":
    main()
