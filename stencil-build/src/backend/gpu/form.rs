//! The stencil the GPU kernels compute: its temporaries computed inline
//! ([`crate::backend::inline`]) unless `naive`'s one kernel a step already
//! keeps them in registers.

use std::borrow::Cow;

use super::step;
use crate::backend::inline::inlined_form;
use crate::ir::Stencil;

/// `st` with its temporaries computed inline where that is worth it, else
/// `st` as it is.
pub fn gpu_form(st: &Stencil) -> Cow<'_, Stencil> {
    match inlined_form(st) {
        // One statement: every strategy, fused steps included.
        Some(form) if form.statements.len() == 1 => Cow::Owned(form),
        // `naive` computes the whole step in one kernel, each temporary at
        // the thread's cell in a register, in a frame of its own.
        _ if step::fits(st) => Cow::Borrowed(st),
        Some(form) => Cow::Owned(form),
        None => Cow::Borrowed(st),
    }
}

#[cfg(test)]
mod tests {
    use super::gpu_form;
    use crate::backend::gpu::tests::lowered;

    #[test]
    fn a_step_that_fits_one_kernel_keeps_its_temporaries() {
        // Two state fields: the step fits one kernel, which computes the
        // temporaries at the thread's cell; the inlined form is for steps
        // that do not, or that it makes one statement.
        let st = lowered(
            "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n\
             [fields]\nu = { role = \"state\" }\nw = { role = \"state\" }\nt = { role = \"temp\" }\n\
             [[update]]\ntarget = \"t\"\nexpr = \"u[0,1] - 2*u[0,0] + u[0,-1]\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[0,0] + 0.1*t[0,0] + 0.1*w[0,0]\"\n\
             [[update]]\ntarget = \"w\"\nexpr = \"0.5*w[0,0] + 0.1*t[1,0] + 0.1*u[0,0]\"\n"
                .to_string(),
        );
        assert_eq!(*gpu_form(&st), st);
        // One update that reads the temporary: inline, one statement.
        let one = lowered(
            "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n\
             [fields]\nu = { role = \"state\" }\nt = { role = \"temp\" }\n\
             [[update]]\ntarget = \"t\"\nexpr = \"u[0,1] - 2*u[0,0] + u[0,-1]\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[0,0] + 0.1*t[0,0] + 0.1*t[1,0]\"\n"
                .to_string(),
        );
        assert_eq!(gpu_form(&one).statements.len(), 1);
    }
}
