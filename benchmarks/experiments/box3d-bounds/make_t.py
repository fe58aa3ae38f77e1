#!/usr/bin/env python3
"""Writes work/T_<stencil>_f32.cu for another 3-D f32 box-like stencil of radius 1
from T_j3d17pt_f32.cu: its update (the spec's expression, each read
`u[dz,dy,dx]` as `U(dz, dy, dx)`, the literals as the generator prints them)
times the reciprocal the generated kernel A_<stencil>_f32.cu multiplies by.

    make_t.py STENCIL   (gen.sh runs it, after writing work/specs and work/A_*.cu)
"""
import os
import re
import sys

stencil = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
work = os.path.join(here, "work")
spec = open(f"{work}/specs/{stencil}.stencil.toml").read()
expr = re.search(r'^expr\s*=\s*"(.*)"', spec, re.M).group(1)
body, divisor = re.fullmatch(r"\((.*)\)\s*/\s*([0-9.]+)", expr).groups()
body = re.sub(r"u\[(-?\d+),(-?\d+),(-?\d+)\]", r"U(\1, \2, \3)", body)
body = re.sub(r"\s*\*\s*", " * ", body)
body = re.sub(r"(?<![\w.])(\d+\.\d+|\d+)(?![\w.])(?=\s*\*)",
              lambda m: (m.group(1) if "." in m.group(1) else m.group(1) + ".0") + "f", body)
a = open(f"{work}/A_{stencil}_f32.cu").read()
tail = re.search(r"const float u = \(.*\)( \* [0-9.e-]+f /\* 1 / [0-9.]+f \*/);", a).group(1)
t = open(f"{here}/T_j3d17pt_f32.cu").read()
line = re.search(r"const float u = \(.*\) \* [0-9.e-]+f /\* 1 / [0-9.]+f \*/;", t).group(0)
t = t.replace(line, f"const float u = ({body}){tail};")
t = t.replace(" * Per cell and level that is 6 ring loads against the generated kernel's\n * 9.5.", " * README.md has its ring loads a cell and level against the generated\n * kernel's.")
t = t.replace("j3d17pt", stencil)
open(f"{work}/T_{stencil}_f32.cu", "w").write(t)
print(f"work/T_{stencil}_f32.cu: / {divisor} as{tail}")
