//! # skillet-json
//!
//! A `serde` serializer writing compact JSON into a `Vec<u8>`: byte for byte what
//! `serde_json::to_vec` writes, with strings escaped eight bytes at a time.
//!
//! Why: request bodies are mostly text — the system prompt, the conversation re-sent every
//! turn, tool results — and `serde_json` escapes a string one byte at a time through a lookup
//! table, which made escaping the largest single cost of building a body. Here a string is
//! checked a 64-bit word at a time for what JSON must escape (a control character, `"`, `\`)
//! and copied in runs. Numbers are still formatted by `serde_json`, and a
//! `serde_json::value::RawValue` (such as a shared schema's text) is copied as it is, as
//! `serde_json` does.
//!
//! The tests (`skillet-providers`' `json_writer_tests`) compare both serializers on every body
//! the wires build and on `Value`s with every kind of character, number and nesting.
//!
//! Not here: what a body contains (the providers' wire modules). A leaf crate: it depends on
//! nothing of ours.

#![warn(missing_docs)]

use std::fmt::Display;

use serde::ser::{self, Serialize};
use serde_json::Error;

mod map_key;
mod string;

use map_key::MapKey;
pub use string::write_str;

/// `value` as compact JSON.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(1024);
    to_writer(&mut out, value)?;
    Ok(out)
}

/// Appends `value` as compact JSON to `out` (on error, `out` may hold part of it).
pub fn to_writer<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    value.serialize(Writer { out })
}

/// How `serde_json::value::RawValue` names itself to a serializer (a struct with one field of
/// this name holding the JSON text); `serde_json` recognises it the same way.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A number (or anything else scalar) as `serde_json` formats it.
#[inline]
fn write_scalar<T: Serialize>(out: &mut Vec<u8>, value: T) -> Result<(), Error> {
    serde_json::to_writer(out, &value)
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

/// A sequence, map or struct being written: whether a separator is due, and what closes it.
struct Compound<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    /// `]` or `}`, and one more `}` for a variant (`{"Variant":[..]}`).
    close: &'static [u8],
    /// The struct is a `RawValue`: its one field is JSON text, copied as it is.
    raw: bool,
}

impl Compound<'_> {
    #[inline]
    fn separate(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
    }

    #[inline]
    fn key(&mut self, key: &str) {
        self.separate();
        write_str(self.out, key);
        self.out.push(b':');
    }

    #[inline]
    fn end(self) {
        self.out.extend_from_slice(self.close);
    }
}

macro_rules! scalars {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        #[inline]
        fn $method(self, value: $ty) -> Result<(), Error> {
            write_scalar(self.out, value)
        }
    )*};
}

impl<'a> ser::Serializer for Writer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    scalars! {
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_f32: f32,
        serialize_f64: f64,
    }

    #[inline]
    fn serialize_char(self, value: char) -> Result<(), Error> {
        write_str(self.out, value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    #[inline]
    fn serialize_str(self, value: &str) -> Result<(), Error> {
        write_str(self.out, value);
        Ok(())
    }

    #[inline]
    fn serialize_bytes(self, value: &[u8]) -> Result<(), Error> {
        write_scalar(self.out, value)
    }

    #[inline]
    fn serialize_none(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    #[inline]
    fn serialize_unit(self) -> Result<(), Error> {
        self.serialize_none()
    }

    #[inline]
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_none()
    }

    #[inline]
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
        value.serialize(Writer {
            out: &mut *self.out,
        })?;
        self.out.push(b'}');
        Ok(())
    }

    #[inline]
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        self.out.push(b'[');
        Ok(Compound {
            out: self.out,
            first: true,
            close: b"]",
            raw: false,
        })
    }

    #[inline]
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    #[inline]
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    #[inline]
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.extend_from_slice(b":[");
        Ok(Compound {
            out: self.out,
            first: true,
            close: b"]}",
            raw: false,
        })
    }

    #[inline]
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        self.out.push(b'{');
        Ok(Compound {
            out: self.out,
            first: true,
            close: b"}",
            raw: false,
        })
    }

    #[inline]
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Compound<'a>, Error> {
        if name == RAW_VALUE_TOKEN {
            return Ok(Compound {
                out: self.out,
                first: true,
                close: b"",
                raw: true,
            });
        }
        self.serialize_map(None)
    }

    #[inline]
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.extend_from_slice(b":{");
        Ok(Compound {
            out: self.out,
            first: true,
            close: b"}}",
            raw: false,
        })
    }

    #[inline]
    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        self.serialize_str(&value.to_string())
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.separate();
        value.serialize(Writer {
            out: &mut *self.out,
        })
    }

    #[inline]
    fn end(self) -> Result<(), Error> {
        Compound::end(self);
        Ok(())
    }
}

macro_rules! like_seq {
    ($($trait:ident :: $method:ident),* $(,)?) => {$(
        impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Error;

            #[inline]
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                ser::SerializeSeq::serialize_element(self, value)
            }

            #[inline]
            fn end(self) -> Result<(), Error> {
                Compound::end(self);
                Ok(())
            }
        }
    )*};
}

like_seq! {
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.separate();
        key.serialize(MapKey {
            out: &mut *self.out,
        })?;
        self.out.push(b':');
        Ok(())
    }

    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(Writer {
            out: &mut *self.out,
        })
    }

    #[inline]
    fn end(self) -> Result<(), Error> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        if self.raw {
            // The field is the JSON text, handed over as a string: taken through
            // `serde_json`'s value serializer (one copy) and written as it is.
            return match value.serialize(serde_json::value::Serializer)? {
                serde_json::Value::String(json) => {
                    self.out.extend_from_slice(json.as_bytes());
                    Ok(())
                }
                _ => Err(ser::Error::custom("a raw JSON value without its text")),
            };
        }
        self.key(key);
        value.serialize(Writer {
            out: &mut *self.out,
        })
    }

    #[inline]
    fn end(self) -> Result<(), Error> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }

    #[inline]
    fn end(self) -> Result<(), Error> {
        Compound::end(self);
        Ok(())
    }
}
