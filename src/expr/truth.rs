//! Three-valued truth with Kleene's strong logic.

use std::fmt;

/// The value of a condition: TRUE, FALSE, or UNKNOWN when it depends on something missing
/// or incomparable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Truth {
    True,
    False,
    Unknown,
}

impl Truth {
    pub fn from_bool(b: bool) -> Truth {
        if b { Truth::True } else { Truth::False }
    }

    /// Negation: `!U = U`.
    #[allow(clippy::should_implement_trait)] // `std::ops::Not` is implemented too.
    pub fn not(self) -> Truth {
        match self {
            Truth::True => Truth::False,
            Truth::False => Truth::True,
            Truth::Unknown => Truth::Unknown,
        }
    }

    /// Conjunction: FALSE if either side is FALSE, TRUE if both are TRUE, else UNKNOWN.
    pub fn and(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::False, _) | (_, Truth::False) => Truth::False,
            (Truth::True, Truth::True) => Truth::True,
            _ => Truth::Unknown,
        }
    }

    /// Disjunction: TRUE if either side is TRUE, FALSE if both are FALSE, else UNKNOWN.
    pub fn or(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::True, _) | (_, Truth::True) => Truth::True,
            (Truth::False, Truth::False) => Truth::False,
            _ => Truth::Unknown,
        }
    }

    pub fn is_true(self) -> bool {
        self == Truth::True
    }

    pub fn is_false(self) -> bool {
        self == Truth::False
    }

    pub fn is_unknown(self) -> bool {
        self == Truth::Unknown
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Truth::True => "TRUE",
            Truth::False => "FALSE",
            Truth::Unknown => "UNKNOWN",
        }
    }
}

impl std::ops::Not for Truth {
    type Output = Truth;

    fn not(self) -> Truth {
        Truth::not(self)
    }
}

impl From<bool> for Truth {
    fn from(b: bool) -> Truth {
        Truth::from_bool(b)
    }
}

impl fmt::Display for Truth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
