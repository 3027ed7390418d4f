//! Names of the model's era and rule enums ([`PrrRule`](crate::prr::PrrRule),
//! [`CubicVersion`](crate::cc::cubic::CubicVersion), ...), as scenarios,
//! `--set`, `tcplab knobs` and the kernel backend spell them.
//!
//! Each enum gets, from one list of `Variant => "name"` pairs
//! ([`named_enum!`]): `NAMES` (every name, in variant order, which is
//! documentation order), a `const fn as_str` and `FromStr`. The name lives
//! beside the variant, so a knob cannot map a name to a default by
//! accident: an unknown name is an [`UnknownName`] error that lists the
//! valid ones.

use std::fmt;

/// A name that no variant has: what was given, and every accepted name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// The name as given.
    pub found: String,
    /// Every valid name, in variant order (the enum's `NAMES`).
    pub valid: &'static [&'static str],
}

/// `unknown value "v3.13" (one of "v3.12", "current")`: the caller adds
/// which knob it was.
impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown value {:?} (one of ", self.found)?;
        for (i, n) in self.valid.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{n:?}")?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownName {}

/// `NAMES`, `as_str` and `FromStr` for a fieldless enum, from one list of
/// `Variant => "name"` pairs. `as_str` is an exhaustive `match`, so a new
/// variant without a name does not compile.
macro_rules! named_enum {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every name, in variant order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The name scenarios and `tcplab knobs` use.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::names::UnknownName;

            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                match s {
                    $($name => Ok($ty::$variant),)+
                    _ => Err($crate::names::UnknownName { found: s.to_string(), valid: Self::NAMES }),
                }
            }
        }
    };
}
pub(crate) use named_enum;

#[cfg(test)]
mod tests {
    use super::UnknownName;
    use crate::cc::bbr::BbrMode;
    use crate::cc::cubic::CubicVersion;
    use crate::cc::dctcp::DctcpVersion;
    use crate::cc::hystart::HystartVersion;
    use crate::cc::CcEra;
    use crate::config::{AckEra, AckedCount, CwndGrowthRule, CwndLimitedRule, TlpRule, TsClock};
    use crate::prr::PrrRule;
    use std::str::FromStr;

    /// Every variant's name parses back to it, `NAMES` lists exactly the
    /// variants' names in order, and no two variants share a name.
    fn round_trip<E>(all: &[E], names: &[&str], as_str: fn(E) -> &'static str)
    where
        E: FromStr<Err = UnknownName> + Copy + PartialEq + std::fmt::Debug,
    {
        let got: Vec<&str> = all.iter().map(|v| as_str(*v)).collect();
        assert_eq!(got, names);
        for v in all {
            assert_eq!(E::from_str(as_str(*v)), Ok(*v), "{v:?}");
        }
    }

    #[test]
    fn test_named_enums_round_trip_every_variant() {
        use CwndGrowthRule as G;
        round_trip(&[G::V3_11, G::Posted, G::V3_12, G::DataAcked], G::NAMES, G::as_str);
        round_trip(
            &[CwndLimitedRule::InFlight, CwndLimitedRule::Latched],
            CwndLimitedRule::NAMES,
            CwndLimitedRule::as_str,
        );
        round_trip(&[AckEra::V3_12, AckEra::Current], AckEra::NAMES, AckEra::as_str);
        round_trip(
            &[AckedCount::PerAck, AckedCount::Cumulative, AckedCount::Delivered],
            AckedCount::NAMES,
            AckedCount::as_str,
        );
        round_trip(&[PrrRule::V3_12, PrrRule::V4_17, PrrRule::Current], PrrRule::NAMES, PrrRule::as_str);
        round_trip(&[TlpRule::V3_10, TlpRule::Current], TlpRule::NAMES, TlpRule::as_str);
        round_trip(&[TsClock::Jiffies, TsClock::Ms], TsClock::NAMES, TsClock::as_str);
        round_trip(
            &[CubicVersion::V3_18, CubicVersion::V3_19, CubicVersion::Current],
            CubicVersion::NAMES,
            CubicVersion::as_str,
        );
        round_trip(
            &[HystartVersion::V3_18, HystartVersion::V3_19, HystartVersion::Current],
            HystartVersion::NAMES,
            HystartVersion::as_str,
        );
        round_trip(&[DctcpVersion::V4_17, DctcpVersion::Current], DctcpVersion::NAMES, DctcpVersion::as_str);
        round_trip(&[CcEra::V3_18, CcEra::V3_19, CcEra::V4_17, CcEra::Current], CcEra::NAMES, CcEra::as_str);
        use BbrMode as M;
        round_trip(&[M::Startup, M::Drain, M::ProbeBw, M::ProbeRtt], M::NAMES, M::as_str);
    }

    #[test]
    fn test_named_enum_unknown_name_lists_the_valid_names() {
        let e = "v3.13".parse::<AckEra>().unwrap_err();
        assert_eq!(e, UnknownName { found: "v3.13".into(), valid: AckEra::NAMES });
        assert_eq!(e.to_string(), r#"unknown value "v3.13" (one of "v3.12", "current")"#);
        // Names are exact: no case folding, no trimming.
        assert!("Current".parse::<PrrRule>().is_err());
        assert!(" current".parse::<PrrRule>().is_err());
        assert!("".parse::<CubicVersion>().is_err());
    }
}
