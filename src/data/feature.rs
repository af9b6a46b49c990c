use crate::error::MorfError;

/// An element type X may hold. Values are compared in `f32`, as scikit-learn's trees
/// do, so a forest gives the same answers for float32 and float64 copies of one X.
pub trait Feature: Copy + Clone + Send + Sync + 'static {
    /// The value as the engine compares it.
    fn to_f32(self) -> f32;
    /// The value as given, for messages.
    fn to_f64(self) -> f64;
    /// Whether the value is neither NaN nor infinite.
    fn is_finite_value(self) -> bool;
    /// Whether the value is missing (NaN).
    fn is_missing(self) -> bool;
    /// `values` as bytes when `Self` is `u8`: training reads byte-valued X through
    /// bytes, and X that is bytes already needs no copy.
    fn as_bytes(values: &[Self]) -> Option<&[u8]> {
        let _ = values;
        None
    }
    /// The largest value of a type that holds only whole numbers from 0 (`u8`), whose
    /// projections on whole weights can be summed in integers; `None` for floats.
    const MAX_WHOLE: Option<u32> = None;
    /// The value as an integer; meaningful only where [`Self::MAX_WHOLE`] is given.
    #[inline(always)]
    fn to_i32(self) -> i32 {
        self.to_f32() as i32
    }
}

impl Feature for f32 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn is_finite_value(self) -> bool {
        self.is_finite()
    }
    fn is_missing(self) -> bool {
        self.is_nan()
    }
}

impl Feature for f64 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn is_finite_value(self) -> bool {
        // A finite f64 beyond f32's range would become infinite in the engine.
        self.is_finite() && (self as f32).is_finite()
    }
    fn is_missing(self) -> bool {
        self.is_nan()
    }
}

/// Bytes (pixel intensities, counts, binary data). Training also stores a float X
/// whose values are all whole numbers in `0..=255` this way (`Rows::to_bytes`): the
/// projections are the same exact whole numbers, read from a quarter of the memory.
impl Feature for u8 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn is_finite_value(self) -> bool {
        true
    }
    fn is_missing(self) -> bool {
        false
    }
    fn as_bytes(values: &[u8]) -> Option<&[u8]> {
        Some(values)
    }
    const MAX_WHOLE: Option<u32> = Some(u8::MAX as u32);
    #[inline(always)]
    fn to_i32(self) -> i32 {
        self as i32
    }
}

/// The error for `value`, neither finite ([`Feature::is_finite_value`]) nor missing, at flat index
/// `flat` of a row-major X.
pub(crate) fn non_finite_error<T: Feature>(flat: usize, n_features: usize, value: T) -> MorfError {
    let (row, column) = (flat / n_features, flat % n_features);
    let value = value.to_f64();
    if value.is_finite() {
        MorfError::TooLargeForFloat32 { row, column, value }
    } else {
        MorfError::NonFiniteInput { row, column }
    }
}
