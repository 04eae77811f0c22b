//! The claims seed (src/claims.rs, extracted verbatim from the seed file at
//! build time by build.sh) plus the few crate-internal entry points the
//! harness CLI needs.
#[allow(dead_code)]
pub mod claims;

/// Reads and parses a claim file with the seed's own reader.
pub fn read_claim(path: &std::path::Path) -> Result<claims::ClaimRecord, String> {
    claims::read_claim_file(path).map_err(|e| match e {
        claims::ReadError::GoneAway => "gone".to_string(),
        claims::ReadError::Corrupted(m) => format!("corrupted: {m}"),
    })
}
