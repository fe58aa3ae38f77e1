//! The oracle itself, checked against hand-written loops: what the reference
//! computes is what the spec format documents.

use stencil_tests::{
    edges1d_f64_mixed as edges1d, edges2d_f64_mixed as edges2d, gray_scott_f64_fixed as gs,
    heat2d_f32_periodic as heat, hyperdiffusion2d_f64_fixed as hyper, line1d_f64_fixed as line,
    random_grid, sponge2d_f64_fixed as sponge, wave2d_f64_fixed as wave,
    zones1d_f32_periodic as zones,
};

fn close(got: &[f64], want: &[f64]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "cell {i}: {g} vs {w}"
        );
    }
}

fn lap(u: &[f64], nx: usize, c: usize) -> f64 {
    u[c - nx] + u[c + nx] + u[c - 1] + u[c + 1] - 4.0 * u[c]
}

#[test]
fn periodic_reads_wrap_around() {
    // f32: the variant every test build has (tests/build.rs).
    let (ny, nx) = (4, 5);
    let u0: Vec<f32> = random_grid(ny * nx, 1);
    let mut u = u0.clone();
    heat::reference::run(&mut u, [ny, nx], heat::Params { alpha: 0.1 }, 1).unwrap();
    let at = |y: usize, x: usize| f64::from(u0[(y % ny) * nx + x % nx]);
    for y in 0..ny {
        for x in 0..nx {
            let l = at(y + ny - 1, x) + at(y + 1, x) + at(y, x + nx - 1) + at(y, x + 1)
                - 4.0 * at(y, x);
            let want = at(y, x) + 0.1 * l;
            let got = f64::from(u[y * nx + x]);
            assert!(
                (got - want).abs() <= 1e-5,
                "cell ({y}, {x}): {got} vs {want}"
            );
        }
    }
}

#[test]
fn leapfrog_keeps_two_levels_and_the_frame() {
    let (ny, nx) = (5, 6);
    let (u0, p0): (Vec<f64>, Vec<f64>) = (random_grid(30, 2), random_grid(30, 3));
    let c2 = 0.2;
    let step = |u: &[f64], p: &[f64]| -> Vec<f64> {
        (0..30)
            .map(|c| {
                if c / nx == 0 || c / nx == ny - 1 || c % nx == 0 || c % nx == nx - 1 {
                    u[c]
                } else {
                    2.0 * u[c] - p[c] + c2 * lap(u, nx, c)
                }
            })
            .collect()
    };
    let u1 = step(&u0, &p0);
    let u2 = step(&u1, &u0);
    let u3 = step(&u2, &u1);
    let (mut u, mut prev) = (u0.clone(), p0.clone());
    wave::reference::run(&mut u, &mut prev, [ny, nx], wave::Params { c2 }, 3).unwrap();
    close(&u, &u3);
    close(&prev, &u2);
}

#[test]
fn temps_are_computed_where_they_are_read() {
    // u <- u - nu * lap(lap(u)); the whole step reaches 2 cells, lap is needed 1 cell out.
    let (ny, nx) = (7, 8);
    let u0: Vec<f64> = random_grid(ny * nx, 4);
    let nu = 0.02;
    let mut l = vec![0.0; ny * nx];
    for y in 1..ny - 1 {
        for x in 1..nx - 1 {
            l[y * nx + x] = lap(&u0, nx, y * nx + x);
        }
    }
    let mut want = u0.clone();
    for y in 2..ny - 2 {
        for x in 2..nx - 2 {
            want[y * nx + x] = u0[y * nx + x] - nu * lap(&l, nx, y * nx + x);
        }
    }
    let mut u = u0.clone();
    hyper::reference::run(&mut u, [ny, nx], hyper::Params { nu }, 1).unwrap();
    close(&u, &want);
    assert_eq!(hyper::RADIUS, [2, 2]);
}

#[test]
fn a_later_statement_reads_the_new_value() {
    let (ny, nx) = (4, 4);
    let (u0, v0): (Vec<f64>, Vec<f64>) = (random_grid(16, 5), random_grid(16, 6));
    let p = gs::Params {
        dt: 0.1,
        du: 0.2,
        dv: 0.1,
        feed: 0.04,
        kill: 0.06,
    };
    let (mut u1, mut v1) = (u0.clone(), v0.clone());
    for y in 1..3 {
        for x in 1..3 {
            let c = y * nx + x;
            u1[c] = u0[c]
                + p.dt * (p.du * lap(&u0, nx, c) - u0[c] * v0[c] * v0[c] + p.feed * (1.0 - u0[c]));
        }
    }
    for y in 1..3 {
        for x in 1..3 {
            let c = y * nx + x;
            v1[c] = v0[c]
                + p.dt
                    * (p.dv * lap(&v0, nx, c) + u1[c] * v0[c] * v0[c] - (p.feed + p.kill) * v0[c])
                + 0.01 * (u1[c + 1] - u1[c - 1]);
        }
    }
    let (mut u, mut v) = (u0, v0);
    gs::reference::run(&mut u, &mut v, [ny, nx], p, 1).unwrap();
    close(&u, &u1);
    close(&v, &v1);
}

