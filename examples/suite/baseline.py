#!/usr/bin/env python3
"""The baseline a user would otherwise write: the SUITE.md stencils as CuPy
array expressions (slicing), one time step per statement.

Each stencil is written the way it is usually written by hand: the interior
of the next grid is a weighted sum of shifted slices of the current one
(`nxt[1:-1, 1:-1] = (5.1 * u[:-2, 1:-1] + ...) / 118`); the frame of `radius`
cells keeps its values (the suite's `fixed` boundary); grids are swapped
after each step. CuPy runs one kernel per array operation.

Timing follows the runner: warm-up steps, then the median of `--reps` timed
runs of `--steps` steps, each between two CUDA events. Before timing, every
stencil runs 3 steps on the runner's small check grid from the runner's
input pattern, and the result is written to `<json stem>-check/` so that
`suite --baseline <json>` compares it with stencil-build's reference before
it reports a row.

    python3 baseline.py --json cupy.json            # on the GPU machine
    python3 baseline.py --xp numpy --check-only --json /tmp/x.json   # anywhere
"""

import argparse
import json
import os
import statistics

# Weights of the linear stencils: {offset: weight}, then the divisor, as in
# examples/suite/stencils/*.stencil.toml.
J2D5PT = ({(-1, 0): 5.1, (0, -1): 12.1, (0, 0): 15.0, (0, 1): 12.2, (1, 0): 5.2}, 118)
J2D9PT = (
    {(-2, 0): 7, (-1, 0): 5, (0, -2): 9, (0, -1): 12, (0, 0): 15,
     (0, 1): 12, (0, 2): 9, (1, 0): 5, (2, 0): 7},
    118,
)
J2D9PT_GOL = (
    {(-1, -1): 7.1, (-1, 0): 5.1, (-1, 1): 9.2, (0, -1): 12.1, (0, 0): 15,
     (0, 1): 12.2, (1, -1): 9.1, (1, 0): 5.2, (1, 1): 7.2},
    118,
)
# 0.1, 0.2, ... 2.5 row by row from (-2, -2).
J2D25PT = (
    {(dy, dx): round(0.1 * (5 * (dy + 2) + dx + 3), 1)
     for dy in range(-2, 3) for dx in range(-2, 3)},
    118,
)
J3D7PT = (
    {(-1, 0, 0): 0.4, (0, -1, 0): 0.6, (0, 0, -1): 0.8, (0, 0, 0): 1.0,
     (0, 0, 1): 0.8, (0, 1, 0): 0.6, (1, 0, 0): 0.4},
    4.6,
)
J3D13PT = (
    {(-2, 0, 0): 0.3, (-1, 0, 0): 0.8, (0, -2, 0): 0.35, (0, -1, 0): 0.9,
     (0, 0, -2): 0.4, (0, 0, -1): 1.0, (0, 0, 0): 1.2, (0, 0, 1): 1.0,
     (0, 0, 2): 0.4, (0, 1, 0): 0.9, (0, 2, 0): 0.35, (1, 0, 0): 0.8,
     (2, 0, 0): 0.3},
    8.7,
)
J3D17PT = (
    {(-1, -1, -1): 0.5, (-1, -1, 1): 0.55, (-1, 1, -1): 0.6, (-1, 1, 1): 0.65,
     (0, -1, -1): 0.7, (0, -1, 0): 0.75, (0, -1, 1): 0.8, (0, 0, -1): 0.85,
     (0, 0, 0): 0.9, (0, 0, 1): 0.95, (0, 1, -1): 1.0, (0, 1, 0): 1.05,
     (0, 1, 1): 1.1, (1, -1, -1): 1.15, (1, -1, 1): 1.2, (1, 1, -1): 1.25,
     (1, 1, 1): 1.3},
    15.3,
)
# 0.5, 0.53, ... 1.28 in lexicographic order of the 27 offsets.
J3D27PT = (
    {(dz, dy, dx): round(0.5 + 0.03 * (9 * (dz + 1) + 3 * (dy + 1) + dx + 1), 2)
     for dz in range(-1, 2) for dy in range(-1, 2) for dx in range(-1, 2)},
    24.03,
)
POISSON = (
    {(-1, -1, 0): 0.5, (-1, 0, -1): 0.54, (-1, 0, 0): 0.58, (-1, 0, 1): 0.62,
     (-1, 1, 0): 0.66, (0, -1, -1): 0.7, (0, -1, 0): 0.74, (0, -1, 1): 0.78,
     (0, 0, -1): 0.82, (0, 0, 0): 0.86, (0, 0, 1): 0.9, (0, 1, -1): 0.94,
     (0, 1, 0): 0.98, (0, 1, 1): 1.02, (1, -1, 0): 1.06, (1, 0, -1): 1.1,
     (1, 0, 0): 1.14, (1, 0, 1): 1.18, (1, 1, 0): 1.22},
    16.34,
)
# Eighth-order second derivative (star3d25, acoustic25).
C8 = [-2.847222222, 1.6, -0.2, 0.025396825, -0.001785714]


