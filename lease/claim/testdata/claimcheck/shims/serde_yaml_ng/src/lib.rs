//! Shim for the two functions the claims seed calls, over serde_yaml 0.8
//! (Debian packages no serde_yaml_ng). What it changes: the emitter is
//! serde_yaml 0.8's, not serde_yaml_ng's, so the bytes differ (0.8 starts
//! every document with "---\n", which this shim strips; quoting and
//! number/string resolution rules follow yaml-rust); the VALUES of what it
//! writes and reads are what the interop tests compare.
pub use serde_yaml::Error;

pub fn to_string<T: ?Sized + serde::Serialize>(value: &T) -> Result<String, Error> {
    let s = serde_yaml::to_string(value)?;
    Ok(match s.strip_prefix("---\n") {
        Some(rest) => rest.to_string(),
        None => s,
    })
}

// serde_yaml 0.8 only deserializes owned values (serde_yaml_ng borrows);
// the seed reads owned records, so this bound is the only API difference.
pub fn from_str<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, Error> {
    serde_yaml::from_str(s)
}
