//! The names generated code gives what a spec declares, shared by every
//! generator (the kernels' buffers and entry points, the Rust API's
//! parameters).

use crate::ir::{Slot, Statement, Stencil, Version};

/// The name a kernel gives the buffer of a slot.
pub fn slot_name(st: &Stencil, slot: Slot) -> String {
    let prefix = match slot.version {
        Version::Prev => "prev",
        Version::Start => "cur",
        Version::Updated => "new",
    };
    format!("{prefix}_{}", st.fields[slot.field].name)
}

/// An offset as a part of a generated name: `m2`, `0`, `p1` (the row
/// pointers and loads of the kernels that name what they read by offset).
pub fn offset_part(d: i64) -> String {
    match d {
        0 => "0".to_string(),
        d if d < 0 => format!("m{}", -d),
        d => format!("p{d}"),
    }
}

/// The kernel entry point name of a statement.
pub fn statement_name(st: &Stencil, s: &Statement) -> String {
    st.statement_name(s)
}