def shifted(u, offset, radius):
    """The view of `u` at the interior cells moved by `offset`."""
    return u[tuple(slice(r + o, n - r + o) for n, r, o in zip(u.shape, radius, offset))]


def interior(u, radius):
    return shifted(u, (0,) * u.ndim, radius)


def weighted(weights, divisor):
    """One step of a linear stencil: `nxt` = sum of weight x shifted `u`, / divisor."""
    radius = tuple(max(abs(o[a]) for o in weights) for a in range(len(next(iter(weights)))))

    def step(u, nxt):
        total = None
        for offset, w in weights.items():
            term = w * shifted(u, offset, radius)
            total = term if total is None else total + term
        interior(nxt, radius)[...] = total / divisor

    return step, radius


def laplacian8(u):
    """3 c0 u + sum over r = 1..4 of c[r] (the six neighbours at distance r)."""
    radius = (4, 4, 4)
    total = 3 * C8[0] * interior(u, radius)
    for r in range(1, 5):
        ring = None
        for axis in range(3):
            for sign in (-r, r):
                offset = tuple(sign if a == axis else 0 for a in range(3))
                s = shifted(u, offset, radius)
                ring = s if ring is None else ring + s
        total = total + C8[r] * ring
    return total


def star3d25(u, nxt):
    interior(nxt, (4, 4, 4))[...] = interior(u, (4, 4, 4)) + 0.05 * laplacian8(u)


def acoustic25(u, prev, vel, nxt):
    """Leapfrog: u' = 2u - u.prev + 0.01 vel^2 lap(u)."""
    r = (4, 4, 4)
    v = interior(vel, r)
    interior(nxt, r)[...] = 2 * interior(u, r) - interior(prev, r) + 0.01 * v * v * laplacian8(u)


def linear(table):
    step, radius = weighted(*table)
    return {"dims": len(radius), "grids": 1, "radius": radius, "step": step}


STENCILS = {
    "j2d5pt": linear(J2D5PT),
    "j2d9pt": linear(J2D9PT),
    "j2d9pt_gol": linear(J2D9PT_GOL),
    "j2d25pt": linear(J2D25PT),
    "j3d7pt": linear(J3D7PT),
    "j3d13pt": linear(J3D13PT),
    "j3d17pt": linear(J3D17PT),
    "j3d27pt": linear(J3D27PT),
    "poisson": linear(POISSON),
    "star3d25": {"dims": 3, "grids": 1, "radius": (4, 4, 4), "step": star3d25},
    "acoustic25": {"dims": 3, "grids": 3, "radius": (4, 4, 4), "step": acoustic25},
}


class Run:
    """The grids of one stencil and a step that swaps them as the runner's API does."""

    def __init__(self, xp, name, grids):
        self.s = STENCILS[name]
        self.grids = grids
        # The spare grid starts as a copy of `u`, so its frame holds `u`'s
        # fixed boundary values whichever grid it becomes.
        self.spare = grids[0].copy()
        if name == "acoustic25":
            # u.prev's frame is never read; give it u's, so that it stays
            # right once u.prev becomes the spare grid.
            prev = grids[0].copy()
            interior(prev, self.s["radius"])[...] = interior(grids[1], self.s["radius"])
            self.grids[1] = prev

    def steps(self, n):
        for _ in range(n):
            g = self.grids
            if len(g) == 1:
                self.s["step"](g[0], self.spare)
                g[0], self.spare = self.spare, g[0]
            else:
                u, prev, vel = g
                self.s["step"](u, prev, vel, self.spare)
                g[0], g[1], self.spare = self.spare, u, prev


