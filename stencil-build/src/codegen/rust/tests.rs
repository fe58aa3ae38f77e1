//! Tests of the generated Rust: index spelling, and whole generated files.

mod index {
    use crate::codegen::index::{linear_index, offset_delta, offset_index};

    #[test]
    fn offsets_read_naturally() {
        assert_eq!(offset_index(&[0, 0, 0]), "c");
        assert_eq!(offset_index(&[-1, 0, 2]), "c - s0 + 2");
        assert_eq!(offset_index(&[-3, 0]), "c - 3 * s0");
        assert_eq!(offset_index(&[0, -3]), "c - 3");
        assert_eq!(offset_delta(&[0, 0, 0]), "0");
        assert_eq!(offset_delta(&[-1, 0, 2]), "-s0 + 2");
        assert_eq!(offset_delta(&[2, -1, -3]), "2 * s0 - s1 - 3");
        assert_eq!(linear_index(1), "i0");
        assert_eq!(linear_index(3), "i0 * s0 + i1 * s1 + i2");
    }
}

mod generation {
    use super::super::*;
    use crate::analysis::analyse;
    use crate::ir::lower;
    use crate::spec::{Source, parse};

    pub(crate) fn stencil(text: &str, periodic: bool) -> (Stencil, Analysis) {
        let text = if periodic {
            format!("{text}\n[boundary]\nkind = \"periodic\"\n")
        } else {
            text.to_string()
        };
        let src = Source {
            path: "all_features.stencil.toml".into(),
            text,
        };
        let spec = parse(&src).unwrap_or_else(|d| panic!("{d}"));
        let st = lower(&spec, &src).unwrap_or_else(|d| panic!("{d}"));
        let an = analyse(&st);
        (st, an)
    }

