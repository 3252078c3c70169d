//! Floating-point values in a query's JSON rows: a finite value as a JSON number, NaN and the
//! infinities as the strings `"NaN"`, `"Infinity"` and `"-Infinity"` — as Spark's JSON writer
//! (Jackson's quoted non-numeric numbers) writes them — where Arrow's writer would make them
//! `null`, the same as a NULL.

use std::sync::Arc;

use arrow::array::{Array, AsArray, PrimitiveArray};
use arrow::datatypes::{ArrowPrimitiveType, DataType, FieldRef, Float32Type, Float64Type};
use arrow::error::ArrowError;
use arrow::json::writer::NullableEncoder;
use arrow::json::{Encoder, EncoderFactory, EncoderOptions};

/// The encoder of `FLOAT` and `DOUBLE` columns, nested ones too.
#[derive(Debug)]
pub(super) struct Floats;

impl Floats {
    pub(super) fn factory() -> Arc<dyn EncoderFactory> {
        Arc::new(Floats)
    }
}

impl EncoderFactory for Floats {
    fn make_default_encoder<'a>(
        &self,
        _field: &'a FieldRef,
        array: &'a dyn Array,
        _options: &'a EncoderOptions,
    ) -> Result<Option<NullableEncoder<'a>>, ArrowError> {
        fn encoder<T>(array: &PrimitiveArray<T>) -> NullableEncoder<'_>
        where
            T: ArrowPrimitiveType,
            T::Native: Into<f64> + serde::Serialize,
        {
            NullableEncoder::new(Box::new(FloatEncoder(array)), array.nulls().cloned())
        }
        Ok(match array.data_type() {
            DataType::Float64 => Some(encoder(array.as_primitive::<Float64Type>())),
            DataType::Float32 => Some(encoder(array.as_primitive::<Float32Type>())),
            _ => None,
        })
    }
}

struct FloatEncoder<'a, T: ArrowPrimitiveType>(&'a PrimitiveArray<T>);

impl<T> Encoder for FloatEncoder<'_, T>
where
    T: ArrowPrimitiveType,
    T::Native: Into<f64> + serde::Serialize,
{
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let native = self.0.value(idx);
        match native.into() {
            v if f64::is_nan(v) => out.extend_from_slice(b"\"NaN\""),
            f64::INFINITY => out.extend_from_slice(b"\"Infinity\""),
            f64::NEG_INFINITY => out.extend_from_slice(b"\"-Infinity\""),
            // A finite value is a JSON number, in its type's shortest digits (a FLOAT's 1.1 is
            // 1.1); writing into a Vec cannot fail.
            _ => serde_json::to_writer(out, &native).unwrap_or_default(),
        }
    }
}