def pattern(xp, dtype, cells, k):
    """The runner's input (`pattern` in src/main.rs): 0.5 + ((c + 37k) 7919 mod 1000) / 1000, via f32."""
    import numpy as np

    c = np.arange(cells, dtype=np.int64)
    v = (((c + 37 * k) * 7919) % 1000).astype(np.float32) / np.float32(1000) + np.float32(0.5)
    return xp.asarray(v.astype(dtype))


def grids(xp, name, dtype, shape):
    cells = 1
    for n in shape:
        cells *= n
    count = STENCILS[name]["grids"]
    return [pattern(xp, dtype, cells, k).reshape(shape) for k in range(count)]


def check_shape(dims):
    """The runner's check grid (`check` in src/main.rs)."""
    return (29, 45, 133)[3 - dims:]


def write_check(xp, folder):
    """Runs 3 steps of each stencil on the check grid; writes every grid, raw."""
    os.makedirs(folder, exist_ok=True)
    for name, s in STENCILS.items():
        for dtype in ("float32", "float64"):
            run = Run(xp, name, grids(xp, name, dtype, check_shape(s["dims"])))
            run.steps(3)
            data = b"".join(to_host(xp, g).tobytes() for g in run.grids)
            suffix = "f32" if dtype == "float32" else "f64"
            with open(os.path.join(folder, f"{name}_{suffix}.bin"), "wb") as f:
                f.write(data)


def to_host(xp, a):
    return a.get() if hasattr(a, "get") else a


def shape(args, name):
    """The runner's GPU grid (`Options::shape` in src/main.rs)."""
    dims = STENCILS[name]["dims"]
    if dims == 2:
        return (args.size2,) * 2
    if args.size3 is None:
        return (300, 994, 750) if name == "acoustic25" else (512,) * 3
    return (args.size3,) * 3


def time_one(xp, args, name, dtype):
    """Median seconds of `args.reps` runs of `args.steps` steps, CUDA events."""
    import cupy

    run = Run(xp, name, grids(xp, name, dtype, shape(args, name)))
    run.steps(args.warmup)
    times = []
    for _ in range(args.reps):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        run.steps(args.steps)
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    del run
    cupy.get_default_memory_pool().free_all_blocks()
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", required=True, help="rows (and <stem>-check/ beside it)")
    p.add_argument("--xp", choices=["cupy", "numpy"], default="cupy")
    p.add_argument("--check-only", action="store_true", help="write the check data, time nothing")
    p.add_argument("--stencil", action="append", help="default: all")
    p.add_argument("--dtype", action="append", choices=["f32", "f64"], help="default: both")
    p.add_argument("--size2", type=int, default=16384)
    p.add_argument("--size3", type=int, default=None)
    # One kernel per operation makes a step slow: fewer steps than the
    # runner's 100 give the same GCells/s in less time.
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    args = p.parse_args()
    if args.xp == "cupy":
        import cupy as xp
    else:
        import numpy as xp
    stem = os.path.splitext(args.json)[0]
    write_check(xp, stem + "-check")
    rows = []
    if not args.check_only:
        import cupy

        device = cupy.cuda.runtime.getDeviceProperties(0)["name"]
        device = device.decode() if isinstance(device, bytes) else device
        library = f"CuPy {cupy.__version__}"
        for name in args.stencil or STENCILS:
            for dtype in args.dtype or ["f32", "f64"]:
                np_dtype = "float32" if dtype == "f32" else "float64"
                seconds = time_one(xp, args, name, np_dtype)
                print(f"{library} {name} {dtype}: {seconds:.4f} s for {args.steps} steps", flush=True)
                rows.append({
                    "library": library, "backend": "cuda", "device": device, "stencil": name, "dtype": dtype,
                    "shape": list(shape(args, name)), "steps": args.steps,
                    "warmup_steps": args.warmup, "reps": args.reps, "median_s": seconds,
                })
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
