//! The kernels a statement's plan is written as: its twins (32-bit and
//! 64-bit indices; with and without vectors, for grids whose rows are not
//! whole vectors), and the generators of the file's other single-step
//! kernels.

use super::Gen;
use super::header::join_x;
use crate::backend::gpu::plan::Plan;
use crate::ir::Strategy;

impl Gen<'_> {
    /// The kernels of this statement, in the launcher's order of preference:
    /// 32-bit before 64-bit indices, vectors before scalars.
    pub(super) fn twins(&self) -> Vec<Gen<'_>> {
        if self.splits_steps() {
            // The grids this kernel does not suit run one step a launch: no
            // scalar twin, and no 64-bit one.
            return vec![Gen {
                wide: false,
                ..self.clone()
            }];
        }
        if let Some(scalar) = self.scalar {
            let twin = |wide| Gen {
                plan: scalar,
                vector: 1,
                wide,
                ..self.clone()
            };
            let vectors = Gen {
                wide: false,
                ..self.clone()
            };
            return vec![vectors, twin(false), twin(true)];
        }
        let widths: &[bool] = if self.narrow() {
            &[false, true]
        } else {
            &[true]
        };
        let mut vectors = vec![self.plan.vector];
        if self.pairs() {
            vectors.push(self.plan.vector / 2);
        }
        if self.vector_loads() && !self.vectors_only {
            vectors.push(1);
        }
        let mut out = Vec::new();
        for &wide in widths {
            for &vector in &vectors {
                let fallback = vector == 1 && self.plan.vector > 1;
                let plan = match self.stream_defaults() {
                    Some(defaults) if fallback => defaults,
                    _ => self.plan,
                };
                out.push(Gen {
                    plan,
                    vector,
                    wide,
                    fallback,
                    ..self.clone()
                });
            }
        }
        out
    }

    /// Whether this kernel of 16-byte vectors of f32 has a twin of 8-byte
    /// pairs, for the grids whose rows are whole pairs but not whole
    /// vectors: [`planes_stream`](crate::backend::gpu::plan::model::planes_stream)'s (acoustic25's rows of 750 cells ran
    /// 1.17x its scalar twin's speed in pairs on the H200).
    pub(super) fn pairs(&self) -> bool {
        self.plan.vector_planes() && self.plan.vector == 4
    }

    /// Whether this kernel marches the chunk of planes its launcher chose
    /// (an argument, [`Self::wave_chunk`]), at most its plan's: a scalar
    /// twin of [`scalar_stream`](crate::backend::gpu::plan::companions::scalar_stream), whose chunks of 64 planes would leave
    /// multiprocessors idle on smaller grids.
    pub(super) fn shortens_chunk(&self) -> bool {
        self.fallback && self.stream_defaults().is_some()
    }

    /// The plan of the scalar twins of this kernel where it is a 3-D
    /// `stream` kernel of vectors ([`scalar_stream`](crate::backend::gpu::plan::companions::scalar_stream)); the other
    /// kernels of vectors (`naive`'s rows) keep their own plan.
    fn stream_defaults(&self) -> Option<&Plan> {
        self.defaults
            .filter(|_| self.plan.strategy == Strategy::Stream)
    }

    /// The cells of the slowest axis a block of a kernel that is not
    /// [`Self::chunked`] marches, as a C expression: the argument `chunk`
    /// where [`Self::shortens_chunk`], else the plan's.
    pub(super) fn chunk_length(&self) -> String {
        if self.shortens_chunk() {
            "chunk".to_string()
        } else {
            self.plan.chunk.to_string()
        }
    }

    /// The generator of the file's other single-step kernel: the one that
    /// launches of one step run where this kernel fuses steps
    /// ([`step_plan`](crate::backend::gpu::plan::companions::step_plan)), its kernels named after `<sym>_step`, or the one
    /// `auto`'s `tensor` runs on small planes ([`small_plan`](crate::backend::gpu::plan::companions::small_plan)), named after
    /// `<sym>_small`. A fused leapfrog's one step writes the
    /// buffer of `out_prev`, which the session then reads as the current
    /// level (its levels turn by one after such a launch, by two after a
    /// fused one: `Levels::advance_one` in the generated Rust).
    pub(super) fn single_step(&self) -> Option<Self> {
        let suffix = if self.plan.small_grids() {
            "small"
        } else {
            "step"
        };
        self.step.map(|plan| Gen {
            vectors_only: self.plan.vector_planes(),
            step: self.step_small,
            ..self.one_step_kernel(plan, suffix)
        })
    }

    /// The generator of `auto`'s single steps on small grids
    /// ([`naive_plan`](crate::backend::gpu::plan::companions::naive_plan)), its kernels named after `<sym>_naive`: it writes
    /// what the launcher's other single steps write ([`Self::single_step`]).
    pub(super) fn small_naive(&self) -> Option<Self> {
        self.naive.map(|plan| self.one_step_kernel(plan, "naive"))
    }

    /// What a twin kernel is for, for its comment.
    pub(super) fn twin_purpose(&self) -> String {
        let mut what = Vec::new();
        if self.fallback || self.scalar.is_some() {
            let mut scalar =
                "without vectors, for grids whose rows are not whole vectors".to_string();
            if self.shortens_chunk() {
                scalar += &format!(
                    ": `stream`'s blocks of {} threads, chunks of at most {} planes",
                    join_x(&self.plan.block),
                    self.plan.chunk
                );
            }
            what.push(scalar);
        } else if self.vector < self.plan.vector {
            what.push(format!(
                "in {}-byte pairs, for grids whose rows are whole pairs but not whole vectors",
                self.vector * self.st.dtype.size()
            ));
        }
        if self.wide && self.narrow() {
            what.push(format!(
                "with 64-bit indices, for grids of {}",
                self.narrow_cells().1
            ));
        }
        what.join(", and ")
    }
}