    /// The generated Rust of a radius-4 f32 star whose `[tiling.cuda]` is
    /// `tiling`, built for CUDA.
    fn star_on_cuda(tiling: &str) -> String {
        let star = "0.1*u[0,0,0] + 0.01*sum(r, 1, 4, u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r])";
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{star}\"\n[tiling.cuda]\n{tiling}"
        );
        let st = stencil(&text, false);
        let dialect = crate::backend::gpu::CUDA;
        let plan = crate::backend::gpu::resolve(&st.0.tiling.cuda, &st.0, &dialect).unwrap();
        let linked = Linked {
            cuda: Some(GpuLink {
                prefix: "pkg".into(),
                dialect,
                plans: vec![vec![Compiled::own(plan, "pkg")]],
            }),
            ..Linked::default()
        };
        generate(std::slice::from_ref(&st), &linked).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn sessions_ask_a_kernel_without_a_scalar_twin_before_fusing_steps() {
        let code = star_on_cuda("strategy = \"temporal\"\nvector = 4\n");
        for line in [
            "fn pkg_cuda__s__update_u_fuses(\n",
            "let fuses = unsafe {\n",
            "let most = if fuses { left.min(2u64) } else { 1 };",
            // Named in the spec: fused launches, not measured.
            "fusion: Fusion::Fused,",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
    }

    #[test]
    fn sessions_of_autos_fused_plans_measure_and_the_others_do_not() {
        let auto = star_on_cuda("strategy = \"auto\"\n");
        for line in [
            "fusion: Fusion::Measure,",
            "trial: dev::Trial,",
            "if self.fusion == Fusion::Measure && most >= 2u64",
            "&& left >= self.trial.steps(2u64)",
            "/// One launch of `fused` steps (the single-step kernel's for one), on `stream` (null:",
        ] {
            assert!(auto.contains(line), "{line}: {auto}");
        }
        let naive = star_on_cuda("strategy = \"naive\"\n");
        assert!(naive.contains("fusion: Fusion::Single,"));
        assert!(!naive.contains("trial: dev::Trial"), "{naive}");
    }

    #[test]
    fn the_whole_api_parses_and_is_formatted() {
        for periodic in [false, true] {
            let st = stencil(
                include_str!("../../testdata/all_features.stencil.toml"),
                periodic,
            );
            let link = |dialect: crate::backend::gpu::Dialect| GpuLink {
                prefix: "pkg_0_1_0".into(),
                dialect,
                plans: vec![vec![Compiled::own(
                    crate::backend::gpu::resolve(&st.0.tiling.cuda, &st.0, &dialect).unwrap(),
                    "pkg_0_1_0",
                )]],
            };
            let (cuda, hip) = (
                link(crate::backend::gpu::CUDA),
                link(crate::backend::gpu::HIP),
            );
            for linked in [
                Linked::default(),
                Linked {
                    openmp: Some("pkg_0_1_0".into()),
                    ..Linked::default()
                },
                Linked {
                    cuda: Some(cuda.clone()),
                    ..Linked::default()
                },
                Linked {
                    openmp: Some("pkg_0_1_0".into()),
                    cuda: Some(cuda.clone()),
                    hip: Some(hip.clone()),
                    arrays: true,
                },
            ] {
                let code =
                    generate(std::slice::from_ref(&st), &linked).unwrap_or_else(|e| panic!("{e}"));
                assert!(code.starts_with("// @generated by stencil-build"));
                assert!(code.contains("pub mod all_features {"), "{code}");
                assert!(code.contains("fn update_lap("), "{code}");
                assert_eq!(code.contains("pub mod openmp {"), linked.openmp.is_some());
                assert_eq!(code.contains("pub mod cuda {"), linked.cuda.is_some());
                assert_eq!(code.contains("pub mod hip {"), linked.hip.is_some());
                assert_eq!(code.contains("pub fn run_arrays("), linked.arrays);
                assert_eq!(
                    code.contains("pub fn hip_device_count()"),
                    linked.hip.is_some()
                );
                let default = if linked.cuda.is_some() {
                    "cuda"
                } else if linked.openmp.is_some() {
                    "openmp"
                } else {
                    "reference"
                };
                assert!(
                    code.contains(&format!("pub const BACKEND: &str = \"{default}\";")),
                    "{code}"
                );
                assert_eq!(
                    code.contains("copy_cur_to_first("),
                    linked.cuda.is_some() && !periodic,
                    "{code}"
                );
                assert_eq!(code.contains("rt::wrap("), periodic, "{code}");
                assert_eq!(code.contains("rt::copy_frame("), !periodic, "{code}");
                // Every module beside the stencil's is one no stencil may be named.
                let file: syn::File = syn::parse_str(&code).unwrap();
                for item in file.items {
                    if let syn::Item::Mod(m) = item {
                        let name = m.ident.to_string();
                        assert!(
                            name == "all_features" || RUNTIME_MODULES.contains(&name.as_str()),
                            "module `{name}` is not in RUNTIME_MODULES"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn user_text_becomes_prose_in_rustdoc_and_c_comments() {
        let doc = "A stencil.\n\n    let x = not_rust(;\n```\nmore code\n```\n```rust\nx\n```\nbidi \u{202E} here";
        let text = user_doc(doc);
        assert!(!text.lines().any(|l| l.starts_with("    ")), "{text}");
        assert_eq!(text.matches("```text").count(), 2, "{text}");
        let tokens = docs(&text).to_string();
        assert!(
            tokens.contains("\\\\u{202E}") && !tokens.contains('\u{202E}'),
            "{tokens}"
        );
        assert_eq!(
            crate::backend::comment_text("a*/b/*c\nd\u{2066}"),
            "a* /b/ *c d\\u{2066}"
        );
    }

    #[test]
    fn safety_markers_become_comments_however_the_formatter_breaks_them() {
        let text = "    stencil_safety!(\"one line\");\n    unsafe { f() };\n    stencil_safety!(\n        \"a \\\"long\\\" one\",\n    );\n    let x = unsafe { g() };\n";
        assert_eq!(
            safety_comments(text),
            "    // SAFETY: one line\n    unsafe { f() };\n    // SAFETY: a \"long\" one\n    let x = unsafe { g() };\n"
        );
    }
}
