//! One module per subcommand: its flags and what it does with them.

pub(crate) mod align;
pub(crate) mod bench;
pub(crate) mod compare;
pub(crate) mod diff;
pub(crate) mod faithfulness;
pub(crate) mod kernel;
pub(crate) mod packetdrill;
pub(crate) mod reproduce;
pub(crate) mod run;
pub(crate) mod sweep;