#[test]
fn sums_unroll_and_inputs_are_read_only() {
    let n = 9;
    let (u0, w): (Vec<f64>, Vec<f64>) = (random_grid(n, 7), random_grid(n, 8));
    let k = [0.0625, -0.25, 0.375, -0.25, 0.0625];
    let a = 0.3;
    let mut want = u0.clone();
    for x in 2..n - 2 {
        let s: f64 = (0..5).map(|j| k[j] * u0[x + j - 2]).sum();
        want[x] = u0[x] - a * s - 0.1 * w[x] * (u0[x] - u0[x - 1]);
    }
    let mut u = u0.clone();
    let w_before = w.clone();
    line::reference::run(&mut u, &w, [n], line::Params { a }, 1).unwrap();
    close(&u, &want);
    assert_eq!(w, w_before);
}

#[test]
fn reflect_sides_mirror_and_value_sides_read_their_param() {
    // edges1d: x reflects at 0 (u[-k] is u[k]) and reads `inflow` past n - 1.
    let n = 7;
    let u0: Vec<f64> = random_grid(n, 11);
    let (c, inflow) = (0.05, 3.5);
    let at = |x: isize| match x {
        x if x < 0 => u0[(-x) as usize],
        x if x >= n as isize => inflow,
        x => u0[x as usize],
    };
    let want: Vec<f64> = (0..n as isize)
        .map(|x| {
            at(x) + c * (at(x - 2) - 4.0 * at(x - 1) + 6.0 * at(x) - 4.0 * at(x + 1) + at(x + 2))
                - 0.1 * (at(x + 1) - at(x - 1))
        })
        .collect();
    let mut u = u0.clone();
    edges1d::reference::run(&mut u, [n], edges1d::Params { c, inflow }, 1).unwrap();
    close(&u, &want);
}

#[test]
fn a_value_side_decides_a_read_that_also_wraps() {
    // edges2d: y reflects at 0 and reads `top` past ny - 1, for the input
    // grid too; x is periodic. A read past y's high edge is `top` wherever
    // x wraps it.
    let (ny, nx) = (5, 6);
    let (u0, decay): (Vec<f64>, Vec<f64>) = (random_grid(ny * nx, 12), random_grid(ny * nx, 13));
    let (a, top) = (0.1, -2.0);
    let at = |g: &[f64], y: isize, x: isize| {
        let x = x.rem_euclid(nx as isize) as usize;
        match y {
            y if y < 0 => g[(-y) as usize * nx + x],
            y if y >= ny as isize => top,
            y => g[y as usize * nx + x],
        }
    };
    let mut want = vec![0.0; ny * nx];
    for y in 0..ny as isize {
        for x in 0..nx as isize {
            let u = |dy, dx| at(&u0, y + dy, x + dx);
            want[y as usize * nx + x as usize] = u(0, 0)
                + a * (u(-1, 0) + u(1, 0) + u(0, -2) + u(0, 1) - 4.0 * u(0, 0))
                + 0.05 * (u(1, 1) - u(-2, -1))
                - 0.1 * at(&decay, y, x) * at(&decay, y + 1, x) * u(0, 0);
        }
    }
    let mut u = u0.clone();
    edges2d::reference::run(&mut u, &decay, [ny, nx], edges2d::Params { a, top }, 1).unwrap();
    close(&u, &want);
}

#[test]
fn updates_of_regions_partition_their_field() {
    // sponge2d: the plain update in the box y in [3, ny-3), x in [2, nx-4),
    // the damped one in the rest of the interior; the fixed frame of width
    // 1 keeps its values.
    let (ny, nx) = (9, 11);
    let u0: Vec<f64> = random_grid(ny * nx, 14);
    let (a, damp) = (0.1, 0.4);
    let mut want = u0.clone();
    for y in 1..ny - 1 {
        for x in 1..nx - 1 {
            let c = y * nx + x;
            let plain = u0[c] + a * lap(&u0, nx, c);
            let inside = (3..ny - 3).contains(&y) && (2..nx - 4).contains(&x);
            want[c] = if inside {
                plain
            } else {
                (1.0 - 0.5 * damp) * plain
            };
        }
    }
    let mut u = u0.clone();
    sponge::reference::run(&mut u, [ny, nx], sponge::Params { a, damp }, 1).unwrap();
    close(&u, &want);
    // zones1d (periodic): each zone's update reads across the zones' edges
    // and the grid's.
    let n = 13;
    let z0: Vec<f32> = random_grid(n, 15);
    let c = 0.2f32;
    let at = |x: isize| z0[x.rem_euclid(n as isize) as usize];
    let want: Vec<f64> = (0..n as isize)
        .map(|x| {
            f64::from(match x {
                x if x < 5 => at(x) + c * (at(x - 2) - 2.0 * at(x) + at(x + 2)),
                x if x < n as isize - 4 => at(x) + c * (at(x - 1) - 2.0 * at(x) + at(x + 1)),
                x => 0.9 * at(x) + c * (at(x - 2) - at(x + 1)),
            })
        })
        .collect();
    let mut z = z0.clone();
    zones::reference::run(&mut z, [n], zones::Params { c }, 1).unwrap();
    for (x, (got, want)) in z.iter().zip(&want).enumerate() {
        assert!(
            (f64::from(*got) - want).abs() <= 1e-5,
            "cell {x}: {got} vs {want}"
        );
    }
}
