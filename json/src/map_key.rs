//! Map keys: a string as it is, a number or a bool quoted, a finite float quoted, anything else
//! refused — as `serde_json` writes them.
//!
//! Not here: map values (`super`).

use std::fmt::Display;

use serde::Serialize;
use serde::ser;
use serde_json::Error;

use super::string::write_str;
use super::write_scalar;

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

/// A map key: a string as it is, a number or a bool quoted (as `serde_json` does).
pub(super) struct MapKey<'a> {
    pub(super) out: &'a mut Vec<u8>,
}

macro_rules! quoted_keys {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        fn $method(self, value: $ty) -> Result<(), Error> {
            self.out.push(b'"');
            write_scalar(self.out, value)?;
            self.out.push(b'"');
            Ok(())
        }
    )*};
}

macro_rules! refused_keys {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        fn $method(self, _value: $ty) -> Result<(), Error> {
            Err(key_must_be_a_string())
        }
    )*};
}

type Refused = ser::Impossible<(), Error>;

impl MapKey<'_> {
    /// A finite float key, quoted; `serde_json` refuses the others.
    fn float<T: Serialize>(self, finite: bool, value: T) -> Result<(), Error> {
        if !finite {
            return Err(ser::Error::custom("float key must be finite"));
        }
        self.out.push(b'"');
        write_scalar(self.out, value)?;
        self.out.push(b'"');
        Ok(())
    }
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Refused;
    type SerializeTuple = Refused;
    type SerializeTupleStruct = Refused;
    type SerializeTupleVariant = Refused;
    type SerializeMap = Refused;
    type SerializeStruct = Refused;
    type SerializeStructVariant = Refused;

    quoted_keys! {
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128,
    }

    refused_keys! { serialize_bytes: &[u8] }

    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        self.float(value.is_finite(), value)
    }

    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        self.float(value.is_finite(), value)
    }

    fn serialize_char(self, value: char) -> Result<(), Error> {
        write_str(self.out, value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, value: &str) -> Result<(), Error> {
        write_str(self.out, value);
        Ok(())
    }

    fn serialize_none(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Refused, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Refused, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Refused, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Refused, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Refused, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Refused, Error> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Refused, Error> {
        Err(key_must_be_a_string())
    }

    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        self.serialize_str(&value.to_string())
    }
}
